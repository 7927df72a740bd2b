package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestCollectorPaceSetBeforeTheSDKs: internal/gcpace sets the collector's
// pace before the packages that allocate the most initialise, and what the
// packages initialised before it allocate stays well below the heap of
// Go's first collection (4 MiB). The order of initialisation is fixed when
// the program is linked; a new dependency that sorts early and allocates
// megabytes in its initialiser would make this fail. It runs the test
// binary (testscript's "gantry"), which links the same packages and
// testing's.
//
// It sums what the initialisers allocated (GODEBUG=inittrace) rather than
// looking for a collection before gcpace's: goroutines started by earlier
// initialisers allocate while the rest run, so on a loaded machine, where
// the initialisers take 55 ms instead of 8, a first collection came at
// 3 MB with only 2.0 MiB from the initialisers.
func TestCollectorPaceSetBeforeTheSDKs(t *testing.T) {
	cmd := exec.Command("gantry", "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "GOGC=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gantry version: %v\n%s", err, out)
	}
	// Budget is what the initialisers before gcpace may allocate: 2.0 MiB
	// today; the rest of the 4 MiB is the runtime's and those goroutines'.
	const budget = 5 << 19 // 2.5 MiB
	order := map[string]int{}
	before := 0 // bytes the initialisers before gcpace allocated
	for i, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "init" {
			continue
		}
		order[f[1]] = i
		if _, seen := order["github.com/gantry-dev/gantry/internal/gcpace"]; !seen {
			before += initBytes(f)
		}
	}
	pace, ok := order["github.com/gantry-dev/gantry/internal/gcpace"]
	if !ok {
		t.Fatalf("gcpace is not initialised:\n%s", out)
	}
	if before >= budget {
		t.Errorf("the packages initialised before gcpace allocate %d bytes, %d at most (Go's first collection comes at 4 MiB):\n%s", before, budget, out)
	}
	for _, sdk := range []string{
		"github.com/santhosh-tekuri/jsonschema/v6",
		"k8s.io/client-go/kubernetes/scheme",
		"go.temporal.io/api/workflowservice/v1",
	} {
		if at, ok := order[sdk]; !ok || at < pace {
			t.Errorf("%s initialised before gcpace (or not at all: %v)", sdk, ok)
		}
	}
}

// initBytes reads the bytes an inittrace line says its initialiser
// allocated ("init P @T ms, C ms clock, N bytes, A allocs"), 0 when it
// says none.
func initBytes(f []string) int {
	for i := 1; i < len(f); i++ {
		if strings.TrimSuffix(f[i], ",") == "bytes" {
			n, _ := strconv.Atoi(f[i-1])
			return n
		}
	}
	return 0
}
