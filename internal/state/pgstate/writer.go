package pgstate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gantry-dev/gantry/internal/state"
)

// writer writes a run's batches, each in one transaction sent as one
// pipeline: a round trip per group commit.
type writer struct {
	s     *Store
	stack string
	runID string
	run   context.Context // the run's (state.Store.Writer)
}

// Writer starts writing a run's changes; the run must hold the stack's
// lock (every write checks that it still does). While the database is
// away its writes wait for it as long as ctx lives (and outage).
func (s *Store) Writer(ctx context.Context) (state.Writer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runID == "" || s.stack == "" {
		return nil, errors.New("the state's lock is not held: a run writes the state under its lock")
	}
	return &writer{s: s, stack: s.stack, runID: s.runID, run: ctx}, nil
}

// Compact is never needed: each component's row is replaced in place.
func (w *writer) Compact() bool { return false }

// Write writes a batch in one transaction, retried while the database is
// away (outage): every statement replaces rows whole, so a batch whose
// commit may or may not have happened before the connection broke is
// written again as it is.
//
// Each attempt is made even once the wait ended (a run stopped at once
// records what it can), bounded then by lastAttempt.
func (w *writer) Write(ctx context.Context, b state.Batch) error {
	// The wait ends with the run's context or the call's, and hears of
	// the run's interrupt.
	wait, cancel := context.WithCancel(w.run)
	defer cancel()
	defer context.AfterFunc(ctx, cancel)()
	err := w.s.retry(wait, "write the state", func() error {
		actx, done := attempt(wait)
		defer done()
		return w.write(actx, b)
	})
	if err == nil {
		return nil
	}
	if wait.Err() != nil && transient(context.Background(), err) {
		return fmt.Errorf("the state in %s was not written: the database was away, and the wait for it was stopped: %w", w.s.redacted, w.s.scrub(err))
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == errFenced {
		return fmt.Errorf("the state in %s was not written: this run no longer holds the stack's lock (%s)", w.s.redacted, pe.Message)
	}
	if errors.Is(err, errLost) {
		return fmt.Errorf("the state in %s was not written: %w", w.s.redacted, err)
	}
	return fmt.Errorf("write the state to %s: %w", w.s.redacted, w.s.scrub(err))
}

func (w *writer) write(ctx context.Context, b state.Batch) error {
	if l := w.s.lostLock(); l != nil {
		return lostError{why: l.Why()}
	}
	// A write that hangs (a network cut the kernel has not noticed) is
	// given up and tried again on a new connection.
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	conn, err := w.s.session(ctx)
	if err != nil {
		return err
	}
	var q pgx.Batch
	q.Queue(`BEGIN`)
	// A run whose lock was lost (its session ended, another run took it)
	// writes nothing over the other run's state.
	q.Queue(`SELECT gantry_fence($1, $2, $3)`, w.stack, w.runID, LockKey(w.stack))
	if b.Header != nil {
		q.Queue(`INSERT INTO gantry_stacks (stack, header, updated) VALUES ($1, $2, now())
			ON CONFLICT (stack) DO UPDATE SET header = $2, updated = now()`, w.stack, b.Header)
	}
	names := make([]string, len(b.Components))
	records := make([][]byte, len(b.Components))
	for i, f := range b.Components {
		names[i], records[i] = f.Name, f.Data
	}
	if b.Full {
		q.Queue(`DELETE FROM gantry_components WHERE stack = $1 AND NOT (name = ANY($2))`, w.stack, names)
	} else if len(b.Removed) > 0 {
		q.Queue(`DELETE FROM gantry_components WHERE stack = $1 AND name = ANY($2)`, w.stack, b.Removed)
	}
	if len(names) > 0 {
		q.Queue(`INSERT INTO gantry_components (stack, name, record)
			SELECT $1, n, r FROM unnest($2::text[], $3::bytea[]) AS u (n, r)
			ON CONFLICT (stack, name) DO UPDATE SET record = excluded.record`, w.stack, names, records)
	}
	q.Queue(`COMMIT`)
	err = conn.SendBatch(ctx, &q).Close()
	if err != nil {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			pe = nil
			// A connection that broke is opened again by the next attempt.
			w.s.dropSession(conn)
		} else if pe.Code == errLockRegain {
			w.s.checkLock()
		}
		if pe != nil && conn.PgConn().TxStatus() != 'I' {
			// The server failed a statement: the rest of the pipeline
			// was skipped, COMMIT among them, and the transaction left
			// open and aborted. Roll it back so the session can be used.
			if _, rerr := conn.Exec(ctx, `ROLLBACK`); rerr != nil {
				w.s.dropSession(conn)
			}
		}
	}
	return err
}

// Finish has nothing to compact: every batch went to its rows. After a
// failed write the recorder's next batch was a full one, or there was
// none: then the whole state is written now.
func (w *writer) Finish(ctx context.Context, final func() (state.Batch, error), dirty bool) error {
	if !dirty {
		return nil
	}
	b, err := final()
	if err != nil {
		return err
	}
	return w.Write(ctx, b)
}

// writeTimeout bounds one attempt at a write.
const writeTimeout = 30 * time.Second

// errLost ends a run's writes once its lock is known lost.
var errLost = errors.New("this run no longer holds the stack's lock: another run took it, or the database stayed away too long")

// lostError is errLost saying why the lock was lost, when known.
type lostError struct{ why error }

func (e lostError) Error() string {
	switch {
	case errors.Is(e.why, state.ErrLockTaken):
		return "this run no longer holds the stack's lock: " + e.why.Error()
	case e.why != nil:
		return "this run no longer holds the stack's lock: the database stayed away too long (" + e.why.Error() + ")"
	}
	return errLost.Error()
}

func (e lostError) Is(target error) bool { return target == errLost }

// lostLock is the lock the store took when it is known lost, else nil.
func (s *Store) lostLock() *lock {
	s.mu.Lock()
	l := s.held
	s.mu.Unlock()
	if l == nil {
		return nil
	}
	select {
	case <-l.lost:
		return l
	default:
		return nil
	}
}

// checkLock has the lock's watcher check its session now.
func (s *Store) checkLock() {
	s.mu.Lock()
	l := s.held
	s.mu.Unlock()
	if l != nil {
		l.check()
	}
}
