package pgstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/gantry-dev/gantry/internal/state"
)

// Runs on Temporal workers (docs/temporal.md). The client takes the
// stack's lock as any run does, then hands it to the workflow: the lock row
// names the workflow, and the run's writes — from any worker — check the run
// id in their transaction instead of the lock's session. The client keeps
// the advisory lock while it is attached (a second client is refused), and
// lets it go when it ends; a local run is refused while a workflow holds
// the row. The workflow's last activity deletes the row.

// WorkflowRun is a run whose lock a workflow holds.
type WorkflowRun struct {
	RunID    string
	Workflow string
	// Holder is who started it, or the client attached to it now.
	Holder state.Holder
}

// workflowRow reads the run a workflow holds the stack's lock for, nil
// when none does.
func (s *Store) workflowRow(ctx context.Context, conn *pgx.Conn) (*WorkflowRun, error) {
	var w WorkflowRun
	var data []byte
	err := conn.QueryRow(ctx, `SELECT run_id, workflow, holder FROM gantry_locks WHERE stack = $1 AND workflow IS NOT NULL`, s.stack).
		Scan(&w.RunID, &w.Workflow, &data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, s.failure("read the state's lock in", err)
	}
	_ = json.Unmarshal(data, &w.Holder)
	w.Holder.Workflow = w.Workflow
	return &w, nil
}

// HeldByWorkflow reads the run a workflow holds the stack's lock for, nil
// when none does.
func (s *Store) HeldByWorkflow(ctx context.Context) (*WorkflowRun, error) {
	conn, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	return s.workflowRow(ctx, conn)
}

// LockClient takes the stack's lock for a client of a run on workers: as
// Lock, but when a workflow holds the state (its client died), the lock is
// taken all the same, the row is left to the workflow — but for naming
// this client, so that a second one is refused with its name — and the run
// is returned: the client attaches to it.
func (s *Store) LockClient(ctx context.Context, h state.Holder, o state.LockOptions) (state.Lock, *WorkflowRun, error) {
	return s.lock(ctx, h, o, true)
}

