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
// ctx ends; attempt (if set) hears of each failed attempt: its number (the
// first is 1), the time since the wait began and its error. Every waiting
// step — probes, ready conditions, waits of plugin lists — waits with it.
// When the timeout cuts an attempt short, the error reported is the one of
// the last attempt that completed: "503 Service Unavailable" says more than
// "context deadline exceeded".
func Wait(ctx context.Context, timeout, interval time.Duration, try func(context.Context) error, attempt func(int, time.Duration, error)) error {
	start := time.Now()
	deadline := start.Add(timeout)
	var last error
	for n := 1; ; n++ {
		attemptCtx, cancel := context.WithDeadline(ctx, deadline)
		err := try(attemptCtx)
		cutShort := attemptCtx.Err() != nil
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
		if time.Now().Add(interval).After(deadline) {
			return &WaitError{Timeout: timeout, Last: last}
		}
		if attempt != nil {
			attempt(n, time.Since(start), err)
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// IsWaitError reports whether err is a wait that gave up.
func IsWaitError(err error) (*WaitError, bool) {
	var we *WaitError
	ok := errors.As(err, &we)
	return we, ok
}
