package main

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/gantry-dev/gantry/internal/state/pgstate"
	"github.com/gantry-dev/gantry/internal/state/pgstate/pgtest"
)

// TestPostgresScripts runs the scenarios of testdata/pg with the state in
// PostgreSQL: each in a database of its own, dropped afterwards. $PGSTATE is
// its URL, $PGPASSWORD_TEXT the password in it, which no output may show,
// $PGWRONG the URL with another password and $PGNODB with a database that
// is not there, and a scenario that restarts its server starts one of its own (pgserve),
// so that the others, which run in parallel, keep theirs.
func TestPostgresScripts(t *testing.T) {
	dsn := pgtest.Server(t)
	p := scriptParams("../../testdata/pg", func(env *testscript.Env) error {
		db, drop, err := pgtest.NewDatabase(dsn)
		if err != nil {
			return err
		}
		env.Defer(drop)
		u, _ := url.Parse(db)
		pw, _ := u.User.Password()
		env.Setenv("PGSTATE", db)
		env.Setenv("PGPASSWORD_TEXT", pw)
		wrong := *u
		wrong.User = url.UserPassword(u.User.Username(), "not-"+pw)
		env.Setenv("PGWRONG", wrong.String())
		nodb := *u
		nodb.Path = "/gantry_no_such_database"
		env.Setenv("PGNODB", nodb.String())
		return nil
	})
	p.Cmds["pgserve"] = cmdPGServe
	p.Cmds["pgsteal"] = cmdPGSteal
	testscript.Run(t, p)
}

// cmdPGServe starts a PostgreSQL server of the scenario's own
// (scripts/pg/start.sh), sets $PGOWN to its DSN, $PGADMIN to its
// superuser's, $PGPASSWORD_TEXT to its password and $PGDIR to its folder
// (scripts/pg/restart.sh $PGDIR restarts it), and stops and removes it when
// the scenario ends. The folder is not in $WORK, which the server's user may
// not enter.
//
//	pgserve
func cmdPGServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: pgserve")
	}
	dir, err := os.MkdirTemp("", "gantry-pg-")
	ts.Check(err)
	scripts := filepath.Join(ts.Getenv("REPO"), "scripts", "pg")
	ts.Defer(func() {
		_ = exec.Command(filepath.Join(scripts, "stop.sh"), dir).Run()
		_ = os.RemoveAll(dir)
	})
	out, err := exec.Command(filepath.Join(scripts, "start.sh"), dir).CombinedOutput()
	if err != nil {
		ts.Fatalf("start a PostgreSQL server in %s: %v\n%s", dir, err, out)
	}
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(dir, name))
		ts.Check(err)
		return strings.TrimSpace(string(data))
	}
	ts.Setenv("PGOWN", read("dsn"))
	if u, err := url.Parse(read("dsn")); err == nil {
		pw, _ := u.User.Password()
		ts.Setenv("PGPASSWORD_TEXT", pw)
	}
	ts.Setenv("PGADMIN", read("admin_dsn"))
	ts.Setenv("PGDIR", dir)
}

// cmdPGSteal plays another run taking a stack's lock during an outage, on
// the scenario's own server (pgserve): gantry's sessions are cut and kept
// from coming back, the lock is taken and its holder record rewritten as
// run "thief", then gantry may connect again. The lock is held until the
// scenario ends.
//
//	pgsteal STACK
func cmdPGSteal(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: pgsteal STACK")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, ts.Getenv("PGADMIN"))
	ts.Check(err)
	ts.Defer(func() { conn.Close(ctx) })
	dsn, err := url.Parse(ts.Getenv("PGOWN"))
	ts.Check(err)
	db := strings.TrimPrefix(dsn.Path, "/")
	exec := func(sql string, args ...any) {
		if _, err := conn.Exec(ctx, sql, args...); err != nil {
			ts.Fatalf("%s: %v", sql, err)
		}
	}
	exec(`ALTER ROLE gantry CONNECTION LIMIT 0`)
	exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'gantry'`)
	// Another database's connection cannot take this one's advisory lock:
	// the thief works in the stack's database.
	thief, err := pgx.Connect(ctx, strings.Replace(ts.Getenv("PGADMIN"), "/postgres?", "/"+db+"?", 1))
	ts.Check(err)
	ts.Defer(func() { thief.Close(ctx) })
	if _, err := thief.Exec(ctx, `SELECT pg_advisory_lock($1)`, pgstate.LockKey(args[0])); err != nil {
		ts.Fatalf("take the lock: %v", err)
	}
	if _, err := thief.Exec(ctx, `UPDATE gantry_locks SET run_id = 'thief', holder = '{"runId":"thief","host":"elsewhere","command":"gantry deploy"}', session_pid = pg_backend_pid() WHERE stack = $1`, args[0]); err != nil {
		ts.Fatalf("rewrite the holder: %v", err)
	}
	exec(`ALTER ROLE gantry CONNECTION LIMIT -1`)
}
