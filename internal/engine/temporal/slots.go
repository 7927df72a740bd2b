package temporal

import (
	"context"
	"sync"

	"go.temporal.io/sdk/worker"
)

// slots are a worker's --parallel: the steps it runs at once. Every step
// but a light one takes a slot while it runs. As the shared queue's slot
// supplier, they let the worker take a step from that queue only while a
// slot is free, so that a busy worker leaves the shared queue's steps to
// idle ones; a poll waiting for a step holds no slot, so the steps of the
// components the worker hosts never wait for an idle poll.
type slots struct {
	n int

	mu      sync.Mutex
	used    int
	changed chan struct{} // closed and replaced when a slot is freed
}

var _ worker.SlotSupplier = (*slots)(nil)

func newSlots(n int) *slots { return &slots{n: n, changed: make(chan struct{})} }

// acquire takes a slot, waiting for one.
func (s *slots) acquire(ctx context.Context) error { return s.wait(ctx, true) }

// release frees a slot.
func (s *slots) release() {
	s.mu.Lock()
	s.used--
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// free waits until a slot is free, without taking it.
func (s *slots) free(ctx context.Context) error { return s.wait(ctx, false) }

// wait waits until a slot is free, and takes it if take.
func (s *slots) wait(ctx context.Context, take bool) error {
	for {
		s.mu.Lock()
		if s.used < s.n {
			if take {
				s.used++
			}
			s.mu.Unlock()
			return nil
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// ReserveSlot lets the shared queue be polled once a slot is free.
func (s *slots) ReserveSlot(ctx context.Context, _ worker.SlotReservationInfo) (*worker.SlotPermit, error) {
	if err := s.free(ctx); err != nil {
		return nil, err
	}
	return &worker.SlotPermit{}, nil
}

// TryReserveSlot is for eager tasks, which workers do not take.
func (s *slots) TryReserveSlot(worker.SlotReservationInfo) *worker.SlotPermit {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used < s.n {
		return &worker.SlotPermit{}
	}
	return nil
}

// MarkSlotUsed: the step takes its slot when it starts.
func (s *slots) MarkSlotUsed(worker.SlotMarkUsedInfo) {}

// ReleaseSlot: the step gives its slot back when it ends.
func (s *slots) ReleaseSlot(worker.SlotReleaseInfo) {}

// MaxSlots is the worker's --parallel.
func (s *slots) MaxSlots() int { return s.n }
