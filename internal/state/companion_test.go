package state

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCompanion: the lock and the journal of a state reached through a
// link are beside the file it leads to, dangling or through a chain; a
// state that is no link keeps them beside itself.
func TestCompanion(t *testing.T) {
	dir := t.TempDir()
	shared := filepath.Join(dir, "shared")
	if err := os.Mkdir(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	link := func(name, target string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dangling := link("a.state", "shared/x.state") // x.state does not exist yet
	chain := link("b.state", "a.state")
	plain := filepath.Join(dir, "c.state")
	want := filepath.Join(shared, "x.state.lock")
	if got := LockPath(dangling); got != want {
		t.Errorf("LockPath(dangling link) = %s, want %s", got, want)
	}
	if got := LockPath(chain); got != want {
		t.Errorf("LockPath(chain of links) = %s, want %s", got, want)
	}
	if err := os.WriteFile(filepath.Join(shared, "x.state"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := filepath.EvalSymlinks(filepath.Dir(JournalPath(chain))); got != mustEval(t, shared) {
		t.Errorf("JournalPath(chain) = %s, want beside %s", JournalPath(chain), shared)
	}
	if got := JournalPath(plain); got != plain+".journal" {
		t.Errorf("JournalPath(no link) = %s", got)
	}
	loop := link("loop.state", "loop.state")
	if got := LockPath(loop); got == "" {
		t.Error("a loop of links gave no path")
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
