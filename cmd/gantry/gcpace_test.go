package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestCollectorPaceSetBeforeTheSDKs: internal/gcpace sets the collector's
// pace before the packages that allocate the most initialise, and no
// collection runs before it does. The order of initialisation is fixed when
// the program is linked; a new dependency that sorts early and allocates
// megabytes in its initialiser would make this fail. It runs the test
// binary (testscript's "gantry"), which links the same packages and
// testing's.
func TestCollectorPaceSetBeforeTheSDKs(t *testing.T) {
	cmd := exec.Command("gantry", "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1,gctrace=1", "GOGC=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gantry version: %v\n%s", err, out)
	}
	order := map[string]int{}
	firstGC := -1
	for i, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 1 && f[0] == "init":
			order[f[1]] = i
		case len(f) > 0 && f[0] == "gc" && firstGC < 0:
			firstGC = i
		}
	}
	pace, ok := order["github.com/gantry-dev/gantry/internal/gcpace"]
	if !ok {
		t.Fatalf("gcpace is not initialised:\n%s", out)
	}
	if firstGC >= 0 && firstGC < pace {
		t.Errorf("a collection ran before gcpace set the pace:\n%s", out)
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
