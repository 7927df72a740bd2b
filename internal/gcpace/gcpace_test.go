package gcpace

import (
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// TestPaceSetAtInit: with neither GOGC nor GOMEMLIMIT set, the collector
// is off until the runtime holds firstCollection, and from the first
// collection on the pace is percent under the soft limit; each variable
// set keeps its own value and the other is set as before.
func TestPaceSetAtInit(t *testing.T) {
	gogc, limit := os.Getenv("GOGC") == "", os.Getenv("GOMEMLIMIT") == ""
	if gogc && limit {
		// Read without changing: a negative limit only reads it, and -1
		// is the percent the collector is off at.
		if debug.SetMemoryLimit(-1) == firstCollection {
			if got := debug.SetGCPercent(-1); got != -1 {
				t.Fatalf("before the first collection: GC percent %d, want -1 (off)", got)
			}
			runtime.GC()
			// The finalizer runs on its own goroutine after the collection;
			// the minute only ends a test that would hang.
			for deadline := time.Now().Add(time.Minute); debug.SetMemoryLimit(-1) == firstCollection; {
				if time.Now().After(deadline) {
					t.Fatal("a collection ran and the pace was never set")
				}
				time.Sleep(time.Millisecond)
			}
		}
		// After it (or in a second run of the test, -count).
		if got, want := debug.SetMemoryLimit(-1), softMemoryLimit(); got != want {
			t.Errorf("after the first collection: memory limit %d, want %d", got, want)
		}
		if got := debug.SetGCPercent(percent); got != percent {
			t.Errorf("after the first collection: GC percent %d, want %d", got, percent)
		}
		return
	}
	// The runtime read the variable set; the initialiser left it alone.
	wantPercent, wantLimit := percent, softMemoryLimit()
	if !gogc {
		wantPercent = userPercent
	}
	if !limit {
		wantLimit = userLimit
	}
	if got := debug.SetGCPercent(wantPercent); got != wantPercent {
		t.Errorf("GOGC=%q GOMEMLIMIT=%q: GC percent %d, want %d", os.Getenv("GOGC"), os.Getenv("GOMEMLIMIT"), got, wantPercent)
	}
	if got := debug.SetMemoryLimit(-1); got != wantLimit {
		t.Errorf("GOGC=%q GOMEMLIMIT=%q: memory limit %d, want %d", os.Getenv("GOGC"), os.Getenv("GOMEMLIMIT"), got, wantLimit)
	}
}

// The values TestPaceWithOneVariableSet gives its children.
const (
	userPercent = 150
	userLimit   = 1 << 30
)

// TestPaceWithOneVariableSet runs the test again in child processes with
// GOGC or GOMEMLIMIT set, whose paths the test above takes only when the
// environment says so.
func TestPaceWithOneVariableSet(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("a child, or a test run with GOGC or GOMEMLIMIT set")
	}
	for _, env := range []string{"GOGC=150", "GOMEMLIMIT=1GiB"} {
		t.Run(env, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestPaceSetAtInit$", "-test.v")
			cmd.Env = append(os.Environ(), env)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestPaceSetAtInit") {
				t.Fatalf("%s: %v\n%s", env, err, out)
			}
		})
	}
}
