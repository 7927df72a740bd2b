package browsertest

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/report"
)

// writeFiles writes files under dir; files named deploy are executable.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if filepath.Base(name) == "deploy" {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
}

// failingStack: net, then db (mandatory, fails with a line that says why,
// after printing a secret) and the optional cache; api after db.
var failingStack = map[string]string{
	"hub.yaml": `version: 1
kind: stack
meta: {name: shop}
components:
  - name: net
    source: {dir: net}
  - name: db
    source: {dir: db}
    depends: [net]
  - name: api
    source: {dir: api}
    depends: [db]
  - name: cache
    source: {dir: cache}
    depends: [net]
lifecycle:
  parallel: 2
  optional: [cache]
parameters:
  - name: db.password
    value: Sup3r-Secret-Pw
  - name: db.host
    value: db.local
`,
	"net/hub-component.yaml":   "version: 1\nkind: component\nmeta: {name: net}\noutputs:\n  - name: net.cidr\n",
	"net/deploy":               "#!/bin/sh\necho creating network\nsleep 0.2\nprintf 'Outputs:\\nnet.cidr = 10.0.0.0/16\\n\\n'\n",
	"db/hub-component.yaml":    "version: 1\nkind: component\nmeta: {name: db}\nparameters:\n  - name: db.password\n    env: PASSWORD\n  - name: db.host\n    env: HOST\n  - name: net.cidr\n",
	"db/deploy":                "#!/bin/sh\necho \"connecting to $HOST with $PASSWORD\"\nfor i in 1 2 3; do echo \"retry $i\"; done\necho 'ERROR: connection refused to db.local:5432' >&2\nexit 3\n",
	"api/hub-component.yaml":   "version: 1\nkind: component\nmeta: {name: api}\n",
	"api/deploy":               "#!/bin/sh\necho api\n",
	"cache/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: cache}\n",
	"cache/deploy":             "#!/bin/sh\necho cache warming\nsleep 0.4\necho cache ready\n",
}

// deploy deploys the stack in dir in this process and returns the run's
// folder, where the run wrote its report.
func deploy(t *testing.T, dir string, parallel int) string {
	t.Helper()
	out, err := (&action.Deploy{RunOptions: action.RunOptions{Source: action.Source{Manifest: filepath.Join(dir, "hub.yaml")}, Parallel: parallel}}).Run(context.Background())
	if err != nil {
		t.Fatalf("deploy: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out.LogDir, report.ReportFile)); err != nil {
		t.Fatalf("the run wrote no report: %v", err)
	}
	return out.LogDir
}

// largeStack writes a stack of n components in a random DAG (each after up
// to 3 earlier ones, from a seed), each printing a few lines as it deploys.
func largeStack(t *testing.T, dir string, n int) {
	t.Helper()
	r := rand.New(rand.NewSource(1))
	var hub strings.Builder
	fmt.Fprintf(&hub, "version: 1\nkind: stack\nmeta: {name: large-%d}\ncomponents:\n", n)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&hub, "  - name: c%04d\n    source: {dir: comp}\n", i)
		seen := map[int]bool{}
		var deps []string
		for k := 0; i > 0 && k < 1+r.Intn(3); k++ {
			j := r.Intn(i)
			if !seen[j] {
				seen[j] = true
				deps = append(deps, fmt.Sprintf("c%04d", j))
			}
		}
		if len(deps) > 0 {
			fmt.Fprintf(&hub, "    depends: [%s]\n", strings.Join(deps, ", "))
		}
	}
	writeFiles(t, dir, map[string]string{
		"hub.yaml":                hub.String(),
		"comp/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: comp}\n",
		"comp/deploy":             "#!/bin/sh\necho \"deploying $COMPONENT_NAME\"\necho 'rendering templates'\necho 'applying 3 objects'\necho \"$COMPONENT_NAME ready\"\n",
	})
}
