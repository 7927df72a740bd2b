package landscape

import (
	"os"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// TestFindDefsSaysWhatItCannotRead: a folder below the components that
// cannot be read (here: deeper than the system's path limit) may hold
// definitions: it is said, not skipped — the landscape deployed nothing
// and said so with exit 0.
func TestFindDefsSaysWhatItCannotRead(t *testing.T) {
	base := t.TempDir()
	root, err := os.OpenRoot(base)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.Repeat("d", 250)
	for range 20 { // 20 × 251 bytes: past PATH_MAX (4,096)
		if err := root.Mkdir(name, 0o755); err != nil {
			t.Fatal(err)
		}
		next, err := root.OpenRoot(name)
		root.Close()
		if err != nil {
			t.Fatal(err)
		}
		root = next
	}
	if err := root.WriteFile("component.yaml", []byte("component: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root.Close()
	var diags manifest.Diagnostics
	findDefs(base, "component.yaml", "component", &diags, func(name, dir, path string) string { return "" })
	if len(diags) == 0 || !strings.Contains(diags[0].Msg, "cannot look for components here") {
		t.Errorf("diagnostics %v, want the folder it cannot read said", diags)
	}
}
