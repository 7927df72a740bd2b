package state

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Mirror is a state kept in several stores at once, as the Hub CLI's
// `-s hub.yaml.state,...` list does: read from the first, every change
// written to all of them, and all of them locked.
type Mirror []Store

func (m Mirror) String() string {
	names := make([]string, len(m))
	for i, s := range m {
		names[i] = s.String()
	}
	return strings.Join(names, ",")
}

// Secrets are the secrets of the stores' locations.
func (m Mirror) Secrets() []string {
	var out []string
	for _, s := range m {
		if x, ok := s.(interface{ Secrets() []string }); ok {
			out = append(out, x.Secrets()...)
		}
	}
	return out
}

// Read reads the first store.
func (m Mirror) Read(ctx context.Context) (Files, error) {
	f, err := m[0].Read(ctx)
	// Every store is written the same batches: none may start from what
	// only the first one holds.
	f.Continuable = false
	return f, err
}

// Lock locks every store, in order; a store found locked releases the
// others.
func (m Mirror) Lock(ctx context.Context, h Holder, o LockOptions) (Lock, error) {
	var held mirrorLock
	for _, s := range m {
		l, err := s.Lock(ctx, h, o)
		if err != nil {
			held.Release()
			return nil, err
		}
		held = append(held, l)
	}
	return held, nil
}

// Unlock clears the stale locks of every store; a live lock anywhere is
// reported after the others were tried.
func (m Mirror) Unlock(ctx context.Context) (UnlockResult, error) {
	var res UnlockResult
	var errs []error
	for _, s := range m {
		r, err := s.Unlock(ctx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if res.Stale == nil {
			res.Stale = r.Stale
		}
	}
	return res, errors.Join(errs...)
}

// Writer writes every batch to every store.
func (m Mirror) Writer(ctx context.Context) (Writer, error) {
	var w mirrorWriter
	for _, s := range m {
		sw, err := s.Writer(ctx)
		if err != nil {
			return nil, err
		}
		w = append(w, sw)
	}
	return w, nil
}

// Close closes every store.
func (m Mirror) Close() error {
	var errs []error
	for _, s := range m {
		errs = append(errs, s.Close())
	}
	return errors.Join(errs...)
}

type mirrorLock []Lock

// Lost is the first store's: the file backend's locks are never lost.
func (l mirrorLock) Lost() <-chan struct{} {
	for _, x := range l {
		if c := x.Lost(); c != nil {
			return c
		}
	}
	return nil
}

// Why is the first store's that lost its lock.
func (l mirrorLock) Why() error {
	for _, x := range l {
		if err := x.Why(); err != nil {
			return err
		}
	}
	return nil
}

func (l mirrorLock) Release() error {
	var errs []error
	for i := len(l) - 1; i >= 0; i-- {
		errs = append(errs, l[i].Release())
	}
	return errors.Join(errs...)
}

type mirrorWriter []Writer

func (w mirrorWriter) Write(ctx context.Context, b Batch) error {
	for _, x := range w {
		if err := x.Write(ctx, b); err != nil {
			return err
		}
	}
	return nil
}

func (w mirrorWriter) Compact() bool {
	for _, x := range w {
		if x.Compact() {
			return true
		}
	}
	return false
}

func (w mirrorWriter) Finish(ctx context.Context, final func() (Batch, error), dirty bool) error {
	var errs []error
	for _, x := range w {
		errs = append(errs, x.Finish(ctx, final, dirty))
	}
	return errors.Join(errs...)
}

// SplitLocations splits a Hub CLI state list (`hub.yaml.state,s3://...`)
// into its locations. A postgres:// URL's commas are its own (libpq lists
// hosts with commas, and a query value may hold one: options=-c
// search_path=a,b): after one, the list goes on only at a comma followed
// by another URL (postgres://, file://, s3://); a file after a database
// URL is written file://PATH, or listed first.
func SplitLocations(location string) []string {
	var out []string
	for location != "" {
		cut := strings.IndexByte(location, ',')
		if strings.HasPrefix(location, "postgres://") || strings.HasPrefix(location, "postgresql://") {
			cut = -1
			if at := nextURL.FindStringIndex(location); at != nil {
				cut = at[0]
			}
		}
		l := location
		if cut >= 0 {
			l, location = location[:cut], location[cut+1:]
		} else {
			location = ""
		}
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return []string{""}
	}
	return out
}

// nextURL finds the comma before the next URL of a list.
var nextURL = regexp.MustCompile(`,\s*[a-zA-Z][a-zA-Z0-9+.-]*://`)

// errNoS3 refuses the Hub CLI's s3:// state locations by name.
func errNoS3(location string) error {
	return fmt.Errorf("state %s: gantry does not keep states in S3; use a file path, file://PATH or postgres://... (docs/state.md)", Redact(location))
}
