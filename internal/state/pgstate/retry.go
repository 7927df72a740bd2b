package pgstate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gantry-dev/gantry/internal/state"
)

// outage is how long a run waits for the database to come back (a server
// restart, a network cut) before a write or the lock counts as failed:
// meanwhile the components running go on, and those about to start wait
// for their in-flight record to be written. A variable for the tests.
var outage = 10 * time.Minute

// Backoff between attempts: quick at first (a restart takes a second),
// then every few seconds.
const (
	firstRetry = 50 * time.Millisecond
	lastRetry  = 5 * time.Second
)

// lastAttempt bounds an attempt made once the wait for the database was
// stopped (a second interrupt): a refused connection fails at once, a
// network cut would hold the run for the connect timeout.
const lastAttempt = 3 * time.Second

// attempt is the context of one attempt at an operation whose wait ends
// with ctx: not ended with it — a write tried as a run is stopped at once
// must still be made if the database answers — but lastAttempt after it.
func attempt(ctx context.Context) (context.Context, context.CancelFunc) {
	actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(lastAttempt, cancel) })
	return actx, func() { stop(); cancel() }
}

// transient tells an error worth retrying — the connection, a server
// shutting down or starting, a lock session not taken back yet — from one
// that will not pass by itself.
func transient(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, errLost) || errors.Is(err, state.ErrLockTaken) {
		return false
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return true // not the server's answer: the connection failed
	}
	switch {
	case pe.Code == errLockRegain,
		strings.HasPrefix(pe.Code, "08"),  // connection exceptions
		strings.HasPrefix(pe.Code, "57P"), // shutting down, starting up
		pe.Code == "53300",                // too many connections
		pe.Code == "40001", pe.Code == "40P01":
		return true
	}
	return false
}

// unreachable tells an error of a database that could not be reached or
// went away — no connection, one that broke, a server shutting down or
// with no connection slot left — from an answer the database gave.
func unreachable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P") || pe.Code == "53300"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		pgconn.SafeToRetry(err) || pgconn.Timeout(err)
}

// failure is err, met doing what in the database, the password scrubbed
// from it; a database that could not be reached is a
// *state.UnavailableError (told before scrubbing, which keeps only the
// text).
func (s *Store) failure(what string, err error) error {
	out := fmt.Errorf("%s %s: %w", what, s.redacted, s.scrub(err))
	switch {
	case unreachable(err):
		return &state.UnavailableError{Err: out}
	case Refused(err):
		return &state.RefusedError{Err: out}
	}
	return out
}

// Refused tells an error of the database refusing this role — a wrong
// or missing password, no such role or database, no privilege — that no
// retry mends: the credentials or the URL must change.
func Refused(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	return strings.HasPrefix(pe.Code, "28") || // invalid authorization
		pe.Code == "3D000" || // no such database
		pe.Code == "42501" // insufficient privilege
}

// retry runs op until it succeeds, fails for good, ctx ends, or the
// database stayed away longer than outage; the first failure and the
// recovery are logged, and so is the run's interrupt (state.WithInterrupt)
// while it waits: what for, how long yet, and how to stop it.
func (s *Store) retry(ctx context.Context, what string, op func() error) error {
	interrupted := state.Interrupted(ctx)
	deadline := time.Now().Add(outage)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d // a wait with a timeout of its own (--lock-timeout)
	}
	delay := firstRetry
	var since time.Time
	for {
		err := op()
		if err == nil {
			if !since.IsZero() {
				slog.Warn("the state database is back", "state", s.redacted, "doing", what, "after", time.Since(since).Round(time.Millisecond))
			}
			return nil
		}
		if !transient(ctx, err) || time.Now().After(deadline) {
			return err
		}
		if since.IsZero() {
			since = time.Now()
			slog.Warn("the state database cannot be reached; retrying", "state", s.redacted, "doing", what, "err", s.scrub(err), "for up to", time.Until(deadline).Round(time.Second))
		}
		t := time.NewTimer(delay)
		for waiting := true; waiting; {
			select {
			case <-ctx.Done():
				t.Stop()
				return err
			case <-interrupted:
				interrupted = nil // said once
				slog.Warn("interrupted while the state database cannot be reached: waiting for it to record what the run did; interrupt again to stop waiting (the state then stays as a kill leaves it: a component that was running is incomplete)",
					"state", s.redacted, "doing", what, "for up to", time.Until(deadline).Round(time.Second))
			case <-t.C:
				waiting = false
			}
		}
		delay = min(2*delay, lastRetry)
	}
}
