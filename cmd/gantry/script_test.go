package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/cli"
	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/state/pgstate/pgtest"
)

var update = flag.Bool("update", false, "rewrite the expected output in testdata/script from the actual output")

func TestMain(m *testing.M) {
	// A race-detecting gantry (go test -race) sleeps a second as it exits
	// (GORACE's atexit_sleep_ms, 1000 by default) for late reports: every
	// gantry a scenario or a test starts, and every child gantry starts
	// (the output keeper, spiff's), took a second more, and the suite
	// most of its time. Reports come as races happen, not at exit.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(testscript.RunMain(m, map[string]func() int{
		"gantry": func() int {
			return cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
		},
		"hubsecrets": hubSecrets,
	}))
}

// TestScripts runs the end-to-end scenarios of testdata/script: one txtar file
// per scenario with its inputs, commands and expected output.
func TestScripts(t *testing.T) {
	testscript.Run(t, scriptParams("../../testdata/script", nil))
}

// TestScriptsOnPostgres runs the same scenarios with the state in
// PostgreSQL: GANTRY_STATE names a database of the scenario's own, which is
// every command's default -s. A scenario about the state file itself (its
// bytes, its journal, its lock file) says [pgstate] skip.
func TestScriptsOnPostgres(t *testing.T) {
	dsn := pgtest.Server(t)
	testscript.Run(t, scriptParams("../../testdata/script", func(env *testscript.Env) error {
		db, drop, err := pgtest.NewDatabase(dsn)
		if err != nil {
			return err
		}
		env.Defer(drop)
		env.Setenv("GANTRY_STATE", db)
		return nil
	}))
}

// scriptParams are the parameters of the scenarios in dir; more adds to
// their setup, and a scenario can tell it by the condition [pgstate].
func scriptParams(dir string, more func(env *testscript.Env) error) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		UpdateScripts:       *update && more == nil,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("NO_COLOR", "1")
			env.Setenv("GORACE", os.Getenv("GORACE")) // TestMain's
			root, err := filepath.Abs("../..")
			if err != nil {
				return err
			}
			env.Setenv("REPO", root)
			if more != nil {
				return more(env)
			}
			return nil
		},
		Condition: func(cond string) (bool, error) {
			if cond == "pgstate" {
				return more != nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":  cmdExitCode,
			"copydir":   cmdCopyDir,
			"waitfile":  cmdWaitFile,
			"httpserve": cmdHTTPServe,
			"statedoc":  cmdStateDoc,
		},
	}
}

// cmdStateDoc writes the state document of the scenario's stack to FILE,
// from whichever backend holds it (GANTRY_STATE, else hub.yaml.state): a
// scenario checks what the state records the same way on both.
//
//	statedoc current.state
func cmdStateDoc(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: statedoc FILE")
	}
	location := ts.Getenv("GANTRY_STATE")
	if location == "" {
		location = ts.MkAbs("hub.yaml.state")
	}
	store, _, err := action.OpenState(location, "", "")
	ts.Check(err)
	defer store.Close()
	files, err := store.Read(context.Background())
	ts.Check(err)
	st, err := files.Decode(store.String())
	ts.Check(err)
	if st == nil {
		ts.Fatalf("no state at %s", store)
	}
	doc, err := state.Encode(st)
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), doc, 0o600))
}

// cmdExitCode runs a command and checks its exit code:
//
//	exitcode 2 gantry validate hub.yaml
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exitcode CODE command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: bad code %q", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("exitcode: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited with code %d, want %d", args[1], got, want)
	}
}

// cmdCopyDir copies a directory tree, keeping file modes:
//
//	copydir $REPO/examples/quickstart qs
func cmdCopyDir(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: copydir SRC DST")
	}
	src, dst := args[0], ts.MkAbs(args[1])
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".gantry" {
				return filepath.SkipDir
			}
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	ts.Check(err)
}

// cmdWaitFile waits up to 60 seconds for a file to exist, or for a file
// matching a glob to hold a text (a run's log saying it waits):
//
//	waitfile started
//	waitfile '.gantry/runs/*/two.log' 'waiting for the folder'
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: waitfile PATH-or-GLOB [TEXT]")
	}
	pattern := ts.MkAbs(args[0])
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		matches, _ := filepath.Glob(pattern)
		for _, m := range matches {
			if len(args) == 1 {
				return
			}
			if data, err := os.ReadFile(m); err == nil && strings.Contains(string(data), args[1]) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(args) == 2 {
		ts.Fatalf("no file %s held %q within 60s", args[0], args[1])
	}
	ts.Fatalf("%s did not appear within 60s", args[0])
}

// cmdHTTPServe starts an HTTP server on 127.0.0.1 for the rest of the script
// and sets $HTTP_ADDR to its host:port. Paths answer 200, except /down (503)
// and /after/N, which answers 503 to its first N requests and then ok (by
// count, not time: a loaded machine must not skip the 503s).
//
//	httpserve
func cmdHTTPServe(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: httpserve")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	var mu sync.Mutex
	seen := map[string]int{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/down":
			w.WriteHeader(http.StatusServiceUnavailable)
		case len(r.URL.Path) > 7 && r.URL.Path[:7] == "/after/":
			n, _ := strconv.Atoi(r.URL.Path[7:])
			mu.Lock()
			seen[r.URL.Path]++
			early := seen[r.URL.Path] <= n
			mu.Unlock()
			if early {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			w.Write([]byte("ok\n"))
		default:
			w.Write([]byte("ok\n"))
		}
	})}
	go srv.Serve(l)
	ts.Defer(func() { srv.Close() })
	ts.Setenv("HTTP_ADDR", l.Addr().String())
}
