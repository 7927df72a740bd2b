package landscape

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/gantry-dev/gantry/internal/elaborate"
)

// TestPlanFromRecordsAsRead: a landscape opened with the records a plan
// read (Options.Records, what a Temporal worker rebuilding a run under way
// is given) is planned as they were, whatever the run has changed since in
// the folder: a state.info saying "error", an import's new exports that
// shape a plugin list, a vanished instance deleted and forgotten, a
// component's records deleted. Opened from the folder, the same landscape
// plans otherwise (what the worker refused the run with).
func TestPlanFromRecordsAsRead(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		"acre.yaml":                            "landscape: {name: demo}\n",
		"crop/components/base/component.yaml":  "component: {}\n",
		"crop/components/base/deployment.yaml": "plugins:\n  - echo: base\n",
		"crop/components/base/export.yaml":     "export: {}\n",
		"crop/components/mid/component.yaml":   "component:\n  imports:\n    - b: base\n",
		"crop/components/mid/deployment.yaml":  "imports: (( &temporary ))\nplugins: (( imports.b.export.plugins ))\n",
		"crop/components/gone/component.yaml":  "component: {}\n",
		"crop/components/gone/deployment.yaml": "plugins:\n  - echo: gone\n",
		"state/base/state.info":                "deployed\n",
		"state/base/plugins.json":              `{"last": ["old"], "plugins": {"old": {"name": "show"}}}`,
		"export/base/export.yaml":              "export:\n  plugins:\n    - echo: one\n",
		"state/mid/state.info":                 "deployed\n",
		"export/mid/export.yaml":               "export: {}\n",
		"state/gone/state.info":                "deployed\n",
		"export/gone/export.yaml":              "export: {}\n",
	}
	write := func(files map[string]string) {
		for name, text := range files {
			p := filepath.Join(root, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, p, text)
		}
	}
	write(files)
	load := func(records []byte) (*elaborate.Result, string) {
		t.Helper()
		res, diags := Load(context.Background(), root, Options{Records: records})
		if diags.HasErrors() {
			t.Fatal(diags.Err())
		}
		data, err := json.Marshal(res.Components)
		if err != nil {
			t.Fatal(err)
		}
		what, none := res.OwnRecords("gone")
		return res, string(data) + "\n" + what + " " + map[bool]string{true: "none", false: "some"}[none]
	}
	first, want := load(nil)
	records, err := first.Records()
	if err != nil || len(records) == 0 {
		t.Fatalf("records: %q, %v", records, err)
	}
	// The run goes on: base is being deployed again, with new exports;
	// its vanished instance was deleted; gone was undeployed.
	write(map[string]string{
		"state/base/state.info":   "error\n",
		"export/base/export.yaml": "export:\n  plugins:\n    - echo: one\n    - echo: two\n",
		"state/base/plugins.json": `{"last": []}`,
	})
	for _, d := range []string{"state/gone", "export/gone"} {
		if err := os.RemoveAll(filepath.Join(root, d)); err != nil {
			t.Fatal(err)
		}
	}
	if _, got := load(records); got != want {
		t.Errorf("planned from the records as read:\n%s\nwant (as the first plan):\n%s", got, want)
	}
	if _, now := load(nil); now == want {
		t.Error("planned from the folder as the run left it, the plan is the first one: the test changes nothing the plan reads")
	}
}

// TestInputsDigestWherever: the same landscape at two paths (moved, or a
// Temporal worker's checkout elsewhere) has the same sow.inputs digests: the
// plugin folders, stubs and action script they cover are named below the
// landscape's folder, not by absolute paths. A plugin's content still
// counts.
func TestInputsDigestWherever(t *testing.T) {
	files := map[string]string{
		"acre.yaml":                         "landscape: {name: demo}\n",
		"crop/lib/stub.yaml":                "stub: {v: 1}\n",
		"crop/lib/action":                   "#!/bin/bash\n",
		"crop/plugins/show/plugin":          "#!/bin/sh\necho show\n",
		"crop/components/a/component.yaml":  "component:\n  stubs: [lib/stub.yaml]\n",
		"crop/components/a/deployment.yaml": "plugins:\n  - show: [\"k:\"]\n",
		"crop/components/a/local/notes.txt": "",
	}
	digest := func(root string, files map[string]string) string {
		t.Helper()
		for name, text := range files {
			p := filepath.Join(root, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		res, diags := Load(context.Background(), root, Options{})
		if diags.HasErrors() {
			t.Fatal(diags.Err())
		}
		for _, p := range res.Components[0].Parameters {
			if p.Name == InputsParameter {
				return string(p.Value)
			}
		}
		t.Fatalf("no %s in %+v", InputsParameter, res.Components[0].Parameters)
		return ""
	}
	one := digest(filepath.Join(t.TempDir(), "land"), files)
	if other := digest(filepath.Join(t.TempDir(), "elsewhere", "land"), files); other != one {
		t.Errorf("the landscape at another path: sow.inputs %s, at the first %s", other, one)
	}
	files["crop/plugins/show/plugin"] = "#!/bin/sh\necho changed\n"
	if changed := digest(filepath.Join(t.TempDir(), "land"), files); changed == one {
		t.Error("a plugin's content changed, sow.inputs did not")
	}
}
