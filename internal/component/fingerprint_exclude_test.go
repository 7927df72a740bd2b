package component

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
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
		// Anchored at the folder: that file only (the run's state).
		{"/st.json", "st.json", true},
		{"/st.json", "sub/st.json", false},
		{"/sub/st.json", "sub/st.json", true},
		{"/" + EscapeGlob("s[1]*.json"), "s[1]*.json", true},
		{"/" + EscapeGlob("s[1]*.json"), "s1x.json", false},
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
	d, err := DigestDir(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Files) != 2 || d.Files["sub/x.txt"] == "" {
		t.Fatalf("files %v", d.Files)
	}
	before, _ := DigestDir(dir, []string{"*.pid", "logs/**"}, nil)
	write("app.pid", "123")
	write("logs/a.log", "a")
	after, _ := DigestDir(dir, []string{"*.pid", "logs/**"}, nil)
	if before.Sum != after.Sum || len(after.Files) != 2 {
		t.Fatalf("excluded files changed the digest: %v", after.Files)
	}
	if after.Sum != d.Sum {
		t.Fatalf("exclusions that match nothing changed the sum")
	}
	// What gantry writes beside a stack whose folder is a component's:
	// the state, its journal during a run (hunt 59p F7), lock, elaborated.
	for _, name := range []string{"hub.yaml.state", "hub.yaml.state.journal", "hub.yaml.state.journal.tmp", "hub.yaml.state.lock", "hub.yaml.elaborate"} {
		write(name, "x")
	}
	if gantry, _ := DigestDir(dir, []string{"*.pid", "logs/**"}, nil); gantry.Sum != d.Sum {
		t.Fatalf("gantry's own files changed the digest: %v", gantry.Files)
	}
}

// TestDigestDirReads: the files read outside the folder (a kustomization's
// base) change the digest when they change, and are named by their path
// from the folder; without reads the sum stays DirSum's. The folder
// reached through a symlink has the same digest.
func TestDigestDirReads(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "overlays", "prod")
	base := filepath.Join(root, "base", "cm.yaml")
	for p, text := range map[string]string{filepath.Join(dir, "kustomization.yaml"): "resources: [../../base]\n", base: "level: 1\n"} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plain, _ := DirSum(dir)
	without, _ := DigestDir(dir, nil, nil)
	reads := []string{"../../base/cm.yaml"}
	one, err := DigestDir(dir, nil, reads)
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	linked, err := DigestDir(filepath.Join(link, "overlays", "prod"), nil, reads)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(one, linked); d != "" {
		t.Errorf("the folder through a symlink (-real +linked):\n%s", d)
	}
	// A plan saved before named the reads by their absolute path.
	if abs, _ := DigestDir(dir, nil, []string{base}); abs.Sum != one.Sum {
		t.Errorf("an absolute read gives another digest: %v, %v", abs.Files, one.Files)
	}
	if without.Sum != plain || one.Sum == plain {
		t.Fatalf("sums: DirSum %s, no reads %s, with the base %s", plain, without.Sum, one.Sum)
	}
	if one.Files["../../base/cm.yaml"] == "" {
		t.Fatalf("files %v", one.Files)
	}
	if err := os.WriteFile(base, []byte("level: 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	two, _ := DigestDir(dir, nil, reads)
	if two.Sum == one.Sum || two.Files["../../base/cm.yaml"] == one.Files["../../base/cm.yaml"] {
		t.Fatal("a changed base left the digest as it was")
	}
	if err := os.Remove(base); err != nil {
		t.Fatal(err)
	}
	gone, _ := DigestDir(dir, nil, reads)
	if gone.Sum == two.Sum {
		t.Fatal("a base that is gone left the digest as it was")
	}
	if DirKey(dir, nil, reads) == DirKey(dir, nil, nil) {
		t.Fatal("the key does not tell the reads apart")
	}
}

// TestDigestDirReadsSpecialFiles: a read that leads to a device or a named
// pipe (a link in a module's folder) is digested as such, never read — it
// would never end, or wait for a writer — and a regular file is digested as
// it always was, streamed: fingerprints recorded before stay the same.
func TestDigestDirReadsSpecialFiles(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "net")
	mod := filepath.Join(root, "mod")
	for _, d := range []string{dir, mod} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(mod, "main.tf"), []byte("output \"v\" {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(mod, "zero")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(mod, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := DigestDir(dir, nil, []string{"../mod/main.tf", "../mod/zero", "../mod/pipe"})
	if err != nil {
		t.Fatal(err)
	}
	old := sha256.New()
	fmt.Fprintf(old, "read %q %d\n", "../mod/main.tf", len("output \"v\" {}\n"))
	old.Write([]byte("output \"v\" {}\n"))
	if got, want := d.Files["../mod/main.tf"], hex.EncodeToString(old.Sum(nil)[:8]); got != want {
		t.Errorf("a regular file's digest %s, want %s as before", got, want)
	}
	if d.Files["../mod/zero"] == "" || d.Files["../mod/pipe"] == "" || d.Files["../mod/zero"] == d.Files["../mod/pipe"] {
		t.Errorf("special files' digests %v", d.Files)
	}
}
