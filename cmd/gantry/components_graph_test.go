package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/cli"
)

// TestExampleComponentGraphs renders the component graph of each stack of
// examples/ as DOT and Mermaid (gantry plan --output dot|mermaid --graph
// components, with the example's params.yaml when it has one) and
// compares them with testdata/components/<example>.<ext>
// (go test -run TestExampleComponentGraphs -update rewrites those). Each
// example is copied first: a state a user's deploy left in examples/
// would change what the plan says.
func TestExampleComponentGraphs(t *testing.T) {
	examples, err := filepath.Glob("../../examples/*/hub.yaml")
	if err != nil || len(examples) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, env := range []string{"APP_ENV", "DEMO_NAMESPACE", "KUBECONFIG"} {
		t.Setenv(env, "")
		os.Unsetenv(env)
	}
	for _, manifest := range examples {
		name := filepath.Base(filepath.Dir(manifest))
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			if err := os.CopyFS(dir, os.DirFS(filepath.Dir(manifest))); err != nil {
				t.Fatal(err)
			}
			for _, leftover := range []string{"hub.yaml.state", "hub.yaml.elaborate", ".gantry", "demo-data"} {
				if err := os.RemoveAll(filepath.Join(dir, leftover)); err != nil {
					t.Fatal(err)
				}
			}
			for ext, output := range map[string]string{".dot": "dot", ".mermaid": "mermaid"} {
				var stdout, stderr bytes.Buffer
				args := []string{"plan", filepath.Join(dir, "hub.yaml")}
				// An example whose README runs it with params.yaml (the
				// nested one: its config and resources) is drawn with it.
				if _, err := os.Stat(filepath.Join(dir, "params.yaml")); err == nil {
					args = append(args, filepath.Join(dir, "params.yaml"))
				}
				args = append(args, "--output", output, "--graph", "components")
				if code := cli.Main(context.Background(), args, strings.NewReader(""), &stdout, &stderr); code != 0 {
					t.Fatalf("gantry %s: exit %d\n%s", strings.Join(args, " "), code, stderr.String())
				}
				got := strings.ReplaceAll(stdout.String(), dir, "<example>")
				golden := filepath.Join("testdata", "components", name+ext)
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test -run TestExampleComponentGraphs -update to create it)", err)
				}
				if diff := cmp.Diff(string(want), got); diff != "" {
					t.Errorf("%s differs (-want +got):\n%s", golden, diff)
				}
			}
		})
	}
}
