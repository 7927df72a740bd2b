package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestCollectorPaceSetBeforeTheSDKs: internal/gcpace sets the collector's
// pace before the SDKs' package initialisers allocate (Go initialises the
// ready package whose path sorts first): renamed to sort after them, it
// would leave them to collect at the default pace.
func TestCollectorPaceSetBeforeTheSDKs(t *testing.T) {
	cmd := exec.Command("gantry", "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gantry version: %v\n%s", err, out)
	}
	order := map[string]int{}
	for i, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "init" {
			order[f[1]] = i
		}
	}
	pace, ok := order["github.com/gantry-dev/gantry/internal/gcpace"]
	if !ok {
		t.Fatalf("gcpace is not initialised:\n%s", out)
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
