package plan_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLayering keeps the core light: the plan types, the executor and the
// displays import no YAML, no expression language and no process code —
// only the plan leaf and small helpers of their own — so that they compile in
// seconds and know nothing of manifests or processes (DESIGN 11).
func TestLayering(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	allowed := map[string][]string{
		"github.com/gantry-dev/gantry/internal/plan":   {"dag"},
		"github.com/gantry-dev/gantry/internal/engine": {"plan", "dag", "lines"},
		"github.com/gantry-dev/gantry/internal/ui":     {"plan", "dag", "lines", "secret"},
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
