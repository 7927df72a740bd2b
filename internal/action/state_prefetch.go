package action

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gantry-dev/gantry/internal/landscape"
	"github.com/gantry-dev/gantry/internal/state"
)

// statePrefetch is a state file read and decoded while the stack is
// elaborated: neither needs the other, and at 10,000 components each takes
// tens of milliseconds of one processor (elaborating is mostly one
// goroutine). Only the first read of the stack's state may use it, and only
// when the store it opens is the same file; anything else reads as before.
type statePrefetch struct {
	path  string
	done  chan struct{}
	files state.Files
	st    *state.State
	base  *state.Base // the recorder's, cut from files
	err   error
	given bool // files are Source.State, the state of any store
}

// prefetchState starts reading the state src names when it is one file
// (not a database, not the Hub CLI's list); nil otherwise.
func prefetchState(src Source) *statePrefetch {
	if src.State != nil {
		return givenState(*src.State)
	}
	location := src.StatePath
	if location == "" {
		location = DefaultStatePath(src.Manifest)
	}
	l := state.SplitLocations(location)
	if len(l) != 1 || state.IsDatabase(l[0]) {
		return nil
	}
	// A landscape's state lies next to its acre.yaml, which elaborating
	// finds: a folder, or acre.yaml given, is read as before.
	if fi, err := os.Stat(src.Manifest); err != nil || fi.IsDir() || filepath.Base(src.Manifest) == landscape.AcreFile {
		return nil
	}
	p := &statePrefetch{path: strings.TrimPrefix(l[0], "file://"), done: make(chan struct{})}
	if p.path == "" {
		return nil
	}
	go func() {
		defer close(p.done)
		defer func() {
			// The read that follows does it again, in the command's own
			// goroutine, where a panic is reported as one.
			if r := recover(); r != nil {
				p.err = fmt.Errorf("prefetching the state: %v", r)
			}
		}()
		store := state.NewFileStore(p.path)
		if p.files, p.err = store.Read(context.Background()); p.err == nil {
			p.st, p.err = p.files.Decode(store.String())
		}
		if p.err == nil && p.st != nil {
			// A run continues the snapshot from its base (executeStack):
			// cut here it costs the run nothing.
			p.base = p.files.Base(p.st)
		}
	}()
	return p
}

// givenState stands for a read of any store: the state the caller has
// (Source.State).
func givenState(files state.Files) *statePrefetch {
	p := &statePrefetch{given: true, files: files, done: make(chan struct{})}
	close(p.done)
	return p
}

// take waits for the prefetch and returns what it read for store (and the
// recorder's base cut from it, nil when it has none), or ok
// false when it read something else or failed (the caller then reads the
// store itself, and reports its errors as ever). A given state is decoded
// here; its error is err.
func (p *statePrefetch) take(store state.Store) (files state.Files, st *state.State, base *state.Base, ok bool, err error) {
	if p == nil {
		return state.Files{}, nil, nil, false, nil
	}
	if p.given {
		st, err := p.files.Decode(store.String())
		return p.files, st, nil, err == nil, err
	}
	fs, isFile := store.(*state.FileStore)
	if !isFile || fs.Path() != p.path {
		return state.Files{}, nil, nil, false, nil
	}
	<-p.done
	if p.err != nil {
		return state.Files{}, nil, nil, false, nil
	}
	return p.files, p.st, p.base, true, nil
}
