package plan_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLayering keeps the core light: the plan types, the executor, the
// displays and the report import no YAML, no expression language and no
// process code — only the plan leaf and small helpers of their own — so
// that they compile in seconds and know nothing of manifests or processes
// (DESIGN 11).
func TestLayering(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	allowed := map[string][]string{
		"github.com/gantry-dev/gantry/internal/plan":   {"dag", "jsonstr"},
		"github.com/gantry-dev/gantry/internal/engine": {"plan", "dag", "lines", "jsonstr"},
		// procstat (a leaf on the standard library) tells whether a run's
		// gantry still runs.
		"github.com/gantry-dev/gantry/internal/ui": {"plan", "dag", "lines", "secret", "jsonstr", "procstat"},
		// The report reads a run's folder: no manifest, no state.
		"github.com/gantry-dev/gantry/internal/report": {"plan", "dag", "lines", "secret", "ui", "atomicfile", "jsonstr", "procstat"},
	}
	forbidden := []string{"os/exec", "goccy/go-yaml", "google/cel-go", "gopkg.in/yaml"}
	for pkg, own := range allowed {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				if strings.Contains(dep, f) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
			name, ok := strings.CutPrefix(dep, "github.com/gantry-dev/gantry/internal/")
			if !ok || dep == pkg {
				continue
			}
			found := false
			for _, o := range own {
				found = found || name == o
			}
			if !found {
				t.Errorf("%s depends on internal/%s (allowed: %v)", pkg, name, own)
			}
		}
	}
}

// TestHeavySDKsStayInTheirPlugins: client-go, kustomize, kstatus and the
// Helm SDK are compiled only for internal/plugin/kubernetes,
// internal/plugin/helm (which builds on the kubernetes plugin's stages) and
// the binary, and the Temporal SDK only for internal/engine/temporal (the
// second engine, docs/temporal.md), so that the core's tests (go test
// ./internal/...) build without them.
func TestHeavySDKsStayInTheirPlugins(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", "github.com/gantry-dev/gantry/internal/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	heavy := []string{"k8s.io/", "sigs.k8s.io/kustomize", "github.com/fluxcd/cli-utils", "helm.sh/", "go.temporal.io/", "github.com/nexus-rpc/"}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := fields[0]
		if strings.HasPrefix(pkg, "github.com/gantry-dev/gantry/internal/plugin/kubernetes") ||
			strings.HasPrefix(pkg, "github.com/gantry-dev/gantry/internal/plugin/helm") ||
			strings.HasPrefix(pkg, "github.com/gantry-dev/gantry/internal/engine/temporal") {
			continue
		}
		for _, dep := range fields[1:] {
			for _, h := range heavy {
				if strings.HasPrefix(dep, h) {
					t.Errorf("%s depends on %s: heavy SDKs belong in their plugin's package", pkg, dep)
				}
			}
		}
	}
}
