package state

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
)

// switchWriter fails its writes while down.
type switchWriter struct {
	mu   sync.Mutex
	down bool
}

func (w *switchWriter) Write(context.Context, Batch) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.down {
		return errors.New("the database is away")
	}
	return nil
}

func (w *switchWriter) Compact() bool { return false }

func (w *switchWriter) Finish(ctx context.Context, final func() (Batch, error), dirty bool) error {
	if !dirty {
		return nil
	}
	b, err := final()
	if err != nil {
		return err
	}
	return w.Write(ctx, b)
}

func (w *switchWriter) set(down bool) {
	w.mu.Lock()
	w.down = down
	w.mu.Unlock()
}

// TestUnwritten: the components whose last changes a failed write carried
// are named until a write carries them, and after a Close that failed; a
// change written before the failure is not.
func TestUnwritten(t *testing.T) {
	w := &switchWriter{}
	r := Record(w, New("demo"))
	if err := r.Wait(r.UpdateComponent("a", func(c *Component) { c.Status = StatusDeployed })); err != nil {
		t.Fatal(err)
	}
	if got := r.Unwritten(); len(got) != 0 {
		t.Fatalf("after a write that succeeded: %v", got)
	}
	w.set(true)
	r.UpdateComponent("c", func(c *Component) { c.Status = StatusIncomplete })
	if err := r.Wait(r.UpdateComponent("b", func(c *Component) { c.Status = StatusIncomplete })); err == nil {
		t.Fatal("a write to a store that is down succeeded")
	}
	if got, want := r.Unwritten(), []string{"b", "c"}; !slices.Equal(got, want) {
		t.Errorf("after a failed write: %v, want %v", got, want)
	}
	if err := r.Close(); err == nil {
		t.Fatal("Close with the store down succeeded")
	}
	if got, want := r.Unwritten(), []string{"b", "c"}; !slices.Equal(got, want) {
		t.Errorf("after a failed Close: %v, want %v", got, want)
	}

	// The store back: the whole state written after the failure carries
	// every change.
	w2 := &switchWriter{down: true}
	r2 := Record(w2, New("demo"))
	_ = r2.Wait(r2.UpdateComponent("a", func(c *Component) { c.Status = StatusDeployed }))
	w2.set(false)
	if err := r2.Close(); err != nil {
		t.Fatal(err)
	}
	if got := r2.Unwritten(); len(got) != 0 {
		t.Errorf("after a Close that wrote everything: %v", got)
	}
}
