package landscape

import (
	"os"
	"path/filepath"
	"testing"
)

// TestExportsDigest: the digest of a component's export.yaml, and a word
// instead of a crash when the file cannot be read.
func TestExportsDigest(t *testing.T) {
	root := t.TempDir()
	w := &work{l: &Landscape{Root: root}, c: &Component{Name: "a"}}
	if got := w.exportsDigest(); got != "unreadable" {
		t.Errorf("without export.yaml: got %q", got)
	}
	if err := os.MkdirAll(w.export_(), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(w.export_(), exportFile), "export: {}\n")
	if got := w.exportsDigest(); len(got) != 32 || got == "unreadable" {
		t.Errorf("with export.yaml: got %q", got)
	}
}

// TestConfigReplacedWhole: gen/config.json, which plugins of components
// running at the same time read, is never rewritten in place: left alone
// when unchanged, replaced by a new file when changed.
func TestConfigReplacedWhole(t *testing.T) {
	root := t.TempDir()
	l := &Landscape{Root: root, Config: []byte(`{"a":1}`)}
	w := &work{l: l, c: &Component{Name: "a"}}
	if err := w.dirs(); err != nil {
		t.Fatal(err)
	}
	first, err := os.Stat(l.ConfigFile())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.dirs(); err != nil {
		t.Fatal(err)
	}
	if same, _ := os.Stat(l.ConfigFile()); !os.SameFile(first, same) || !same.ModTime().Equal(first.ModTime()) {
		t.Error("an unchanged configuration was written again")
	}
	l.Config = []byte(`{"a":2}`)
	if err := w.dirs(); err != nil {
		t.Fatal(err)
	}
	changed, _ := os.Stat(l.ConfigFile())
	if os.SameFile(first, changed) {
		t.Error("a changed configuration was rewritten in place, not replaced")
	}
	if data, _ := os.ReadFile(l.ConfigFile()); string(data) != `{"a":2}` {
		t.Errorf("got %s", data)
	}
}

// TestRecordsIncomplete: sow's records say a component is deployed only
// with an export.yaml and a state.info saying "deployed"; records that are
// there but say otherwise name the record and why.
func TestRecordsIncomplete(t *testing.T) {
	for _, tc := range []struct {
		name         string
		info, export string // "-": no such file
		file, why    string
	}{
		{name: "never deployed", info: "-", export: "-"},
		{name: "deployed", info: "deployed\n", export: "export: {}\n"},
		{name: "deployed, no newline", info: "deployed", export: "export: {}\n"},
		{name: "error", info: "error\n", export: "export: {}\n", file: "state/a/state.info", why: `state/a/state.info says "error"`},
		{name: "aborted", info: "aborted\n", export: "export: {}\n", file: "state/a/state.info", why: `state/a/state.info says "aborted"`},
		{name: "exports deleted", info: "deployed\n", export: "-", file: "export/a/export.yaml", why: "export/a/export.yaml is missing"},
		{name: "state.info deleted", info: "-", export: "export: {}\n", file: "state/a/state.info", why: "state/a/state.info is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &Landscape{Root: t.TempDir()}
			c := &Component{Name: "a"}
			for p, data := range map[string]string{filepath.Join(l.StateDir("a"), stateInfo): tc.info, filepath.Join(l.ExportDir("a"), exportFile): tc.export} {
				if data == "-" {
					continue
				}
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				writeFile(t, p, data)
			}
			file, why := l.recordsIncomplete(c)
			if want := tc.file; want != "" {
				want = filepath.Join(l.Root, want)
				if file != want || why != tc.why {
					t.Errorf("got %q, %q; want %q, %q", file, why, want, tc.why)
				}
			} else if file != "" || why != "" {
				t.Errorf("got %q, %q; want the records to say deployed", file, why)
			}
		})
	}
}
