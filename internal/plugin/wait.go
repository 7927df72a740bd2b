package plugin

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// WaitError is a wait that gave up: its timeout passed while the condition
// did not hold. Last is the error of the last attempt that completed.
type WaitError struct {
	Timeout time.Duration
	Last    error
}

func (e *WaitError) Error() string { return fmt.Sprintf("gave up after %s: %v", e.Timeout, e.Last) }

func (e *WaitError) Unwrap() error { return e.Last }

// Wait retries try every interval until it succeeds, the timeout passes or
// ctx ends; attempt (if set) hears of each failed attempt, the last one and
// one the timeout cut short too: its number (the first is 1), the time since
// the wait began and its error. Every waiting
// step — probes, ready conditions, waits of plugin lists — waits with it.
// When the timeout cuts an attempt short, the error reported is the one of
// the last attempt that completed: "503 Service Unavailable" says more than
// "context deadline exceeded". When the next attempt would come after the
// timeout, a last one is made before it ends, leaving it lastRoom: a
// condition that holds before the timeout is seen, whatever the interval.
func Wait(ctx context.Context, timeout, interval time.Duration, try func(context.Context) error, attempt func(int, time.Duration, error)) error {
	start := time.Now()
	deadline := start.Add(timeout)
	var last error
	for n, final := 1, false; ; n++ {
		began := time.Now()
		attemptCtx, cancel := context.WithDeadline(ctx, deadline)
		err := try(attemptCtx)
		took := time.Since(began)
		// Cut short by the timeout: its context says so, or the clock does
		// (a dial's own deadline, the same instant, may fire first and
		// fail it with "i/o timeout" before the context's timer ran).
		cutShort := attemptCtx.Err() != nil || !time.Now().Before(deadline)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !cutShort || last == nil {
			last = err
		}
		if attempt != nil {
			attempt(n, time.Since(start), err)
		}
		next := time.Now().Add(interval)
		if latest := deadline.Add(-lastRoom(took, interval)); next.After(latest) {
			if final || cutShort || !time.Now().Before(deadline.Add(-took)) {
				return &WaitError{Timeout: timeout, Last: last}
			}
			next, final = latest, true // at once when that is past
		}
		t := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// lastRoom is the time a wait's last attempt is given before the timeout:
// as long as the attempt before took, and at least a quarter of the
// interval up to a second. A failed attempt is often much quicker than
// the one that succeeds (a refused connection against an answer), so the
// time the failed one took alone would cut the last one short.
func lastRoom(took, interval time.Duration) time.Duration {
	return max(took, min(interval/4, time.Second))
}

// IsWaitError reports whether err is a wait that gave up.
func IsWaitError(err error) (*WaitError, bool) {
	var we *WaitError
	ok := errors.As(err, &we)
	return we, ok
}
