package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/state/pgstate/pgtest"
	"github.com/gantry-dev/gantry/internal/testenv"
)

// temporalServer is the test Temporal server's host:port, which
// scripts/test.sh starts (scripts/temporal/start.sh) and exports as
// GANTRY_TEST_TEMPORAL. Without one the test skips, except in CI, where it
// fails.
func temporalServer(t testing.TB) string {
	t.Helper()
	return testenv.Server(t, "GANTRY_TEST_TEMPORAL", "Temporal server", "scripts/temporal/start.sh DIR starts a server and writes its address to DIR/address")
}

// temporalEngine is an engine on the test server with a task queue of the
// caller's own: tests that run at once never take each other's steps.
func temporalEngine(addr string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "temporal://" + addr + "/default?queue=test-" + hex.EncodeToString(b[:])
}

// TestTemporalScripts runs the scenarios of testdata/temporal: plans run on
// `gantry worker` processes against the test Temporal server, with the state
// in a PostgreSQL database of the scenario's own ($GANTRY_STATE) and an
// engine on a task queue of its own ($GANTRY_ENGINE). startworker and
// stopworker start and stop workers; pgserve starts a PostgreSQL server of
// the scenario's own, for one that restarts it.
func TestTemporalScripts(t *testing.T) {
	addr := temporalServer(t)
	dsn := pgtest.Server(t)
	p := scriptParams("../../testdata/temporal", func(env *testscript.Env) error {
		db, drop, err := pgtest.NewDatabase(dsn)
		if err != nil {
			return err
		}
		env.Defer(drop)
		env.Setenv("GANTRY_STATE", db)
		env.Setenv("GANTRY_ENGINE", temporalEngine(addr))
		return nil
	})
	p.Cmds["startworker"] = cmdStartWorker
	p.Cmds["stopworker"] = cmdStopWorker
	p.Cmds["pgserve"] = cmdPGServe
	testscript.Run(t, p)
}

// scenarioWorkers are the running workers of each scenario, by name.
var (
	scenarioWorkersMu sync.Mutex
	scenarioWorkers   = map[*testscript.TestScript]map[string]*workerProcess{}
)

// cmdStartWorker starts `gantry worker` in the background, in the
// scenario's folder (or DIR), and waits until it takes steps; the scenario's
// end stops it. Its output is in $WORK/NAME.log.
//
//	startworker NAME [--dir DIR] [--parallel N]
func cmdStartWorker(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: startworker NAME [worker flags]")
	}
	dir := ts.Getenv("WORK")
	wp, err := startWorkerProcess(dir, ts.Getenv("GANTRY_ENGINE"), ts.Getenv("GANTRY_STATE"), filepath.Join(dir, args[0]+".log"), args[1:]...)
	ts.Check(err)
	scenarioWorkersMu.Lock()
	defer scenarioWorkersMu.Unlock()
	if scenarioWorkers[ts] == nil {
		scenarioWorkers[ts] = map[string]*workerProcess{}
		ts.Defer(func() {
			scenarioWorkersMu.Lock()
			ws := scenarioWorkers[ts]
			delete(scenarioWorkers, ts)
			scenarioWorkersMu.Unlock()
			for _, w := range ws {
				w.stop()
			}
		})
	}
	scenarioWorkers[ts][args[0]] = wp
}

// cmdStopWorker stops a worker: with -9, kills it at once.
//
//	stopworker [-9] NAME
func cmdStopWorker(ts *testscript.TestScript, neg bool, args []string) {
	kill := len(args) > 0 && args[0] == "-9"
	if kill {
		args = args[1:]
	}
	scenarioWorkersMu.Lock()
	var w *workerProcess
	if len(args) == 1 {
		w = scenarioWorkers[ts][args[0]]
		delete(scenarioWorkers[ts], args[0])
	}
	scenarioWorkersMu.Unlock()
	if neg || w == nil {
		ts.Fatalf("usage: stopworker [-9] NAME (a started worker)")
	}
	if kill {
		_ = w.cmd.Process.Kill()
		<-w.done // its own goroutine waits for it
	} else {
		w.stop()
	}
}

// workerProcess is a `gantry worker` running in the background.
type workerProcess struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// startWorkerProcess starts a worker in dir and waits until it says it
// takes steps.
func startWorkerProcess(dir, engine, stateURL, logFile string, args ...string) (*workerProcess, error) {
	f, err := os.Create(logFile)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("gantry", append([]string{"worker", "--engine", engine, "-s", stateURL, "--dir", dir}, args...)...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	w := &workerProcess{cmd: cmd, log: logFile, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); f.Close(); close(w.done) }()
	for deadline := time.Now().Add(2 * time.Minute); ; {
		data, _ := os.ReadFile(logFile)
		if strings.Contains(string(data), "taking steps") {
			return w, nil
		}
		select {
		case <-w.done:
			return nil, fmt.Errorf("the worker ended before it took steps:\n%s", data)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			w.stop()
			return nil, fmt.Errorf("the worker did not start taking steps:\n%s", data)
		}
	}
}

// stop stops the worker as Ctrl-C does, and kills it if it lingers.
func (w *workerProcess) stop() {
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(time.Minute):
		_ = w.cmd.Process.Kill()
		<-w.done
	}
}

// readStateAt reads the state document of a stack in a database.
func readStateAt(t *testing.T, location, stack string) *state.State {
	t.Helper()
	store, _, err := action.OpenState(location, "", stack)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	files, err := store.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st, err := files.Decode(store.String())
	if err != nil || st == nil {
		t.Fatalf("read the state at %s: %v", store, err)
	}
	return st
}
