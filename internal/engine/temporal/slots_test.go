package temporal

import (
	"context"
	"errors"
	"testing"
)

// TestSlots: a worker's slots are taken up to --parallel; waiting for a
// free one takes none and gives up with its context; a slot released is
// free again.
func TestSlots(t *testing.T) {
	s := newSlots(2)
	ctx := context.Background()
	done, cancel := context.WithCancel(ctx)
	cancel()
	for i := 0; i < 2; i++ {
		if err := s.free(ctx); err != nil {
			t.Fatalf("free with %d taken: %v", i, err)
		}
		if err := s.acquire(ctx); err != nil {
			t.Fatalf("acquire %d: %v", i, err)
		}
	}
	if err := s.acquire(done); !errors.Is(err, context.Canceled) {
		t.Errorf("acquire with none free: %v, want its context's error", err)
	}
	if err := s.free(done); !errors.Is(err, context.Canceled) {
		t.Errorf("free with none free: %v, want its context's error", err)
	}
	if s.TryReserveSlot(nil) != nil {
		t.Error("TryReserveSlot gave a permit with none free")
	}
	s.release()
	if err := s.free(done); err != nil {
		t.Errorf("free after a release: %v", err)
	}
	if s.TryReserveSlot(nil) == nil {
		t.Error("TryReserveSlot gave no permit with one free")
	}
	if s.used != 1 {
		t.Errorf("%d slots used, want 1: waiting for a free slot took one", s.used)
	}
}
