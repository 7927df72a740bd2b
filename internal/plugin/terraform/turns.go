package terraform

import (
	"context"
	"slices"
	"sync"
)

// cacheTurns are this process's queues for the plugin cache folders, one a
// folder. The inits of this gantry process (a run, or a worker's runs)
// that share a cache wait in its queue, in the order they came, and each
// starts the moment the one before lets go; the lock on the folder
// (flock(2), which cannot wait and be interrupted at once) could only be
// tried again every pluginCacheLockPoll, by whichever waiter's poll came
// first. The lock still keeps other processes apart.
var cacheTurns sync.Map // folder → *turnQueue

func cacheTurn(cache string) *turnQueue {
	q, _ := cacheTurns.LoadOrStore(cache, &turnQueue{})
	return q.(*turnQueue)
}

// turnQueue hands one turn on to its waiters, first come first served.
type turnQueue struct {
	mu      sync.Mutex
	taken   bool
	waiters []chan struct{}
}

// take takes the turn if it is free (nil), or queues the caller and
// returns what closes when the turn is handed to it: the caller is in
// the queue from then on, and must wait or leave.
func (q *turnQueue) take() chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.taken {
		q.taken = true
		return nil
	}
	c := make(chan struct{})
	q.waiters = append(q.waiters, c)
	return c
}

// wait waits for the turn queued as c until ctx ends; a caller that
// gives up leaves the queue (and hands on a turn given to it meanwhile).
func (q *turnQueue) wait(ctx context.Context, c chan struct{}) error {
	select {
	case <-c:
		return nil
	case <-ctx.Done():
		q.leave(c)
		return ctx.Err()
	}
}

// leave takes c out of the queue; if the turn was handed to it already,
// it goes to the next.
func (q *turnQueue) leave(c chan struct{}) {
	q.mu.Lock()
	if i := slices.Index(q.waiters, c); i >= 0 {
		q.waiters = slices.Delete(q.waiters, i, i+1)
		q.mu.Unlock()
		return
	}
	q.mu.Unlock()
	q.release()
}

// release hands the turn to the first waiter, or frees it.
func (q *turnQueue) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.waiters) == 0 {
		q.taken = false
		return
	}
	next := q.waiters[0]
	q.waiters = q.waiters[1:]
	close(next)
}
