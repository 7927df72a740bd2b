package action

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSameState: a nested gantry invoke knows its parent's state however
// the path is spelt — the parent gives GANTRY_STATE the path it was given
// (through a symbolic link), a component's relative -s resolves from the
// real folder it runs in — or it would wait for its own parent's lock.
func TestSameState(t *testing.T) {
	dir, real, state := linkedStateDir(t)
	other := filepath.Join(real, "other.state")
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		a, b string
		want bool
	}{
		{"the same text", state, state, true},
		{"file:// and a path", "file://" + state, state, true},
		{"through a link", filepath.Join(dir, "link", "hub.yaml.state"), state, true},
		{"through a link with ..", filepath.Join(dir, "link", "..", "stack", "hub.yaml.state"), state, true},
		{"not written yet, through a link", filepath.Join(dir, "link", "new.state"), filepath.Join(real, "new.state"), true},
		{"another file", state, other, false},
		{"not written yet, another name", filepath.Join(dir, "link", "a.state"), filepath.Join(real, "b.state"), false},
		{"two database URLs", "postgres://h/db?stack=a", "postgres://h/db?stack=b", false},
		{"a database URL and a path", "postgres://h/db", state, false},
		{"none given", "", state, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := sameState(tt.a, tt.b); got != tt.want {
				t.Errorf("sameState(%q, %q) = %t, want %t", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

// linkedStateDir makes dir/stack holding an empty hub.yaml.state, and
// dir/link, a symbolic link to dir/stack: one state reached two ways.
func linkedStateDir(t *testing.T) (dir, real, state string) {
	t.Helper()
	dir = t.TempDir()
	real = filepath.Join(dir, "stack")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	state = filepath.Join(real, "hub.yaml.state")
	if err := os.WriteFile(state, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, real, state
}
