package action

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gantry-dev/gantry/internal/state"
)

// identified is a store that names its state, as a database's does.
type identified struct {
	*state.FileStore
	id string
}

func (s identified) Identity() string { return s.id }

// The key of a state names the one read: of an -s list, the first (two
// lists of databases from one manifest fell back to the manifest's default
// file, one key for both); a file by its path with links resolved.
func TestStoreKey(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink(dir, filepath.Join(dir, "here")); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	anchor := filepath.Join(dir, "hub.yaml.state")
	pgA := identified{FileStore: state.NewFileStore("unused"), id: "postgres://a:5432/db?stack=s"}
	pgB := identified{FileStore: state.NewFileStore("unused"), id: "postgres://b:5432/db?stack=s"}
	tests := []struct {
		name  string
		store state.Store
		want  string
	}{
		{"a database", pgA, pgA.id},
		{"a list of databases", state.Mirror{pgA, pgB}, pgA.id},
		{"another list of databases", state.Mirror{pgB, pgA}, pgB.id},
		{"a file through a link", state.NewFileStore(filepath.Join(dir, "here", "a.state")), filepath.Join(real, "a.state")},
		{"a list of files", state.Mirror{state.NewFileStore(filepath.Join(dir, "b.state")), state.NewFileStore(anchor)}, filepath.Join(real, "b.state")},
	}
	for _, tc := range tests {
		if got := storeKey(tc.store, anchor); got != tc.want {
			t.Errorf("%s: key %q, want %q", tc.name, got, tc.want)
		}
	}
}
