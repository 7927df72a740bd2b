package action

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/state"
	_ "github.com/gantry-dev/gantry/internal/state/pgstate" // postgres:// locations
)

// TestRegistryPath: runs on different states never share a process
// registry, though a database state's workspace lies next to the manifest
// with the file state's; one state's registry is the same however its URL
// is spelt.
func TestRegistryPath(t *testing.T) {
	dir := t.TempDir()
	anchor := filepath.Join(dir, "hub.yaml.state")
	open := func(location, stack string) state.Store {
		t.Helper()
		s, err := state.Open(context.Background(), location, stack)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	path := func(location, stack string) string {
		return registryPath(anchor, open(location, stack), stack)
	}
	file := path(anchor, "app")
	if want := filepath.Join(dir, ".gantry", "hub.yaml.state.running"); file != want {
		t.Errorf("the file state's registry is %s, want %s", file, want)
	}
	staging := path("postgres://gantry:pw@db.example/staging?sslmode=disable", "app")
	if dir := filepath.Dir(staging); dir != filepath.Join(filepath.Dir(anchor), ".gantry") {
		t.Errorf("a database state's registry %s is not in the workspace", staging)
	}
	if base := filepath.Base(staging); !strings.HasPrefix(base, "app.postgres-") || !strings.HasSuffix(base, ".running") {
		t.Errorf("a database state's registry is named %s, want app.postgres-<digest>.running", base)
	}
	tests := []struct {
		name, location, stack string
		want                  string // "" for a registry of its own
	}{
		{"the same database, another spelling", "postgres://other@db.example:5432/staging?stack=app", "app", staging},
		{"another database", "postgres://gantry:pw@db.example/prod?sslmode=disable", "app", ""},
		{"another server", "postgres://gantry:pw@db2.example/staging?sslmode=disable", "app", ""},
		{"another stack", "postgres://gantry:pw@db.example/staging?sslmode=disable", "web", ""},
		{"a stack name that is no file name", "postgres://db.example/staging", "a/b c", ""},
	}
	seen := map[string]string{file: "the file state", staging: "staging"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := path(tt.location, tt.stack)
			if filepath.Dir(got) != filepath.Dir(file) {
				t.Errorf("registry %s is not in the workspace", got)
			}
			if tt.want != "" {
				if got != tt.want {
					t.Errorf("registry %s, want %s", got, tt.want)
				}
				return
			}
			if other, ok := seen[got]; ok {
				t.Errorf("registry %s is also %s's", got, other)
			}
			seen[got] = tt.name
		})
	}
}
