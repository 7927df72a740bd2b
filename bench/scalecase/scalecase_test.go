package scalecase

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gantry-dev/gantry/internal/elaborate"
)

// TestShapesLoad: every shape is a stack gantry loads without a problem,
// with the number of components asked for (leaves, for nested), each with
// a deploy and an undeploy.
func TestShapesLoad(t *testing.T) {
	for _, shape := range Shapes {
		t.Run(shape, func(t *testing.T) {
			dir := t.TempDir()
			if err := Generate(dir, shape, 120); err != nil {
				t.Fatal(err)
			}
			res, diags := elaborate.Load(filepath.Join(dir, "hub.yaml"), elaborate.Options{})
			if diags.HasErrors() {
				t.Fatal(diags.Err())
			}
			if got := len(res.Components); got != 120 {
				t.Errorf("%d components, want 120", got)
			}
			for i, c := range res.Components {
				if c == nil {
					t.Fatal("a component without its manifest")
				}
				for _, verb := range []string{"deploy", "undeploy"} {
					path := filepath.Join(res.Stack.Components[i].Source.Dir, verb)
					if fi, err := os.Stat(path); err != nil || fi.Mode()&0o111 == 0 {
						t.Fatalf("%s: no executable %s (%v)", c.Meta.Name, path, err)
					}
				}
			}
		})
	}
	if err := Generate(t.TempDir(), "nope", 10); err == nil {
		t.Error("an unknown shape was generated")
	}
}
