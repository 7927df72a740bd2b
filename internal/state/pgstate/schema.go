package pgstate

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// migrations are the schema's versions, each applied once, in order, in
// one transaction with the version it brings (gantry_schema). A database
// whose schema is newer than this gantry knows is refused, not changed.
var migrations = []string{
	// 1: a row per stack (its stack-level fields), a row per component
	// (its record), who holds each stack's lock, and the check every
	// write makes that its run still holds it.
	`CREATE TABLE gantry_stacks (
		stack   text PRIMARY KEY,
		header  bytea NOT NULL,
		updated timestamptz NOT NULL DEFAULT now()
	);
	CREATE TABLE gantry_components (
		stack  text NOT NULL REFERENCES gantry_stacks (stack) ON DELETE CASCADE,
		name   text NOT NULL,
		record bytea NOT NULL,
		PRIMARY KEY (stack, name)
	);
	CREATE TABLE gantry_locks (
		stack       text PRIMARY KEY,
		run_id      text NOT NULL,
		holder      jsonb NOT NULL,
		session_pid integer NOT NULL,
		since       timestamptz NOT NULL DEFAULT now()
	);
	CREATE FUNCTION gantry_fence(p_stack text, p_run text, p_key bigint) RETURNS void
	LANGUAGE plpgsql AS $$
	DECLARE
		v_pid integer;
	BEGIN
		SELECT session_pid INTO v_pid FROM gantry_locks
			WHERE stack = p_stack AND run_id = p_run FOR SHARE;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'the lock of stack % is no longer held by run %', p_stack, p_run
				USING ERRCODE = 'GL001';
		END IF;
		IF NOT EXISTS (SELECT 1 FROM pg_locks
			WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND pid = v_pid
			  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
			  AND classid = ((p_key >> 32) & 4294967295)::oid
			  AND objid = (p_key & 4294967295)::oid) THEN
			RAISE EXCEPTION 'the lock session of run % on stack % is gone', p_run, p_stack
				USING ERRCODE = 'GL002';
		END IF;
	END $$;`,
	// 2: runs on Temporal workers (docs/temporal.md): a lock a workflow
	// holds (no session: every write checks the run id), the run's bundle
	// the workers rebuild it from, its log lines on their way to the
	// client.
	`ALTER TABLE gantry_locks ADD COLUMN workflow text;
	CREATE OR REPLACE FUNCTION gantry_fence(p_stack text, p_run text, p_key bigint) RETURNS void
	LANGUAGE plpgsql AS $$
	DECLARE
		v_pid integer;
		v_workflow text;
	BEGIN
		SELECT session_pid, workflow INTO v_pid, v_workflow FROM gantry_locks
			WHERE stack = p_stack AND run_id = p_run FOR SHARE;
		IF NOT FOUND THEN
			RAISE EXCEPTION 'the lock of stack % is no longer held by run %', p_stack, p_run
				USING ERRCODE = 'GL001';
		END IF;
		IF v_workflow IS NOT NULL THEN
			RETURN;
		END IF;
		IF NOT EXISTS (SELECT 1 FROM pg_locks
			WHERE locktype = 'advisory' AND granted AND objsubid = 1 AND pid = v_pid
			  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
			  AND classid = ((p_key >> 32) & 4294967295)::oid
			  AND objid = (p_key & 4294967295)::oid) THEN
			RAISE EXCEPTION 'the lock session of run % on stack % is gone', p_run, p_stack
				USING ERRCODE = 'GL002';
		END IF;
	END $$;
	CREATE TABLE gantry_runs (
		stack   text NOT NULL,
		run_id  text NOT NULL,
		bundle  bytea NOT NULL,
		created timestamptz NOT NULL DEFAULT now(),
		PRIMARY KEY (stack, run_id)
	);
	CREATE TABLE gantry_run_lines (
		seq    bigserial PRIMARY KEY,
		stack  text NOT NULL,
		run_id text NOT NULL,
		step   text NOT NULL,
		kind   smallint NOT NULL,
		body   text NOT NULL,
		at     timestamptz NOT NULL DEFAULT now()
	);
	CREATE INDEX gantry_run_lines_run ON gantry_run_lines (stack, run_id, seq);`,
}

// schemaLockKey serializes gantry processes migrating the same database.
const schemaLockKey int64 = 0x67616e7472790001 // "gantry" 0001

// The SQLSTATEs gantry_fence raises: another run took the lock (the run
// must stop writing), or the run's lock session is gone and not taken back
// yet (a server restart: the write waits for it).
const (
	errFenced     = "GL001"
	errLockRegain = "GL002"
)

// migrate brings the database's schema to the newest version this gantry
// knows. A schema that is current is only read: a role that may not create
// tables reads and writes states all the same.
func migrate(ctx context.Context, conn *pgx.Conn) error {
	var current int
	if err := conn.QueryRow(ctx, `SELECT version FROM gantry_schema`).Scan(&current); err == nil && current == len(migrations) {
		return nil
	}
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, schemaLockKey); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS gantry_schema (version integer NOT NULL)`); err != nil {
			return err
		}
		var version int
		err := tx.QueryRow(ctx, `SELECT version FROM gantry_schema`).Scan(&version)
		switch {
		case err == pgx.ErrNoRows:
			if _, err := tx.Exec(ctx, `INSERT INTO gantry_schema (version) VALUES (0)`); err != nil {
				return err
			}
		case err != nil:
			return err
		}
		if version > len(migrations) {
			return fmt.Errorf("the database's gantry schema is version %d; this gantry knows up to version %d: use a newer gantry", version, len(migrations))
		}
		for v := version; v < len(migrations); v++ {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return fmt.Errorf("schema version %d: %w", v+1, err)
			}
		}
		if version < len(migrations) {
			_, err = tx.Exec(ctx, `UPDATE gantry_schema SET version = $1`, len(migrations))
		}
		return err
	})
}
