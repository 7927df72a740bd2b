package state

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// Recorder holds a stack's state in memory during a run and writes it after
// every change, atomically. Writes are group-committed: changes made while a
// write is in progress go out together in the next one, so parallel steps do
// not queue behind each other's fsyncs. Each component's part of the document
// is encoded only when it changed, so a write costs the same for 10 or 10,000
// components.
type Recorder struct {
	path string

	mu       sync.Mutex
	cond     *sync.Cond
	st       *State
	header   []byte
	hdrDirty bool
	frags    map[string][]byte
	names    []string // the keys of frags, sorted
	buf      []byte   // the last document written
	dirty    map[string]bool
	version  uint64 // bumped by every change
	written  uint64 // the version the file holds
	err      error  // the last write error, sticky until a write succeeds
	closed   bool

	kick    chan struct{}
	urgent  chan struct{} // a Wait began: stop lingering
	waiters int
	done    chan struct{}
	// Now is the clock, replaceable in tests.
	Now func() time.Time
	// Linger is how long a change nobody waits for may wait for company
	// before it is written (DefaultLinger).
	Linger time.Duration
}

// DefaultLinger holds a write nobody waits for long enough that the changes
// of a component's end and of the next one's start go out in one write, and
// short enough that the file is never more than a moment behind.
const DefaultLinger = 2 * time.Millisecond

// NewRecorder starts recording st to the file at path.
func NewRecorder(path string, st *State) *Recorder {
	r := &Recorder{
		path:     path,
		st:       st,
		hdrDirty: true,
		frags:    map[string][]byte{},
		dirty:    map[string]bool{},
		kick:     make(chan struct{}, 1),
		urgent:   make(chan struct{}, 1),
		done:     make(chan struct{}),
		Now:      time.Now,
		Linger:   DefaultLinger,
	}
	for name := range st.Components {
		r.dirty[name] = true
	}
	r.cond = sync.NewCond(&r.mu)
	go r.writer()
	return r
}

// Path is the state file.
func (r *Recorder) Path() string { return r.path }

// View calls fn with the state; fn must not keep or change it.
func (r *Recorder) View(fn func(*State)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fn(r.st)
}

// Snapshot returns a copy of the state.
func (r *Recorder) Snapshot() *State {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st.Clone()
}

// UpdateStack changes the stack-level fields (not the components) and
// schedules a write. It returns the version to Wait for.
func (r *Recorder) UpdateStack(fn func(*State)) uint64 {
	r.mu.Lock()
	fn(r.st)
	r.hdrDirty = true
	v := r.bump()
	r.mu.Unlock()
	return v
}

// UpdateComponent changes one component, creating its record when missing,
// and schedules a write.
func (r *Recorder) UpdateComponent(name string, fn func(*Component)) uint64 {
	r.mu.Lock()
	fn(r.st.Component(name))
	r.dirty[name] = true
	v := r.bump()
	r.mu.Unlock()
	return v
}

// RemoveComponent drops a component's record.
func (r *Recorder) RemoveComponent(name string) uint64 {
	r.mu.Lock()
	delete(r.st.Components, name)
	if _, had := r.frags[name]; had {
		delete(r.frags, name)
		if i, found := slices.BinarySearch(r.names, name); found {
			r.names = slices.Delete(r.names, i, i+1)
		}
	}
	delete(r.dirty, name)
	v := r.bump()
	r.mu.Unlock()
	return v
}

func (r *Recorder) bump() uint64 {
	r.version++
	r.st.Updated = r.Now().UTC().Truncate(time.Second)
	r.hdrDirty = true
	select {
	case r.kick <- struct{}{}:
	default:
	}
	return r.version
}

// Wait blocks until the file holds version v (or a later one), and returns the
// write error if writing failed.
func (r *Recorder) Wait(v uint64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.written < v {
		r.waiters++
		select {
		case r.urgent <- struct{}{}:
		default:
		}
		for r.written < v && r.err == nil && !r.closed {
			r.cond.Wait()
		}
		r.waiters--
	}
	if r.written >= v {
		return nil
	}
	if r.err != nil {
		return r.err
	}
	return fmt.Errorf("state recorder closed before writing")
}

// Flush waits until every change so far is written.
func (r *Recorder) Flush() error {
	r.mu.Lock()
	v := r.version
	r.mu.Unlock()
	return r.Wait(v)
}

// Close writes what is left and stops the writer.
func (r *Recorder) Close() error {
	err := r.Flush()
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	close(r.kick)
	<-r.done
	return err
}

func (r *Recorder) writer() {
	defer close(r.done)
	for range r.kick {
		r.linger()
		for {
			r.mu.Lock()
			if r.written == r.version && r.err == nil {
				r.mu.Unlock()
				break
			}
			v := r.version
			data, err := r.encodeLocked()
			r.mu.Unlock()
			if err == nil {
				err = writeAtomic(r.path, data, 0o600)
			}
			r.mu.Lock()
			if err != nil {
				r.err = err
			} else {
				r.err = nil
				r.written = v
			}
			r.cond.Broadcast()
			stop := err != nil || r.written == r.version
			r.mu.Unlock()
			if stop {
				break
			}
		}
	}
}

// linger holds a write that nobody waits for a moment, so that changes
// close together go out in one write; a Wait ends it at once.
func (r *Recorder) linger() {
	select { // a token left by a Wait that found the writer busy
	case <-r.urgent:
	default:
	}
	r.mu.Lock()
	hurry := r.waiters > 0 || r.closed || r.Linger <= 0
	d := r.Linger
	r.mu.Unlock()
	if hurry {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.urgent:
	}
}

// encodeLocked renders the document from the cached parts, re-encoding only
// what changed. It produces the same bytes as Encode.
func (r *Recorder) encodeLocked() ([]byte, error) {
	if r.hdrDirty {
		h, err := encodeHeader(r.st)
		if err != nil {
			return nil, err
		}
		r.header, r.hdrDirty = h, false
	}
	for name := range r.dirty {
		c, ok := r.st.Components[name]
		if !ok {
			continue
		}
		b, err := encodeComponent(name, c)
		if err != nil {
			return nil, err
		}
		if _, had := r.frags[name]; !had {
			i, _ := slices.BinarySearch(r.names, name)
			r.names = slices.Insert(r.names, i, name)
		}
		r.frags[name] = b
	}
	clear(r.dirty)
	// The writer is the only user of the document until its next write:
	// one buffer serves every write instead of a new one the state's size.
	r.buf = assemble(r.buf, r.header, r.frags, r.names)
	return r.buf, nil
}
