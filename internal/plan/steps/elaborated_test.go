package steps

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/workspace"
)

// elaboratedStack writes a two-component stack whose parameter greeting
// has the value given, and elaborates it.
func elaboratedStack(t *testing.T, greeting string) (*elaborate.Result, string) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"hub.yaml":             "version: 1\nkind: stack\nmeta: {name: s}\ncomponents:\n  - name: a\n    source: {dir: a}\n  - name: b\n    source: {dir: a}\n    depends: [a]\n",
		"a/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: a}\nparameters:\n  - name: greeting\n    value: " + greeting + "\nlifecycle: {bare: allow}\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, diags := elaborate.Elaborate(filepath.Join(dir, "hub.yaml"), elaborate.Options{})
	if len(diags) > 0 {
		t.Fatalf("elaborate: %v", diags)
	}
	return res, filepath.Join(dir, "hub.yaml"+elaborate.Suffix)
}

// TestElaboratedWorkedOutAhead: the setup step writes the elaborated file
// the run worked out ahead, byte for byte what it would encode itself;
// decides under the lock whether the file is current (one removed after
// the early look is written again); and ignores what was worked out for
// another stack or path.
func TestElaboratedWorkedOutAhead(t *testing.T) {
	res, path := elaboratedStack(t, "hello")
	ws := workspace.Workspace{Root: filepath.Join(filepath.Dir(path), ".gantry")}
	want, err := elaborate.Marshal(res.ForWrite(), filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	read := func() []byte {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}

	// Worked out ahead, then written.
	rt := &Runtime{Res: res, Dirs: ws, Elaborated: PrepareElaborated(res, ws, path)}
	if err := rt.writeElaborated(path); err != nil {
		t.Fatal(err)
	}
	if got := read(); !bytes.Equal(got, want) {
		t.Fatalf("written ahead:\n%s\nwant:\n%s", got, want)
	}

	// Current when worked out ahead (nothing encoded), removed before the
	// step: the step encodes and writes it.
	e := PrepareElaborated(res, ws, path)
	<-e.done
	if e.data != nil {
		t.Errorf("a current file was encoded ahead")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	rt = &Runtime{Res: res, Dirs: ws, Elaborated: e}
	if err := rt.writeElaborated(path); err != nil {
		t.Fatal(err)
	}
	if got := read(); !bytes.Equal(got, want) {
		t.Fatalf("removed after the early look:\n%s\nwant:\n%s", got, want)
	}

	// Worked out for another stack (its file would say bonjour): not used.
	other, otherPath := elaboratedStack(t, "bonjour")
	if err := os.WriteFile(path, []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	rt = &Runtime{Res: res, Dirs: ws, Elaborated: PrepareElaborated(other, ws, otherPath)}
	if err := rt.writeElaborated(path); err != nil {
		t.Fatal(err)
	}
	if got := read(); !bytes.Equal(got, want) {
		t.Fatalf("with another stack's worked out ahead:\n%s\nwant:\n%s", got, want)
	}
}
