package build_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/plan/resolve"
	"github.com/gantry-dev/gantry/internal/state"
)

var update = flag.Bool("update", false, "rewrite the golden files from the actual output")

// testInput loads a stack (and its state, when there is one) the way the
// commands do, and gathers its facts, without running anything.
func testInput(t *testing.T, dir, verb string) *build.Input {
	t.Helper()
	res, diags := elaborate.Elaborate(filepath.Join(dir, "hub.yaml"), elaborate.Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	g, diags := build.BuildGraph(res)
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
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	facts, err := resolve.Facts(res, st, resolve.Options{Verbs: []string{verb}, StateDir: abs})
	if err != nil {
		t.Fatal(err)
	}
	return &build.Input{Res: res, Graph: g, Before: st, Locked: locked, Facts: facts, StateDir: abs,
		Options: build.Options{Verb: verb}}
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
		for _, verb := range []string{plan.VerbDeploy, plan.VerbUndeploy} {
			t.Run(filepath.Base(dir)+"/"+verb, func(t *testing.T) {
				in := testInput(t, dir, verb)
				p, diags := build.Build(in)
				if diags.HasErrors() {
					t.Fatal(diags.Err())
				}
				renders := map[string]func(*bytes.Buffer) error{
					".txt":  func(b *bytes.Buffer) error { return p.WriteText(b, plan.RenderOptions{}) },
					".json": func(b *bytes.Buffer) error { return p.WriteJSON(b) },
					".dot":  func(b *bytes.Buffer) error { return p.WriteDOT(b) },
				}
				// The run folder's copy is written a piece at a time, on
				// one line: the same JSON.
				var indented, compact, want bytes.Buffer
				if err := p.EncodeJSON(&indented, true); err != nil {
					t.Fatal(err)
				}
				if err := p.EncodeJSON(&compact, false); err != nil {
					t.Fatal(err)
				}
				if err := json.Compact(&want, indented.Bytes()); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want.String()+"\n", compact.String()); diff != "" {
					t.Errorf("the compact plan differs from the indented one (-want +got):\n%s", diff)
				}
				for ext, render := range renders {
					var b bytes.Buffer
					if err := render(&b); err != nil {
						t.Fatal(err)
					}
					// The golden files hold the stack's folder as <stack>,
					// whatever the checkout's.
					got := strings.ReplaceAll(b.String(), in.StateDir, "<stack>")
					golden := filepath.Join(dir, "plan-"+verb+ext)
					if *update {
						if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
							t.Fatal(err)
						}
						continue
					}
					want, err := os.ReadFile(golden)
					if err != nil {
						t.Fatalf("%v (run go test -update to create it)", err)
					}
					if diff := cmp.Diff(string(want), got); diff != "" {
						t.Errorf("%s differs (-want +got):\n%s", golden, diff)
					}
				}
			})
		}
	}
}
