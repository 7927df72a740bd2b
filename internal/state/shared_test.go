package state

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
)

// rows is a store that keeps a header and a record per component, as the
// PostgreSQL backend does, and applies batches as they come.
type rows struct {
	mu     sync.Mutex
	header []byte
	comps  map[string][]byte
	fail   bool
	full   int // whole batches written
}

func (s *rows) Write(_ context.Context, b Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return errors.New("the database is away")
	}
	if b.Full {
		s.full++
		s.comps = map[string][]byte{}
	}
	if b.Header != nil {
		s.header = b.Header
	}
	for _, f := range b.Components {
		s.comps[f.Name] = f.Data
	}
	for _, n := range b.Removed {
		delete(s.comps, n)
	}
	return nil
}

func (s *rows) Compact() bool { return false }

func (s *rows) Finish(_ context.Context, final func() (Batch, error), dirty bool) error {
	if !dirty {
		return nil
	}
	b, err := final()
	if err != nil {
		return err
	}
	return s.Write(context.Background(), b)
}

func (s *rows) read(t *testing.T) *State {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var names []string
	for n := range s.comps {
		names = append(names, n)
	}
	slices.Sort(names)
	st, err := Decode("rows", Assemble(s.header, s.comps, names))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestSharedRecorders: two recorders of one run, on two workers, write
// through one store: each writes only the records it changes, the stack's
// fields only when it changed them, never the whole state; each takes in
// what the other wrote; a failed write goes out with the next.
func TestSharedRecorders(t *testing.T) {
	st := New("s")
	st.Component("old").Status = StatusDeployed
	store := &rows{comps: map[string][]byte{}}
	// The run's state as it began.
	seed := Record(store, st.Clone())
	seed.UpdateStack(func(*State) {})
	if err := seed.Close(); err != nil {
		t.Fatal(err)
	}
	a := RecordShared(store, st.Clone())
	b := RecordShared(store, st.Clone())
	// a runs the run's setup: the stack's fields.
	a.UpdateStack(func(s *State) { s.Status, s.LastRun = StatusIncomplete, "run1" })
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	// b, which has not seen a's change, records its component: the stack's
	// fields in the store stay a's.
	b.UpdateComponent("x", func(c *Component) { c.Status = StatusIncomplete })
	if err := b.Flush(); err != nil {
		t.Fatal(err)
	}
	a.UpdateComponent("y", func(c *Component) { c.Status = StatusDeployed })
	if err := a.Flush(); err != nil {
		t.Fatal(err)
	}
	got := store.read(t)
	if got.Status != StatusIncomplete || got.LastRun != "run1" {
		t.Errorf("the stack's fields were written over: status %q, last run %q", got.Status, got.LastRun)
	}
	for _, n := range []string{"old", "x", "y"} {
		if got.Components[n] == nil {
			t.Errorf("record %s lost: %v", n, got.Components)
		}
	}
	if store.full != 1 {
		t.Errorf("%d whole writes; only the seed's should be", store.full)
	}
	// b takes in a's component and the stack's fields, keeping its own.
	b.UpdateComponent("x", func(c *Component) { c.Status = StatusDeployed })
	b.Absorb(store.read(t), func(n string) bool { return n == "x" })
	b.View(func(s *State) {
		if s.Status != StatusIncomplete || s.Components["y"] == nil || s.Components["y"].Status != StatusDeployed {
			t.Errorf("b did not take in a's changes: %+v", s)
		}
		if s.Components["x"].Status != StatusDeployed {
			t.Errorf("b's own change was written over: %+v", s.Components["x"])
		}
	})
	// A failed write: what it carried goes with the next one.
	store.fail = true
	if err := b.Flush(); err == nil {
		t.Fatal("no error from a failed write")
	}
	store.fail = false
	b.UpdateComponent("z", func(c *Component) { c.Status = StatusSkipped })
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	got = store.read(t)
	if got.Components["x"].Status != StatusDeployed || got.Components["z"] == nil || got.Components["y"] == nil {
		t.Errorf("after the retry: %+v", got.Components)
	}
	if store.full != 1 {
		t.Errorf("%d whole writes after a failure; a shared recorder never writes one", store.full)
	}
}
