package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesAndLeavesNoTemporaryFile(t *testing.T) {
	for _, durable := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, "f.yaml")
		for _, content := range []string{"one", "two"} {
			if err := Write(path, []byte(content), 0o600, durable); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(path); string(got) != content {
				t.Errorf("durable=%v: read %q, want %q", durable, got, content)
			}
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600", fi.Mode().Perm())
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("durable=%v: %d files in the folder, want only the file", durable, len(entries))
		}
	}
}

func TestWriteFailureLeavesTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := Write(path, []byte("old"), 0o600, true); err != nil {
		t.Fatal(err)
	}
	// A folder where the file is: the rename fails.
	target := filepath.Join(dir, "sub")
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "x"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(target, []byte("new"), 0o600, false); err == nil {
		t.Fatal("want an error writing over a non-empty folder")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d entries, want the file and the folder only (no temporary file left)", len(entries))
	}
}
