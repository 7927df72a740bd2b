package state

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/inputfile"
)

// Recorder holds a stack's state in memory during a run and makes every
// change durable through its store's Writer: the file backend appends it to
// the state's journal (journal.go) and syncs it. Writes are
// group-committed: changes made while a write is in progress go out
// together in the next one, so parallel steps do not queue behind each
// other's syncs. A change costs the same for 10 or 10,000 components: each
// component's part of the document is encoded only when it changed, and
// only that part is written. The whole state is written by the run's first
// write, when the writer asks to compact, after a failed write, and, by
// the file backend, when the recorder closes.
type Recorder struct {
	w Writer
	// fresh says the next write is a full one (the first write, and every
	// write after one that failed: a journal that failed to sync is never
	// appended to again); dirty says the last write failed. The writer
	// goroutine alone uses them, and Close once it stopped.
	fresh bool
	// shared says other recorders of the same run write through the same
	// store (RecordShared).
	shared bool

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
	written  uint64          // the version the store holds
	failed   uint64          // the version the last failed write was to write
	err      error           // the last write error, sticky until a write succeeds
	closed   bool
	// base is what the store held when recording began, until a write
	// succeeds (RecordFrom).
	base *Base
	// borrowed are the components whose records st shares with a state
	// others read (RecordOver): copied before they are first changed.
	borrowed map[string]bool
	// taken are the components whose changes the last batch encoded
	// carries; unwritten those whose changes a failed write carried and
	// no write has carried since (Unwritten).
	taken     []string
	unwritten map[string]bool

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

// NewRecorder starts recording st to the state file at path.
func NewRecorder(path string, st *State) *Recorder {
	w, _ := NewFileStore(path).Writer(context.Background())
	return Record(w, st)
}

// Record starts recording st through a store's writer; its first write
// writes the whole state.
func Record(w Writer, st *State) *Recorder { return RecordFrom(w, st, nil) }

// RecordOver starts recording over before, a state that others go on
// reading unchanged (a run's steps read the state as the run found it), as
// RecordFrom does: the recorder has a state of its own, but shares the
// component records with before until it changes them — a deep copy of a
// state of 10,000 components cost 13 ms a run, most of whose records it
// never changes.
func RecordOver(w Writer, before *State, base *Base) *Recorder {
	st := before.shareComponents()
	r := RecordFrom(w, st, base)
	r.mu.Lock()
	r.borrowed = make(map[string]bool, len(st.Components))
	for name := range st.Components {
		r.borrowed[name] = true
	}
	r.mu.Unlock()
	return r
}

// ownLocked gives the recorder a record of its own for a component whose
// record it borrowed, before it changes it.
func (r *Recorder) ownLocked(name string) {
	if r.borrowed[name] {
		if c := r.st.Components[name]; c != nil {
			r.st.Components[name] = c.Clone()
		}
		delete(r.borrowed, name)
	}
}

// RecordFrom starts recording st, which base holds as the store has it
// (Files.Base), through the store's writer: the first write carries only
// what changed since. A nil base is Record.
func RecordFrom(w Writer, st *State, base *Base) *Recorder {
	r := &Recorder{
		w:        w,
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
	if base != nil {
		r.base, r.fresh = base, false
		r.header, r.frags, r.names = base.header, base.frags, base.names
	} else {
		for name := range st.Components {
			r.dirty[name] = true
		}
	}
	r.cond = sync.NewCond(&r.mu)
	go r.writer()
	return r
}

// RecordShared starts recording st through a store that other recorders of
// the same run write to at the same time — the steps of a run on Temporal
// workers (docs/temporal.md), each component's on the worker that hosts it.
// It writes only the records of the components it changes, and the stack's
// fields only when UpdateStack changed them; never the whole state, which
// would write over the others' records. A failed write is tried again with
// the next. Absorb takes in what the others recorded.
func RecordShared(w Writer, st *State) *Recorder {
	r := RecordFrom(w, st, nil)
	r.mu.Lock()
	r.shared, r.fresh, r.hdrDirty = true, false, false
	clear(r.dirty)
	r.mu.Unlock()
	return r
}

// Absorb takes in the state as the store holds it now, for a shared
// recorder: the stack's fields unless this recorder changed them and has
// not written them yet, and the records of the components that mine does
// not claim (those this recorder's own steps record) and that it has not
// changed since its last write. st belongs to the recorder afterwards.
func (r *Recorder) Absorb(st *State, mine func(name string) bool) {
	if st == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	comps := r.st.Components
	if !r.hdrDirty {
		*r.st = *st
		r.st.Components = comps
	}
	if r.st.Components == nil {
		r.st.Components = map[string]*Component{}
	}
	for name, c := range st.Components {
		if !mine(name) && !r.dirty[name] {
			r.st.Components[name] = c
			delete(r.borrowed, name) // st is the recorder's now
		}
	}
	for name := range r.st.Components {
		if _, ok := st.Components[name]; !ok && !mine(name) && !r.dirty[name] {
			delete(r.st.Components, name)
		}
	}
}

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
	r.ownLocked(name)
	fn(r.st.Component(name))
	r.dirty[name] = true
	v := r.bump()
	r.mu.Unlock()
	return v
}

// UpdateComponentSeeing is UpdateComponent whose fn sees the whole state
// too, in the same step: what it decides from the other components'
// records (it must not change them) no other change comes between. fn
// reports whether it changed the component; a write is scheduled only
// then. It returns the version to Wait for (0 when nothing changed).
func (r *Recorder) UpdateComponentSeeing(name string, fn func(st *State, c *Component) bool) uint64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ownLocked(name)
	if !fn(r.st, r.st.Component(name)) {
		return 0
	}
	r.dirty[name] = true
	return r.bump()
}

