package steps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/plan"
)

// TimeoutError is the failure of a step attempt that ran out of time: its
// process group was stopped as a cancelled one is (SIGTERM, SIGKILL after
// the grace period).
type TimeoutError struct {
	After time.Duration
	// Err is what the stopped attempt reported.
	Err error
}

func (e *TimeoutError) Error() string { return fmt.Sprintf("timed out after %s", e.After) }

// Unwrap is what the stopped attempt reported.
func (e *TimeoutError) Unwrap() error { return e.Err }

// errTimedOut is the cause of an attempt's context that ran out of time.
var errTimedOut = errors.New("step timed out")

// tailSize is how much of an attempt's output retries.when patterns see:
// its end, where tools print why they failed.
const tailSize = 64 << 10

// limited runs a step within its limits (plan.Limits, part of its spec):
// each attempt with its timeout, and a failed attempt again while the
// retries allow and their when matches, waiting the backoff between
// attempts. Every attempt that fails is logged with why, and whether it is
// tried again. An interrupted run is never retried.
func limited(ctx context.Context, env plan.Env, l *plan.Limits, run func(context.Context, plan.Env) plan.Result) plan.Result {
	if l == nil {
		return run(ctx, env)
	}
	r := l.Retries
	attempts := 1
	if r != nil && r.Attempts > 1 {
		attempts = r.Attempts
	}
	var patterns []*regexp.Regexp
	if r != nil {
		for _, p := range r.Patterns {
			re, err := regexp.Compile(p)
			if err != nil {
				return plan.Fail(fmt.Errorf("retries.when: %w", err))
			}
			patterns = append(patterns, re)
		}
	}
	for i := 1; ; i++ {
		if attempts > 1 {
			env.Logf("attempt %d of %d", i, attempts)
		}
		aenv := env
		var out *tail
		if len(patterns) > 0 {
			out = &tail{}
			aenv = &teeEnv{Env: env, out: out}
		}
		res := attempt(ctx, aenv, l.TimeoutDuration(), run)
		if res.Status != plan.Failed || ctx.Err() != nil || attempts == 1 {
			return res
		}
		if i == attempts {
			res.Reason = fmt.Sprintf("%s (gave up after %d attempts)", res.Reason, attempts)
			return res
		}
		if !retryable(res, out, r, patterns) {
			env.Logf("attempt %d of %d failed: %s; not tried again: retries.when matches neither its exit code nor its output", i, attempts, firstLine(res.Reason))
			return res
		}
		wait := backoff(r, i)
		env.Logf("attempt %d of %d failed: %s; trying again in %s", i, attempts, firstLine(res.Reason), wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			// Its reason says the run stopped it, not only what failed.
			t.Stop()
			res.Reason = fmt.Sprintf("%s (interrupted before attempt %d of %d)", res.Reason, i+1, attempts)
			return res
		case <-t.C:
		}
	}
}

// attempt runs one attempt within the timeout. A timeout cancels the
// attempt's context, which stops its processes as an interruption does,
// and the attempt fails saying it timed out.
func attempt(ctx context.Context, env plan.Env, timeout time.Duration, run func(context.Context, plan.Env) plan.Result) plan.Result {
	if timeout <= 0 {
		return run(ctx, env)
	}
	actx, cancel := context.WithTimeoutCause(ctx, timeout, errTimedOut)
	defer cancel()
	res := run(actx, env)
	if res.Status == plan.Failed && ctx.Err() == nil && errors.Is(context.Cause(actx), errTimedOut) {
		err := &TimeoutError{After: timeout, Err: res.Err}
		return plan.Result{Status: plan.Failed, Err: err, Reason: err.Error()}
	}
	return res
}

// retryable reports whether retries.when matches a failed attempt: any
// failure without a when; else its process's exit code, or a pattern that
// its output (or, for a failure that is not a process's exit, its error)
// matches.
func retryable(res plan.Result, out *tail, r *plan.Retries, patterns []*regexp.Regexp) bool {
	if len(r.ExitCodes) == 0 && len(patterns) == 0 {
		return true
	}
	var ee *component.ExitError
	exited := errors.As(res.Err, &ee)
	if exited && slices.Contains(r.ExitCodes, ee.Code) {
		return true
	}
	// A process's error names its arguments, which are not what it said:
	// its output is. Other failures (a plugin's) have their error only.
	var text string
	if out != nil {
		text = out.String()
	}
	if !exited {
		text += "\n" + res.Reason
	}
	for _, re := range patterns {
		if re.MatchString(text) {
			return true
		}
	}
	return false
}

// backoff is the wait after the attempt-th failure: the backoff, doubled
// after each further failure, at most ten minutes.
func backoff(r *plan.Retries, attempt int) time.Duration {
	d := time.Duration(r.Backoff * float64(time.Second))
	for i := 1; i < attempt && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// maxBackoff bounds the wait between two attempts.
const maxBackoff = 10 * time.Minute

// teeEnv gives a step's streams to the run as usual and keeps the end of
// what they carry for retries.when.
type teeEnv struct {
	plan.Env
	out *tail
}

// Stream is the run's stream, its bytes kept in the tail too.
func (e *teeEnv) Stream() io.Writer { return io.MultiWriter(e.Env.Stream(), e.out) }

// tail keeps the last tailSize bytes written to it, from several streams.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailSize {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-tailSize:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
