package action

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/plan"
)

// corpusStacks are the real Hub stacks of ../shared/corpus/hub (outside
// the repository) with their params files, as scripts/hub-corpus.sh
// assembles them, and the variables their parameters read.
var corpusStacks = []struct {
	name   string
	params []string
}{
	{"stack-ml-eks", []string{"params.yaml"}},
	{"devops-platform-eks-template", []string{"params.yaml"}},
}

// corpusEnv gives the corpus stacks' user parameters values.
var corpusEnv = []string{"AWS_REGION", "HUB_DOMAIN_NAME", "HUB_STACK_NAME", "HUB_STATE_BUCKET", "HUB_STATE_REGION",
	"COMPONENT_MINIO_ACCESS_KEY", "COMPONENT_MINIO_SECRET_KEY", "COMPONENT_MYSQL_ROOT_PASSWORD", "COMPONENT_MYSQL_PASSWORD",
	"BASE_DOMAIN", "CLUSTER_NAME", "PLATFORM_NAME", "STATE_BUCKET", "STATE_REGION"}

// TestCorpusComponentGraphs: the component graph of each real Hub stack
// has one box per component of the stack — no bookkeeping step, no flight
// group — and only ties between them. The corpus is not part of the
// repository: without it the test skips.
func TestCorpusComponentGraphs(t *testing.T) {
	corpus, _ := filepath.Abs("../../../shared/corpus/hub/stacks")
	if _, err := os.Stat(corpus); err != nil {
		t.Skipf("no Hub corpus at %s", corpus)
	}
	// The tools the stacks require are on PATH (they are never run: the
	// plan only checks that they are there).
	tools := t.TempDir()
	for _, tool := range []string{"kubectl", "helm", "aws", "terraform", "vault", "az", "gcloud"} {
		if err := os.WriteFile(filepath.Join(tools, tool), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", tools+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, v := range corpusEnv {
		t.Setenv(v, strings.ToLower(v))
	}
	for _, s := range corpusStacks {
		t.Run(s.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), s.name)
			if err := os.CopyFS(dir, os.DirFS(filepath.Join(corpus, s.name))); err != nil {
				t.Fatal(err)
			}
			// The corpus has no implementations: each component gets a
			// stub Makefile, as scripts/hub-corpus.sh gives them.
			err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
				if err == nil && d.Name() == "hub-component.yaml" {
					err = os.WriteFile(filepath.Join(filepath.Dir(path), "Makefile"), []byte("deploy:\n\t@true\nundeploy:\n\t@true\n"), 0o644)
				}
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			inDir(t, dir)
			p, err := (&Plan{Source: Source{Manifest: "hub.yaml", ParamsFiles: s.params}, Verb: plan.VerbDeploy}).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			st, err := Load(Source{Manifest: "hub.yaml", ParamsFiles: s.params}, "")
			if err != nil {
				t.Fatal(err)
			}
			g := p.ComponentGraph()
			var dot strings.Builder
			if err := g.WriteDOT(&dot); err != nil {
				t.Fatal(err)
			}
			boxes := 0
			for _, line := range strings.Split(dot.String(), "\n") {
				if strings.Contains(line, " [label=") && !strings.Contains(line, " -> ") {
					boxes++
				}
			}
			if boxes != len(st.Res.Components) || len(g.Nodes) != len(st.Res.Components) {
				t.Errorf("%d boxes for %d components:\n%s", boxes, len(st.Res.Components), dot.String())
			}
			for _, c := range st.Res.Components {
				if g.Node(c.Meta.Name) == nil {
					t.Errorf("no box for %s", c.Meta.Name)
				}
			}
			t.Logf("%s: %d components, %d ties (%d implied ones left out); the step graph has %d nodes and %d edges",
				s.name, len(g.Nodes), len(g.Edges), g.Reduced, len(p.Nodes), len(p.Edges))
		})
	}
}
