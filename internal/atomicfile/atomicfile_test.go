package atomicfile

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// TestWriteGoesThroughLinks: a link to the file stays a link and the file it
// leads to is replaced, through relative, absolute and chained links, and a
// link to a file that does not exist yet creates it; a loop is an error.
func TestWriteGoesThroughLinks(t *testing.T) {
	dir := t.TempDir()
	elsewhere := filepath.Join(dir, "elsewhere")
	if err := os.Mkdir(elsewhere, 0o700); err != nil {
		t.Fatal(err)
	}
	real := filepath.Join(elsewhere, "hub.yaml.state")
	if err := os.WriteFile(real, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"relative": "elsewhere/hub.yaml.state",
		"absolute": real,
		"chained":  "relative",
		"dangling": "elsewhere/new.state",
	}
	for name, dest := range links {
		if err := os.Symlink(dest, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"relative", "absolute", "chained"} {
		link := filepath.Join(dir, name)
		if err := Write(link, []byte("via "+name), 0o600, true); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s: the link was replaced (%v)", name, err)
		}
		if got, _ := os.ReadFile(real); string(got) != "via "+name {
			t.Errorf("%s: the file it leads to holds %q", name, got)
		}
	}
	if err := Write(filepath.Join(dir, "dangling"), []byte("new"), 0o600, false); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(elsewhere, "new.state")); string(got) != "new" {
		t.Errorf("a dangling link's file holds %q", got)
	}
	if err := os.Symlink("loop2", filepath.Join(dir, "loop1")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop1", filepath.Join(dir, "loop2")); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(dir, "loop1"), []byte("x"), 0o600, false); err == nil || !strings.Contains(err.Error(), "links to follow") {
		t.Errorf("a loop of links: %v", err)
	}
}

// TestWriteRemovesWhatKilledWritesLeft: temporary files of a writer that is
// gone, and old ones without a pid, are removed by the next write; those of
// a live writer, and other files, stay.
func TestWriteRemovesWhatKilledWritesLeft(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "hub.yaml.elaborate")
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	live := exec.Command("sleep", "60")
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = live.Process.Kill(); _ = live.Wait() }()
	files := map[string]bool{ // name → kept
		fmt.Sprintf(".hub.yaml.elaborate.tmp%d-123", gone.Process.Pid): false,
		".hub.yaml.elaborate.tmp987654":                                false, // an older gantry's, made old below
		fmt.Sprintf(".hub.yaml.elaborate.tmp%d-456", live.Process.Pid): true,
		".hub.yaml.elaborate.tmp555":                                   true, // recent: perhaps a write under way
		".other.tmp1-1":                                                true,
	}
	for name := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * staleAge)
	if err := os.Chtimes(filepath.Join(dir, ".hub.yaml.elaborate.tmp987654"), old, old); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("complete"), 0o600, false); err != nil {
		t.Fatal(err)
	}
	for name, kept := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if exists := err == nil; exists != kept {
			t.Errorf("%s: exists %v, want %v", name, exists, kept)
		}
	}
}

// TestWriteDevice writes to /dev/null without replacing it: a rename over
// it would have made it a regular file for every program of the machine.
func TestWriteDevice(t *testing.T) {
	fi, err := os.Stat(os.DevNull)
	if err != nil || fi.Mode()&os.ModeDevice == 0 {
		t.Skipf("no device at %s", os.DevNull)
	}
	if err := Write(os.DevNull, []byte("x"), 0o644, true); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(os.DevNull); err != nil || fi.Mode()&os.ModeDevice == 0 {
		t.Fatalf("%s is no longer a device: %v %v", os.DevNull, fi.Mode(), err)
	}
}

// TestUmasked: a mode given to Umasked loses the bits the process's umask
// clears, as a file os.WriteFile creates does.
func TestUmasked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := Umasked(0o666); got != fi.Mode().Perm() {
		t.Errorf("Umasked(0666) = %v, a file created with 0666 has %v", got, fi.Mode().Perm())
	}
}

// TestWriteKeepsSetuidOfNonRoot: setuid and setgid survive a write by a
// process without CAP_FSETID, whose writes clear them: they are set after
// the data. Run as root, the write runs as nobody (setpriv), in this test's
// binary called again.
func TestWriteKeepsSetuidOfNonRoot(t *testing.T) {
	const want = 0o755 | os.ModeSetuid | os.ModeSetgid
	if path := os.Getenv("ATOMICFILE_TEST_SETUID"); path != "" {
		if err := Write(path, []byte("#!/bin/sh\n"), want, false); err != nil {
			t.Fatal(err)
		}
		return
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if os.Geteuid() != 0 {
		if err := Write(path, []byte("#!/bin/sh\n"), want, false); err != nil {
			t.Fatal(err)
		}
	} else {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("running as root without setpriv to write as another user")
		}
		self, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(dir, "test")
		if err := os.WriteFile(bin, self, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{filepath.Dir(dir), dir} {
			if err := os.Chmod(d, 0o777); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", bin, "-test.run=^TestWriteKeepsSetuidOfNonRoot$")
		cmd.Env = append(os.Environ(), "ATOMICFILE_TEST_SETUID="+path)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("the write as nobody: %v\n%s", err, out)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode() & (os.ModePerm | os.ModeSetuid | os.ModeSetgid); got != want {
		t.Errorf("mode %v, want %v", got, want)
	}
}
