package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Recorder holds a stack's state in memory during a run and makes every
// change durable: it appends the change to the state's journal (journal.go)
// and syncs it. Writes are group-committed: changes made while a write is in
// progress go out together in the next one, so parallel steps do not queue
// behind each other's syncs. A change costs the same for 10 or 10,000
// components: each component's part of the document is encoded only when it
// changed, and only that part is written. The snapshot is rewritten when the
// run's first change is written, when the journal has grown past the
// snapshot's size, after a failed write, and when the recorder closes, which
// then removes the journal.
type Recorder struct {
	path string
	// journal is the open journal, jsize its length, snapSize the length
	// of the snapshot it continues; appended says a change went into it;
	// fresh says the next write starts a new snapshot and journal (the
	// first write, and every write after one that failed: a journal that
	// failed to sync is never appended to again). The writer alone uses
	// them, and Close once the writer stopped.
	journal  *os.File
	jsize    int64
	snapSize int
	appended bool
	fresh    bool

	mu       sync.Mutex
	cond     *sync.Cond
	st       *State
	header   []byte
	hdrDirty bool
	frags    map[string][]byte
	names    []string // the keys of frags, sorted
	buf      []byte   // the last document written
	dirty    map[string]bool
	removed  map[string]bool // components whose records went since the last write
	version  uint64          // bumped by every change
	written  uint64          // the version the file holds
	failed   uint64          // the version the last failed write was to write
	err      error           // the last write error, sticky until a write succeeds
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
		removed:  map[string]bool{},
		fresh:    true,
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
	r.removed[name] = true
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
// error of the write that was to write it when that write failed.
func (r *Recorder) Wait(v uint64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.written < v {
		r.waiters++
		select {
		case r.urgent <- struct{}{}:
		default:
		}
		for r.written < v && r.failed < v && !r.closed {
			r.cond.Wait()
		}
		r.waiters--
	}
	if r.written >= v {
		return nil
	}
	if r.err != nil && r.failed >= v {
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

// Close writes what is left, stops the writer, and compacts the journal
// into the snapshot: a state at rest is its snapshot alone.
func (r *Recorder) Close() error {
	err := r.Flush()
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	close(r.kick)
	<-r.done
	if r.journal == nil && err == nil {
		return nil // nothing was ever written
	}
	if r.appended || err != nil || r.journal == nil {
		r.mu.Lock()
		data, eerr := r.encodeLocked(true)
		r.mu.Unlock()
		if eerr != nil {
			return eerr
		}
		if werr := writeAtomic(r.path, data, 0o600); werr != nil {
			return werr
		}
		err = nil // the snapshot holds every change
	}
	if r.journal == nil {
		return nil
	}
	r.journal.Close()
	if rerr := os.Remove(JournalPath(r.path)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		return fmt.Errorf("remove state journal: %w", rerr)
	}
	syncDir(filepath.Dir(JournalPath(r.path)))
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
			full := r.fresh || r.jsize > compactAt(r.snapSize)
			data, err := r.encodeLocked(full)
			r.mu.Unlock()
			if err == nil {
				if full {
					err = r.generation(data)
				} else {
					err = r.appendJournal(data)
				}
			}
			r.mu.Lock()
			if err != nil {
				r.err, r.failed = err, v
				// What was taken for this write is in no file: the next
				// write is a whole snapshot, on a journal of its own.
				r.fresh = true
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

// compactAt is the journal length past which the next write rewrites the
// snapshot: past the snapshot's own length, so that the rewrites cost no
// more than the appends did.
func compactAt(snapSize int) int64 {
	return max(1<<20, 2*int64(snapSize))
}

// generation writes a snapshot and starts the journal that continues it:
// the snapshot first, so that a crash in between leaves the new snapshot
// and an old journal, which does not continue it and is ignored.
func (r *Recorder) generation(snapshot []byte) error {
	if err := writeAtomic(r.path, snapshot, 0o600); err != nil {
		return err
	}
	jp := JournalPath(r.path)
	tmp := jp + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("start state journal: %w", err)
	}
	head := appendRecord(nil, recBase, []byte(snapshotDigest(snapshot)))
	_, err = f.Write(head)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = os.Rename(tmp, jp)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("start state journal %s: %w", jp, err)
	}
	syncDir(filepath.Dir(jp))
	if r.journal != nil {
		r.journal.Close()
	}
	r.journal, r.jsize, r.snapSize, r.appended, r.fresh = f, int64(len(head)), len(snapshot), false, false
	return nil
}

// appendJournal appends records to the journal and syncs them.
func (r *Recorder) appendJournal(records []byte) error {
	if len(records) == 0 {
		return nil
	}
	n, err := r.journal.Write(records)
	r.jsize += int64(n)
	if err == nil {
		err = r.journal.Sync()
	}
	if err != nil {
		return fmt.Errorf("write state journal %s: %w", JournalPath(r.path), err)
	}
	r.appended = true
	return nil
}

// syncDir makes a rename or removal in a folder durable; a folder that
// cannot be synced (some filesystems refuse) leaves it to the kernel.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
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

// encodeLocked encodes what changed since the last write, re-encoding only
// the parts that changed: with full, the whole document (the same bytes as
// Encode); otherwise the journal records of the changes.
func (r *Recorder) encodeLocked(full bool) ([]byte, error) {
	var recs []byte
	if r.hdrDirty {
		h, err := encodeHeader(r.st)
		if err != nil {
			return nil, err
		}
		r.header, r.hdrDirty = h, false
		if !full {
			recs = appendRecord(recs, recHeader, h)
		}
	}
	for name := range r.removed {
		if _, back := r.st.Components[name]; !back && !full {
			recs = appendRecord(recs, recRemove, []byte(name))
		}
	}
	clear(r.removed)
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
		if !full {
			recs = appendRecord(recs, recComponent, b)
		}
	}
	clear(r.dirty)
	if !full {
		return recs, nil
	}
	// The writer is the only user of the document until its next write:
	// one buffer serves every write instead of a new one the state's size.
	r.buf = assemble(r.buf, r.header, r.frags, r.names)
	return r.buf, nil
}
