package plan

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/secret"
	"github.com/gantry-dev/gantry/internal/state"
)

var update = flag.Bool("update", false, "rewrite the golden files from the actual output")

// testRuntime loads a stack (and its state, when there is one) the way the
// commands do, without running anything.
func testRuntime(t *testing.T, dir string) *Runtime {
	t.Helper()
	res, diags := elaborate.Elaborate(filepath.Join(dir, "hub.yaml"), elaborate.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	g, diags := BuildGraph(res)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	st, err := state.ReadFile(filepath.Join(dir, "hub.yaml.state"))
	if err != nil {
		t.Fatal(err)
	}
	in := params.LockInput{Stack: res.Stack, Env: func(string) (string, bool) { return "", false }, DeploymentID: "0123456789abcdef"}
	if st != nil {
		in.State = st.Parameters
	}
	locked, diags := params.Lock(in)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	return &Runtime{
		Res: res, Graph: g, Locked: locked, Outputs: NewOutputIndex(res, g, st), Before: st,
		Masker: secret.NewMasker(), Provides: NewCapabilities(), Dirs: WorkspaceFor(filepath.Join(dir, "hub.yaml.state")),
		RunID: "test", Now: time.Now, StatePath: filepath.Join(dir, "hub.yaml.state"),
	}
}

// TestGoldenPlans renders the deploy and undeploy plans of the stacks under
// testdata/golden as text, JSON and DOT, and compares them with the files
// committed next to them (go test -update rewrites those).
func TestGoldenPlans(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/golden/*")
	if len(dirs) == 0 {
		t.Fatal("no golden stacks")
	}
	for _, dir := range dirs {
		for _, verb := range []string{VerbDeploy, VerbUndeploy} {
			t.Run(filepath.Base(dir)+"/"+verb, func(t *testing.T) {
				rt := testRuntime(t, dir)
				p, diags := Build(rt, BuildOptions{Verb: verb})
				if diags.HasErrors() {
					t.Fatal(diags.Err())
				}
				renders := map[string]func(*bytes.Buffer) error{
					".txt":  func(b *bytes.Buffer) error { return p.WriteText(b, RenderOptions{}) },
					".json": func(b *bytes.Buffer) error { return p.WriteJSON(b) },
					".dot":  func(b *bytes.Buffer) error { return p.WriteDOT(b) },
				}
				for ext, render := range renders {
					var b bytes.Buffer
					if err := render(&b); err != nil {
						t.Fatal(err)
					}
					golden := filepath.Join(dir, "plan-"+verb+ext)
					if *update {
						if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
							t.Fatal(err)
						}
						continue
					}
					want, err := os.ReadFile(golden)
					if err != nil {
						t.Fatalf("%v (run go test -update to create it)", err)
					}
					if diff := cmp.Diff(string(want), b.String()); diff != "" {
						t.Errorf("%s differs (-want +got):\n%s", golden, diff)
					}
				}
			})
		}
	}
}
