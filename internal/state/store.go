package state

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"
)

// A Store is where one stack's state lives: a file with its journal
// (FileStore), or a database (DESIGN section 8). Every backend keeps the
// same document and takes the same changes (Batch); the Recorder writes
// through any of them.
type Store interface {
	// String names the store in messages: a path, or a URL whose password
	// is hidden.
	String() string
	// Read returns the state as it is now: its document and the changes
	// recorded since (Files.Decode reads them). No state gives empty Files.
	Read(ctx context.Context) (Files, error)
	// Lock takes the stack's lock for a run, at once or within
	// o.Timeout, or fails with a *LockedError naming the holder.
	Lock(ctx context.Context, h Holder, o LockOptions) (Lock, error)
	// Unlock clears a lock whose holder is gone; it never breaks a lock
	// whose holder is alive.
	Unlock(ctx context.Context) (UnlockResult, error)
	// Writer starts writing a run's changes. A backend that can be away
	// (a database) waits for it as long as ctx lives, and says so when
	// the run is interrupted meanwhile (WithInterrupt).
	Writer(ctx context.Context) (Writer, error)
	// Close releases what the store holds open (connections).
	Close() error
}

// ErrLockTaken is why a lock was lost when another run took it (or its
// record was removed, so that another run may take it): the run that lost
// it must stop, since its work would race with that run's. Lock.Why's
// errors are it (errors.Is) and say which.
var ErrLockTaken = errors.New("the state's lock was taken from this run")

// A Lock is a held lock.
type Lock interface {
	// Lost is closed when the lock is known to be lost (a database
	// session that ended); nil when it cannot be lost while the process
	// lives.
	Lost() <-chan struct{}
	// Why says why the lock was lost (ErrLockTaken when another run took
	// it); nil while it is held.
	Why() error
	// Release gives the lock up.
	Release() error
}

// LockOptions tune Store.Lock.
type LockOptions struct {
	// Timeout is how long to wait for a lock another run holds; 0 fails
	// at once.
	Timeout time.Duration
	// Waiting is called when the lock is found held and whenever its
	// holder changes while waiting; nil when nobody is told.
	Waiting func(holder *Holder)
}

// A Batch is what one durable write carries: the changes since the last
// write, or, when Full, the whole state.
type Batch struct {
	// Full says the batch replaces the whole state: Snapshot is the
	// document, Header its stack-level fields and Components every
	// component's record. A full batch starts a new journal generation:
	// one after a failed write never appends to the journal that failed.
	Full     bool
	Snapshot []byte
	// Header is the stack-level fields as the document writes them; nil
	// when they did not change.
	Header []byte
	// Components are the records that changed (all of them when Full),
	// each as the document writes it.
	Components []Fragment
	// Removed are the components whose records are gone.
	Removed []string
	// Base names the state as the store held it when the run began, on
	// the batches of a recorder started from it (RecordFrom) until one is
	// written: a writer that has written nothing yet continues that state
	// instead of one written whole. BaseSize is its length.
	Base     string
	BaseSize int
}

// A Fragment is one component's record as the document writes it.
type Fragment struct {
	Name string
	Data []byte
}

// A Writer makes a run's changes durable, in the order written. The
// Recorder calls it from one goroutine.
type Writer interface {
	// Write makes a batch durable before it returns.
	Write(ctx context.Context, b Batch) error
	// Compact says the next batch should be a full one (a journal grown
	// long).
	Compact() bool
	// Finish brings the state to rest once the run's last batch is
	// written: final gives the whole state, for a backend that compacts
	// its journal into it; dirty says the last write failed, so that the
	// state written may lack changes. It ends the Writer.
	Finish(ctx context.Context, final func() (Batch, error), dirty bool) error
}

// Opener opens a store of a backend from its location (a URL) for the stack
// named stack ("" when the command has no manifest: the backend finds the
// one stack it holds, or asks for its name).
type Opener func(ctx context.Context, location, stack string) (Store, error)

var (
	backendsMu sync.Mutex
	backends   = map[string]Opener{}
)

// RegisterBackend adds a backend for the URL schemes given. Backends with
// heavy dependencies register from their own packages, which the gantry
// command imports.
func RegisterBackend(open Opener, schemes ...string) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	for _, s := range schemes {
		backends[s] = open
	}
}

