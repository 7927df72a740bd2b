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

// childEnv marks the test's children, which run with GOGC or GOMEMLIMIT
// set to the values below, or allocate until the first collection.
const childEnv = "GANTRY_GCPACE_TEST_CHILD"

// The values TestPaceWithOneVariableSet gives its children.
const (
	userPercent = 150
	userLimit   = 1 << 30
)

// TestPaceSetAtInit: with neither GOGC nor GOMEMLIMIT set, the collector
// is off until the runtime holds firstCollection, and from the first
// collection on the pace is percent under the soft limit; in the children
// of TestPaceWithOneVariableSet, the variable set keeps its value and the
// other is set as without it.
func TestPaceSetAtInit(t *testing.T) {
	gogc, limit := os.Getenv("GOGC") == "", os.Getenv("GOMEMLIMIT") == ""
	if !gogc || !limit {
		if os.Getenv(childEnv) == "" {
			t.Skip("GOGC or GOMEMLIMIT is set: TestPaceWithOneVariableSet covers it")
		}
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
		return
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.NumGC == 0 {
		// Read without changing: a negative limit only reads it, and -1
		// is the percent the collector is off at.
		if got := debug.SetMemoryLimit(-1); got != firstCollection {
			t.Fatalf("before the first collection: memory limit %d, want %d", got, firstCollection)
		}
		if got := debug.SetGCPercent(-1); got != -1 {
			t.Fatalf("before the first collection: GC percent %d, want -1 (off)", got)
		}
		runtime.GC()
	}
	waitForPace(t)
}

// waitForPace waits until the finalizer has set the pace after the first
// collection (it runs on a goroutine of its own), then checks it. The
// minute only ends a test that would hang.
func waitForPace(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); debug.SetMemoryLimit(-1) == firstCollection; {
		if time.Now().After(deadline) {
			t.Fatal("a collection ran and the pace was never set")
		}
		time.Sleep(time.Millisecond)
	}
	if got, want := debug.SetMemoryLimit(-1), softMemoryLimit(); got != want {
		t.Errorf("after the first collection: memory limit %d, want %d", got, want)
	}
	if got := debug.SetGCPercent(percent); got != percent {
		t.Errorf("after the first collection: GC percent %d, want %d", got, percent)
	}
}

// TestFirstCollectionAtTheLimit allocates garbage until the first
// collection (in a child: the test's own process may have collected) and
// checks that it came near firstCollection, not at Go's 4 MiB, and that the
// pace followed.
func TestFirstCollectionAtTheLimit(t *testing.T) {
	if os.Getenv(childEnv) != "allocate" {
		runChild(t, "allocate", "TestFirstCollectionAtTheLimit")
		return
	}
	var ms runtime.MemStats
	var sink []byte
	for i := 0; ; i++ {
		sink = make([]byte, 1<<20)
		sink[0] = byte(i)
		if i%8 != 0 {
			continue
		}
		runtime.ReadMemStats(&ms)
		if ms.NumGC > 0 || ms.TotalAlloc > 4*firstCollection {
			break
		}
	}
	_ = sink
	if ms.NumGC == 0 {
		t.Fatalf("no collection after %d MiB allocated", ms.TotalAlloc>>20)
	}
	// The runtime holds more than the heap (stacks, its own structures),
	// and the collection starts a little before the limit.
	if ms.TotalAlloc < firstCollection/2 {
		t.Fatalf("first collection after %d MiB allocated, want near %d MiB", ms.TotalAlloc>>20, firstCollection>>20)
	}
	waitForPace(t)
}

// TestPaceWithOneVariableSet runs TestPaceSetAtInit in children with GOGC
// or GOMEMLIMIT set.
func TestPaceWithOneVariableSet(t *testing.T) {
	if os.Getenv(childEnv) != "" {
		t.Skip("in a child")
	}
	for _, env := range []string{"GOGC=150", "GOMEMLIMIT=1GiB"} {
		t.Run(env, func(t *testing.T) {
			runChild(t, "variable", "TestPaceSetAtInit", env)
		})
	}
}

// runChild runs one test of this package in a child process, with the
// child mark and env, and fails unless it passed.
func runChild(t *testing.T, mark, test string, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v")
	cmd.Env = append(os.Environ(), "GOGC=", "GOMEMLIMIT=", childEnv+"="+mark)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+test) {
		t.Fatalf("%s %v: %v\n%s", test, env, err, out)
	}
}
