package state

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/gantry-dev/gantry/internal/inputfile"
)

// Holder says who holds a state's lock.
type Holder struct {
	Host    string    `json:"host"`
	PID     int       `json:"pid"`
	RunID   string    `json:"runId"`
	Command string    `json:"command"`
	User    string    `json:"user,omitempty"`
	Since   time.Time `json:"since"`
	// Workflow names the Temporal workflow that runs the run on workers
	// (docs/temporal.md); the process named is its client.
	Workflow string `json:"workflow,omitempty"`
}

func (h Holder) String() string {
	who := ""
	if h.User != "" {
		who = ", user " + h.User
	}
	s := fmt.Sprintf("%s (pid %d on %s%s, run %s) since %s", h.Command, h.PID, h.Host, who, h.RunID, h.Since.Format(time.RFC3339))
	if h.Workflow != "" {
		s += ", on Temporal workers (workflow " + h.Workflow + ")"
	}
	return s
}

// LockedError is returned when another run holds the lock.
type LockedError struct {
	Path   string
	Holder *Holder // nil when the holder did not say who it is
	// Waited is how long the lock was waited for (--lock-timeout); 0 when
	// it was not.
	Waited time.Duration
	// Regaining says the holder's database session ended a moment ago
	// (Ended before the lock was asked for): that run is taking its lock
	// back, and if it is gone, the lock is free in FreeIn. Zero otherwise.
	Regaining struct{ Ended, FreeIn time.Duration }
}

func (e *LockedError) Error() string {
	who := "another gantry run"
	if e.Holder != nil {
		who = e.Holder.String()
	}
	if e.Regaining.FreeIn > 0 {
		return fmt.Sprintf("state %s is locked by %s, whose database session ended %s ago: that run is taking its lock back, or, if it is gone, the lock is free in %s",
			e.Path, who, e.Regaining.Ended.Round(time.Second), e.Regaining.FreeIn.Round(time.Second))
	}
	return fmt.Sprintf("state %s is locked by %s", e.Path, who)
}

// fileLock is a held lock of a state file.
type fileLock struct {
	fl   *flock.Flock
	path string
}

// LockPath is the lock file of a state file (of the file a link to it
// leads to: companion).
func LockPath(statePath string) string { return companion(statePath, ".lock") }

// lockPoll is how often a run waiting for a state file's lock tries it
// again: flock has no wait with a deadline, and a run that waits for
// another one has minutes to spare, not microseconds.
const lockPoll = 100 * time.Millisecond

// acquireFile takes the lock of a state file, at once or within o.Timeout,
// or fails with a *LockedError naming the holder. The lock is an flock on
// <state>.lock, which the kernel releases when the holder dies, so a run
// killed with SIGKILL never leaves the stack locked; the file also records
// who holds it.
func acquireFile(ctx context.Context, statePath string, h Holder, o LockOptions) (Lock, error) {
	lp := LockPath(statePath)
	fl := flock.New(lp)
	err := WaitLock(ctx, statePath, o, lockPoll, func() (bool, *Holder, error) {
		ok, err := fl.TryLock()
		if err != nil {
			return false, nil, fmt.Errorf("lock %s: %w", lp, err)
		}
		if ok {
			return true, nil, nil
		}
		return false, readHolder(lp), nil
	})
	if err != nil {
		return nil, err
	}
	// The flock belongs to flock's own descriptor; writing the record through
	// another one leaves the lock alone.
	data, _ := json.Marshal(h)
	_ = os.WriteFile(lp, append(data, '\n'), 0o600)
	return &fileLock{fl: fl, path: lp}, nil
}

// Lost is nil: the kernel keeps an flock while its holder lives.
func (l *fileLock) Lost() <-chan struct{} { return nil }

// Why is nil: an flock is never lost.
func (l *fileLock) Why() error { return nil }

// Release gives the lock up and removes the holder record.
func (l *fileLock) Release() error {
	if l == nil {
		return nil
	}
	_ = os.Truncate(l.path, 0)
	return l.fl.Unlock()
}