// IsURL tells a location that names a backend by its scheme from a file
// path.
func IsURL(location string) bool {
	scheme, _, ok := strings.Cut(location, "://")
	return ok && scheme != "" && !strings.ContainsAny(scheme, `/\`)
}

// IsDatabase tells the location of a database backend (postgres://...)
// from a file's: a path or file://PATH.
func IsDatabase(location string) bool {
	return IsURL(location) && !strings.HasPrefix(location, "file://")
}

// Open opens the store at a location: a file path, file://PATH, or the URL
// of a registered backend.
func Open(ctx context.Context, location, stack string) (Store, error) {
	if !IsURL(location) {
		return NewFileStore(location), nil
	}
	scheme, rest, _ := strings.Cut(location, "://")
	if scheme == "file" {
		return NewFileStore(rest), nil
	}
	backendsMu.Lock()
	open := backends[scheme]
	var known []string
	for s := range backends {
		known = append(known, s+"://")
	}
	backendsMu.Unlock()
	if open == nil && scheme == "s3" {
		return nil, errNoS3(location)
	}
	if open == nil {
		sort.Strings(known)
		return nil, fmt.Errorf("state %s: no state backend for %s://; expected a file path, file://PATH or %s", Redact(location), scheme, strings.Join(known, ", "))
	}
	return open(ctx, location, stack)
}

// Redact hides the password of a connection URL, for messages: of each
// URL of a Hub CLI state list.
func Redact(location string) string {
	if ls := SplitLocations(location); len(ls) > 1 {
		for i, l := range ls {
			ls[i] = Redact(l)
		}
		return strings.Join(ls, ",")
	}
	if !IsURL(location) {
		return location
	}
	u, err := url.Parse(location)
	if err != nil {
		// A URL too broken to parse may still hold a password.
		scheme, _, _ := strings.Cut(location, "://")
		return scheme + "://(a URL that does not parse)"
	}
	// A placeholder the URL's encoding leaves alone, then the stars.
	const hidden = "gantryHiddenPassword"
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), hidden)
		}
	}
	q := u.Query()
	if q.Has("password") || q.Has("sslpassword") {
		for _, k := range []string{"password", "sslpassword"} {
			if q.Has(k) {
				q.Set(k, hidden)
			}
		}
		u.RawQuery = q.Encode()
	}
	return strings.ReplaceAll(u.String(), hidden, "*****")
}

// WithoutStack is a backend's URL without the stack it names (?stack=).
func WithoutStack(location string) string {
	u, err := url.Parse(location)
	if err != nil || !u.Query().Has("stack") {
		return location
	}
	q := u.Query()
	q.Del("stack")
	u.RawQuery = q.Encode()
	return u.String()
}

// UnavailableError is a store that could not be reached — a database that
// is down, refuses connections, has an unknown host or no connection slot
// left — as a command began. Nothing is wrong with the input and nothing
// was changed: the same command may succeed later. Commands exit 1 for it,
// the exit of a failure, not 2 (invalid input), whichever command it is.
type UnavailableError struct{ Err error }

func (e *UnavailableError) Error() string { return e.Err.Error() }
func (e *UnavailableError) Unwrap() error { return e.Err }

// IsUnavailable reports whether err is, or wraps, an *UnavailableError.
func IsUnavailable(err error) bool {
	var ue *UnavailableError
	return errors.As(err, &ue)
}

// RefusedError is a store that refused this command's credentials or
// names — a wrong or missing password, no such role or database, no
// privilege: the URL or the credentials must change, as with any invalid
// input. Commands exit 2 for it, whichever command it is.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// IsRefused reports whether err is, or wraps, a *RefusedError.
func IsRefused(err error) bool {
	var re *RefusedError
	return errors.As(err, &re)
}

type interruptKey struct{}

// WithInterrupt returns ctx, the context of a run's Writer, telling it of
// the run's first interrupt: interrupted is closed then. A writer waiting
// for its backend goes on waiting, since the interrupted run must record
// what it did, but says what it waits for; ctx itself ends at a second
// interrupt, which stops the wait.
func WithInterrupt(ctx context.Context, interrupted <-chan struct{}) context.Context {
	return context.WithValue(ctx, interruptKey{}, interrupted)
}

// Interrupted is the channel WithInterrupt gave ctx: closed at the run's
// first interrupt; nil, never ready, without one.
func Interrupted(ctx context.Context) <-chan struct{} {
	c, _ := ctx.Value(interruptKey{}).(<-chan struct{})
	return c
}
