package component

import (
	"os"
	"path/filepath"
	"testing"
)

func TestExcluded(t *testing.T) {
	for _, c := range []struct {
		glob, rel string
		want      bool
	}{
		{"*.pid", "app.pid", true},
		{"*.pid", "run/app.pid", true},
		{"run/*.pid", "app.pid", false},
		{"run/*.pid", "run/app.pid", true},
		{"logs/**", "logs", true},
		{"logs/**", "logs/a/b.txt", true},
		{"logs/**", "blogs/a", false},
		{"*.pid", "deploy", false},
	} {
		if got := Excluded([]string{c.glob}, c.rel); got != c.want {
			t.Errorf("Excluded(%q, %q) = %v, want %v", c.glob, c.rel, got, c.want)
		}
	}
}

// TestDigestDirKeepsDirSum: without exclusions the sum is the one states
// recorded before exclusions existed; excluded files change nothing.
func TestDigestDirKeepsDirSum(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("deploy", "#!/bin/sh\n")
	write("sub/x.txt", "x")
	d, err := DigestDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Files) != 2 || d.Files["sub/x.txt"] == "" {
		t.Fatalf("files %v", d.Files)
	}
	before, _ := DigestDir(dir, []string{"*.pid", "logs/**"})
	write("app.pid", "123")
	write("logs/a.log", "a")
	after, _ := DigestDir(dir, []string{"*.pid", "logs/**"})
	if before.Sum != after.Sum || len(after.Files) != 2 {
		t.Fatalf("excluded files changed the digest: %v", after.Files)
	}
	if after.Sum != d.Sum {
		t.Fatalf("exclusions that match nothing changed the sum")
	}
}