// RemoveComponent drops a component's record.
func (r *Recorder) RemoveComponent(name string) uint64 {
	r.mu.Lock()
	delete(r.st.Components, name)
	delete(r.borrowed, name)
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
	// The stack's fields hold the time of the last change, to the second:
	// they are encoded again when it moves, not with every change (with
	// 12,000 stack parameters, encoding them for each component's records
	// took half of a deploy of 4,000). A shared recorder writes them only
	// when it changed them: its copy of them may be older than the store's.
	if now := r.Now().UTC().Truncate(time.Second); !now.Equal(r.st.Updated) {
		r.st.Updated = now
		r.hdrDirty = r.hdrDirty || !r.shared
	}
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

// Close writes what is left, stops the writer, and brings the state to rest
// (the file backend compacts its journal into the snapshot).
func (r *Recorder) Close() error {
	err := r.Flush()
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	close(r.kick)
	<-r.done
	var b Batch
	final := func() (Batch, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		var err error
		b, err = r.encodeLocked(!r.shared)
		return b, err
	}
	ferr := r.w.Finish(context.Background(), final, err != nil)
	if err != nil {
		r.mu.Lock()
		r.noteWritten(b, ferr)
		r.mu.Unlock()
	}
	if ferr != nil {
		return ferr
	}
	// Finish wrote the whole state when a write had failed: it holds
	// every change.
	return nil
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
			b, err := r.encodeLocked(r.fresh || r.w.Compact())
			r.mu.Unlock()
			if err == nil {
				err = r.w.Write(context.Background(), b)
			}
			r.mu.Lock()
			if errors.Is(err, errJournalFull) {
				// The whole state then, which holds this batch too (and
				// carries what it took, should it fail as well).
				taken := slices.Clone(r.taken)
				b, err = r.encodeLocked(true)
				r.taken = append(r.taken, taken...)
				if err == nil {
					r.mu.Unlock()
					err = r.w.Write(context.Background(), b)
					r.mu.Lock()
				}
			}
			r.noteWritten(b, err)
			if err != nil {
				r.err, r.failed = err, v
				if r.shared {
					// Never a whole write over the others' records: what
					// this one carried goes with the next.
					r.requeue(b)
				} else {
					// What was taken for this write is in no store: the
					// next write is a whole one, on a journal of its own.
					r.fresh = true
				}
			} else {
				r.err = nil
				r.written = v
				r.fresh = false
				r.base = nil
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

// noteWritten keeps track of the components whose changes are in no
// write that succeeded, after a write of b that ended with err.
func (r *Recorder) noteWritten(b Batch, err error) {
	switch {
	case err != nil:
		if r.unwritten == nil {
			r.unwritten = map[string]bool{}
		}
		for _, name := range r.taken {
			r.unwritten[name] = true
		}
	case b.Full:
		clear(r.unwritten) // it carried every record
	default:
		for _, name := range r.taken {
			delete(r.unwritten, name)
		}
	}
}

// Unwritten names, sorted, the components whose last changes the store
// may not hold: carried by a write that failed, or never written. After a
// failed Close, the state lacks them.
func (r *Recorder) Unwritten() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.unwritten)+len(r.dirty))
	for name := range r.unwritten {
		names = append(names, name)
	}
	for name := range r.dirty {
		if !r.unwritten[name] {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// requeue marks what a failed batch carried as changed again.
func (r *Recorder) requeue(b Batch) {
	if b.Header != nil {
		r.hdrDirty = true
	}
	for _, f := range b.Components {
		if _, ok := r.st.Components[f.Name]; ok {
			r.dirty[f.Name] = true
		}
	}
	for _, name := range b.Removed {
		r.removed[name] = true
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

// maxSnapshot is the longest state document written: what the readers
// take (inputfile.MaxState). A variable so that tests can lower it.
var maxSnapshot = inputfile.MaxState

// checkSnapshotLength refuses a state document longer than the readers
// take: written, it could not be read back (no undeploy, no explain). The
// last state written stays, and the run fails saying why.
func checkSnapshotLength(n int) error {
	if n <= maxSnapshot {
		return nil
	}
	return fmt.Errorf("the state would be %s, more than the %s gantry reads back, so it is not written (the last state written stays); a parameter or an output far too large?",
		inputfile.Bytes(int64(n)), inputfile.Bytes(int64(maxSnapshot)))
}

// encodeLocked encodes what changed since the last write, re-encoding only
// the parts that changed: with full, the whole state (its Snapshot the same
// bytes as Encode).
func (r *Recorder) encodeLocked(full bool) (Batch, error) {
	b := Batch{Full: full}
	if r.hdrDirty {
		h, err := encodeHeader(r.st)
		if err != nil {
			return Batch{}, err
		}
		r.header, r.hdrDirty = h, false
		b.Header = h
	}
	for name := range r.removed {
		if _, back := r.st.Components[name]; !back {
			b.Removed = append(b.Removed, name)
		}
	}
	clear(r.removed)
	r.taken = r.taken[:0]
	for name := range r.dirty {
		c, ok := r.st.Components[name]
		if !ok {
			continue
		}
		r.taken = append(r.taken, name)
		f, err := encodeComponent(name, c)
		if err != nil {
			return Batch{}, err
		}
		if _, had := r.frags[name]; !had {
			i, _ := slices.BinarySearch(r.names, name)
			r.names = slices.Insert(r.names, i, name)
		}
		r.frags[name] = f
		b.Components = append(b.Components, Fragment{Name: name, Data: f})
	}
	clear(r.dirty)
	if !full {
		if r.base != nil {
			b.Base, b.BaseSize = r.base.digest, r.base.size
		}
		return b, nil
	}
	b.Header, b.Removed = r.header, nil
	b.Components = make([]Fragment, len(r.names))
	for i, name := range r.names {
		b.Components[i] = Fragment{Name: name, Data: r.frags[name]}
	}
	// The writer is the only user of the document until its next write:
	// one buffer serves every write instead of a new one the state's size.
	r.buf = assemble(r.buf, r.header, r.frags, r.names)
	if err := checkSnapshotLength(len(r.buf)); err != nil {
		return Batch{}, err
	}
	b.Snapshot = r.buf
	return b, nil
}
