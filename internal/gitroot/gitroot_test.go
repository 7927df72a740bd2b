package gitroot

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFind(t *testing.T) {
	base := t.TempDir()
	for _, d := range []string{"repo/.git", "repo/a/b", "worktree/c", "plain/d"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A worktree's .git is a file.
	if err := os.WriteFile(filepath.Join(base, "worktree", ".git"), []byte("gitdir: elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ dir, want string }{
		{"repo", "repo"},
		{"repo/a/b", "repo"},
		{"worktree/c", "worktree"},
	}
	// Without a checkout, the folder itself: where no folder above the
	// temporary one has a .git.
	none := true
	for d := filepath.Dir(base); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			none = false
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if none {
		tests = append(tests, struct{ dir, want string }{"plain/d", "plain/d"})
	}
	for _, tt := range tests {
		if got := Find(filepath.Join(base, tt.dir)); got != filepath.Join(base, tt.want) {
			t.Errorf("Find(%s) = %s, want %s", tt.dir, got, filepath.Join(base, tt.want))
		}
	}
}