func readHolder(lockPath string) *Holder {
	data, err := inputfile.Read(lockPath, 1<<20)
	if err != nil || len(strings.TrimSpace(string(data))) == 0 {
		return nil
	}
	var h Holder
	if json.Unmarshal(data, &h) != nil {
		return nil
	}
	return &h
}

// UnlockResult says what Unlock found.
type UnlockResult struct {
	Stale *Holder // a holder record left by a run that is gone
}

// Unlock clears a stale lock: a holder record left behind by a run that no
// longer holds the flock. A held flock is never broken, whatever the record
// says about its host: removing the file would let the next run lock a new
// file while the holder still writes the state, and two runs would write it
// at once. Stop the holder instead.
func Unlock(statePath string) (UnlockResult, error) {
	lp := LockPath(statePath)
	if _, err := os.Stat(lp); errors.Is(err, os.ErrNotExist) {
		return UnlockResult{}, nil
	}
	h := readHolder(lp)
	fl := flock.New(lp)
	ok, err := fl.TryLock()
	if err != nil {
		return UnlockResult{}, fmt.Errorf("lock %s: %w", lp, err)
	}
	if ok {
		// Truncate rather than remove: removing would let two later runs lock
		// two different files.
		defer fl.Unlock()
		if err := os.Truncate(lp, 0); err != nil {
			return UnlockResult{}, err
		}
		return UnlockResult{Stale: h}, nil
	}
	return UnlockResult{}, &LockedError{Path: statePath, Holder: h}
}

// LockProbe is a store that can say, without taking it for more than an
// instant or writing anything, whether a run holds its lock now.
type LockProbe interface {
	// HeldBy reports whether a run holds the lock, and who, as its
	// record says (nil when it did not say).
	HeldBy(ctx context.Context) (held bool, holder *Holder, err error)
}

// heldBy is HeldBy of a state file's lock, without taking it: a probe
// that took a free flock for an instant would make a deploy starting in
// that instant fail with "locked" (plan runs it, often beside a deploy).
// The holder's record says who to look at (holderHolds); only when that
// cannot tell (another host, a process gantry may not look into) is the
// flock tried, and given back at once. A lock file that is not there, or
// without a record (a run gives its lock up by emptying it), is held by no
// one.
func heldBy(statePath string) (bool, *Holder, error) {
	lp := LockPath(statePath)
	fi, err := os.Stat(lp)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil, nil
	}
	h := readHolder(lp)
	if h == nil && err == nil && fi.Size() == 0 {
		return false, nil, nil
	}
	if h != nil && err == nil {
		if held, known := holderHolds(h, fi); known {
			if held {
				return true, h, nil
			}
			return false, nil, nil
		}
	}
	fl := flock.New(lp)
	ok, err := fl.TryLock()
	if err != nil {
		return false, nil, fmt.Errorf("lock %s: %w", lp, err)
	}
	if ok {
		return false, nil, fl.Unlock()
	}
	return true, h, nil
}

// holderHolds tells whether the process a lock's record names holds it
// still, when that can be told from here (known): on this host, the
// process is alive and has the lock file open (a run keeps its flock's
// descriptor open while it holds it). A process gone (a run killed with
// SIGKILL leaves its record) holds nothing; nor does a live one that has
// not the file open (its pid given to another process since).
func holderHolds(h *Holder, lock os.FileInfo) (held, known bool) {
	host, err := os.Hostname()
	if err != nil || h.Host != host || h.PID <= 0 || h.Workflow != "" {
		return false, false
	}
	switch err := syscall.Kill(h.PID, 0); {
	case errors.Is(err, syscall.ESRCH):
		return false, true
	case err != nil && !errors.Is(err, syscall.EPERM):
		return false, false
	}
	fdDir := fmt.Sprintf("/proc/%d/fd", h.PID)
	fds, err := os.ReadDir(fdDir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && syscall.Kill(h.PID, 0) != nil {
			return false, true // it ended meanwhile
		}
		return false, false // another user's, or no /proc
	}
	for _, fd := range fds {
		if fi, err := os.Stat(fdDir + "/" + fd.Name()); err == nil && os.SameFile(fi, lock) {
			return true, true
		}
	}
	return false, true
}
