package main

import (
	"net/url"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/gantry-dev/gantry/internal/state/pgstate/pgtest"
)

// TestPostgresScripts runs the scenarios of testdata/pg with the state in
// PostgreSQL: each in a database of its own, dropped afterwards. $PGSTATE is
// its URL and $PGPASSWORD_TEXT the password in it, which no output may show.
func TestPostgresScripts(t *testing.T) {
	dsn := pgtest.Server(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "../../testdata/pg",
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			root, err := filepath.Abs("../..")
			if err != nil {
				return err
			}
			env.Setenv("REPO", root)
			db, drop, err := pgtest.NewDatabase(dsn)
			if err != nil {
				return err
			}
			env.Defer(drop)
			u, _ := url.Parse(db)
			pw, _ := u.User.Password()
			env.Setenv("PGSTATE", db)
			env.Setenv("PGPASSWORD_TEXT", pw)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode": cmdExitCode,
			"waitfile": cmdWaitFile,
		},
	})
}
