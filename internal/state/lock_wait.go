package state

import (
	"context"
	"time"
)

// WaitLock takes a lock with try, at once or, with o.Timeout, trying again
// every poll until the timeout passes; o.Waiting hears of the holder each
// time it changes. try reports whether it took the lock and, when not, who
// holds it (nil when unknown). A lock not taken is a *LockedError naming
// its holder and where (the store's name).
func WaitLock(ctx context.Context, where string, o LockOptions, poll time.Duration, try func() (bool, *Holder, error)) error {
	var deadline time.Time
	if o.Timeout > 0 {
		deadline = time.Now().Add(o.Timeout)
	}
	var told *Holder
	for {
		taken, holder, err := try()
		if err != nil || taken {
			return err
		}
		if deadline.IsZero() || !time.Now().Before(deadline) {
			return &LockedError{Path: where, Holder: holder, Waited: o.Timeout}
		}
		if o.Waiting != nil && (told == nil || holder != nil && *holder != *told) {
			o.Waiting(holder)
			told = holder
			if told == nil {
				told = &Holder{} // an unknown holder is told of once
			}
		}
		t := time.NewTimer(min(poll, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
