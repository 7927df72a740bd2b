package pgstate

import (
	"context"
	"errors"
	"fmt"

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
}

// Writer starts writing a run's changes; the run must hold the stack's
// lock (every write checks that it still does).
func (s *Store) Writer(context.Context) (state.Writer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.runID == "" || s.stack == "" {
		return nil, errors.New("the state's lock is not held: a run writes the state under its lock")
	}
	return &writer{s: s, stack: s.stack, runID: s.runID}, nil
}

// Compact is never needed: each component's row is replaced in place.
func (w *writer) Compact() bool { return false }

func (w *writer) Write(ctx context.Context, b state.Batch) error {
	conn, err := w.s.session(ctx)
	if err != nil {
		return err
	}
	var q pgx.Batch
	q.Queue(`BEGIN`)
	// A run whose lock was lost (its session ended, another run took it)
	// writes nothing over the other run's state.
	q.Queue(`SELECT gantry_fence($1, $2)`, w.stack, w.runID)
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
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == errFenced {
		return fmt.Errorf("the state in %s was not written: this run no longer holds the stack's lock (%s)", w.s.redacted, pe.Message)
	}
	// A transaction that failed is rolled back; a connection that broke is
	// opened again by the next write, which the recorder makes a full one.
	w.s.dropSession(conn)
	return fmt.Errorf("write the state to %s: %w", w.s.redacted, w.s.scrub(err))
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
