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