// HandOver hands the stack's lock, which this store holds for runID, to a
// workflow, and stores the run's bundle, in one transaction: from then on
// the run's writes check the row, not the lock's session. h names the
// client in the row.
func (s *Store) HandOver(ctx context.Context, runID, workflow string, h state.Holder, bundle []byte) error {
	s.mu.Lock()
	held := s.held != nil && s.runID == runID
	s.mu.Unlock()
	if !held {
		return errors.New("the state's lock is not held by this run: it cannot be handed to a workflow")
	}
	h.Workflow = workflow
	data, _ := json.Marshal(h)
	conn, err := s.session(ctx)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE gantry_locks SET workflow = $3, holder = $4 WHERE stack = $1 AND run_id = $2`, s.stack, runID, workflow, data)
		if err != nil {
			return err
		}
		if tag.RowsAffected() != 1 {
			return errTaken
		}
		if _, err := tx.Exec(ctx, `INSERT INTO gantry_runs (stack, run_id, bundle) VALUES ($1, $2, $3)
			ON CONFLICT (stack, run_id) DO UPDATE SET bundle = $3, created = now()`, s.stack, runID, bundle); err != nil {
			return err
		}
		// Log lines are kept a week; the run folder on the client keeps
		// them for good.
		_, err = tx.Exec(ctx, `DELETE FROM gantry_run_lines WHERE stack = $1 AND at < now() - interval '7 days'`, s.stack)
		return err
	})
	if err != nil {
		return fmt.Errorf("hand the state's lock to the workflow in %s: %w", s.redacted, s.scrub(err))
	}
	return nil
}

// TakeBack undoes HandOver: the workflow did not start.
func (s *Store) TakeBack(ctx context.Context, runID string) error {
	conn, err := s.session(ctx)
	if err != nil {
		return err
	}
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE gantry_locks SET workflow = NULL WHERE stack = $1 AND run_id = $2`, s.stack, runID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM gantry_runs WHERE stack = $1 AND run_id = $2`, s.stack, runID)
		return err
	})
	if err != nil {
		return fmt.Errorf("take the state's lock back from the workflow in %s: %w", s.redacted, s.scrub(err))
	}
	return nil
}

// ReleaseWorkflow gives back the stack's lock a workflow holds for runID,
// and drops the run's bundle: the workflow's last activity, or gantry unlock
// once the workflow is known gone. Releasing a lock no longer held is not an
// error.
func (s *Store) ReleaseWorkflow(ctx context.Context, runID string) error {
	return s.retry(ctx, "give the state's lock back", func() error {
		conn, err := s.session(ctx)
		if err != nil {
			return err
		}
		err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `DELETE FROM gantry_locks WHERE stack = $1 AND run_id = $2 AND workflow IS NOT NULL`, s.stack, runID); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `DELETE FROM gantry_runs WHERE stack = $1 AND run_id = $2`, s.stack, runID)
			return err
		})
		if err != nil && isConnError(err) {
			s.dropSession(conn)
		}
		return err
	})
}

// ErrRunEnded is the error of a run the database no longer holds: it
// ended (or was never this database's).
var ErrRunEnded = errors.New("no such run")

// Bundle reads the bundle of a run a workflow holds the lock for.
func (s *Store) Bundle(ctx context.Context, runID string) ([]byte, error) {
	var b []byte
	missing := false
	err := s.retry(ctx, "read the run's bundle", func() error {
		conn, err := s.session(ctx)
		if err != nil {
			return err
		}
		err = conn.QueryRow(ctx, `SELECT bundle FROM gantry_runs WHERE stack = $1 AND run_id = $2`, s.stack, runID).Scan(&b)
		if errors.Is(err, pgx.ErrNoRows) {
			missing = true
			return nil
		}
		if err != nil && isConnError(err) {
			s.dropSession(conn)
		}
		return err
	})
	if missing {
		return nil, fmt.Errorf("%s holds no run %s of stack %s: it ended, or it was started against another database: %w", s.redacted, runID, s.stack, ErrRunEnded)
	}
	if err != nil {
		return nil, fmt.Errorf("read run %s from %s: %w", runID, s.redacted, s.scrub(err))
	}
	return b, nil
}

// RunWriter writes the state for a run whose lock a workflow holds: every
// write checks, in its transaction, that the row still names the run.
func (s *Store) RunWriter(runID string) (state.Writer, error) {
	if s.stack == "" || runID == "" {
		return nil, errors.New("a run's writer needs the stack and the run")
	}
	// A worker's steps wait for the database as long as outage lets them:
	// the workflow, not an interrupt of this process, ends the run.
	return &writer{s: s, stack: s.stack, runID: runID, run: context.Background()}, nil
}

// Line is a line of a step's log, or a note, on its way from a worker to
// the client.
type Line struct {
	Seq  int64
	Step string
	Kind int16
	Body string
}

// AppendLines adds lines to a run's log, in order.
func (s *Store) AppendLines(ctx context.Context, runID string, lines []Line) error {
	if len(lines) == 0 {
		return nil
	}
	steps := make([]string, len(lines))
	kinds := make([]int16, len(lines))
	bodies := make([]string, len(lines))
	for i, l := range lines {
		steps[i], kinds[i], bodies[i] = l.Step, l.Kind, l.Body
	}
	err := s.retry(ctx, "write a run's log lines", func() error {
		conn, err := s.session(ctx)
		if err != nil {
			return err
		}
		_, err = conn.Exec(ctx, `INSERT INTO gantry_run_lines (stack, run_id, step, kind, body)
			SELECT $1, $2, u.step, u.kind, u.body FROM unnest($3::text[], $4::smallint[], $5::text[]) WITH ORDINALITY AS u (step, kind, body, n)
			ORDER BY u.n`, s.stack, runID, steps, kinds, bodies)
		if err != nil && isConnError(err) {
			s.dropSession(conn)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("write the log lines of run %s to %s: %w", runID, s.redacted, s.scrub(err))
	}
	return nil
}

// Lines reads up to limit lines of a run's log after the one numbered after
// (0: from the start), in order.
func (s *Store) Lines(ctx context.Context, runID string, after int64, limit int) ([]Line, error) {
	conn, err := s.session(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := conn.Query(ctx, `SELECT seq, step, kind, body FROM gantry_run_lines
		WHERE stack = $1 AND run_id = $2 AND seq > $3 ORDER BY seq LIMIT $4`, s.stack, runID, after, limit)
	if err != nil {
		if isConnError(err) {
			s.dropSession(conn)
		}
		return nil, fmt.Errorf("read the log lines of run %s from %s: %w", runID, s.redacted, s.scrub(err))
	}
	var out []Line
	var l Line
	_, err = pgx.ForEachRow(rows, []any{&l.Seq, &l.Step, &l.Kind, &l.Body}, func() error {
		out = append(out, l)
		return nil
	})
	if err != nil {
		if isConnError(err) {
			s.dropSession(conn)
		}
		return nil, fmt.Errorf("read the log lines of run %s from %s: %w", runID, s.redacted, s.scrub(err))
	}
	return out, nil
}

// Stack is the stack the store holds the state of.
func (s *Store) Stack() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stack
}
