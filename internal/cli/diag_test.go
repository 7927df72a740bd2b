package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// TestPrintWarningsBounded: a flood of warnings prints maxWarnings of them
// and then how many more there were, and the file that holds them all;
// fewer print as they are.
func TestPrintWarningsBounded(t *testing.T) {
	for _, n := range []int{0, 1, maxWarnings, maxWarnings + 1, 50000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Setenv("TMPDIR", t.TempDir())
			var ds manifest.Diagnostics
			for i := range n {
				ds.Warnf(manifest.Pos{File: "hub.yaml", Line: i + 1, Col: 3}, "parameters", "parameter %q is qualified for unknown component %q", fmt.Sprint("p", i), "x")
			}
			var out bytes.Buffer
			printWarnings(&out, ds)
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if n == 0 {
				if out.Len() != 0 {
					t.Fatalf("no warnings printed %q", out.String())
				}
				return
			}
			shown := min(n, maxWarnings)
			if !strings.HasPrefix(lines[0], "hub.yaml:1:3: warning: parameters: parameter \"p0\"") {
				t.Errorf("first line %q", lines[0])
			}
			if n <= maxWarnings {
				if len(lines) != n {
					t.Errorf("%d lines for %d warnings", len(lines), n)
				}
				return
			}
			if len(lines) != shown+1 {
				t.Fatalf("%d lines for %d warnings, want %d and a count", len(lines), n, shown)
			}
			want := fmt.Sprintf("warning: %d more warnings not shown (%d in all); all of them are in ", n-maxWarnings, n)
			path, ok := strings.CutPrefix(lines[shown], want)
			if !ok {
				t.Fatalf("last line %q, want %q and a file", lines[shown], want)
			}
			if want := filepath.Join(os.Getenv("TMPDIR"), fmt.Sprintf("gantry-%d", os.Getuid())); filepath.Dir(path) != want {
				t.Errorf("the warnings are in %s, not in the user's folder %s", path, want)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var all bytes.Buffer
			for _, d := range ds {
				fmt.Fprintln(&all, d.String())
			}
			if !bytes.Equal(data, all.Bytes()) {
				t.Errorf("the file holds %d bytes, want the %d warnings' %d", len(data), n, all.Len())
			}
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("the file's mode: %v %v, want 0600", fi.Mode(), err)
			}
			if fi, err := os.Stat(filepath.Dir(path)); err != nil || fi.Mode().Perm() != 0o700 {
				t.Errorf("the folder's mode: %v %v, want 0700", fi.Mode(), err)
			}
			// The same warnings again are the same file, not another one.
			var again bytes.Buffer
			printWarnings(&again, ds)
			if again.String() != out.String() {
				t.Errorf("printed again:\n%s\nwant the same lines", again.String())
			}
			if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
				t.Errorf("%d files in %s, want 1", len(entries), filepath.Dir(path))
			}
		})
	}
}

// TestPrintWarningsFileFails: when the file of all warnings cannot be
// written, the count says so instead of naming one: the temporary folder
// missing, or the user's folder in it one that others can enter (made by
// another user, or a link, it would not be the user's).
func TestPrintWarningsFileFails(t *testing.T) {
	t.Run("no temporary folder", func(t *testing.T) {
		t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
		warnFileFails(t, "writing them all to a file failed: ")
	})
	t.Run("a folder others can enter", func(t *testing.T) {
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		dir := filepath.Join(tmp, fmt.Sprintf("gantry-%d", os.Getuid()))
		if err := os.Mkdir(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		warnFileFails(t, "writing them all to a file failed: "+dir+" is not a folder of yours that only you can enter")
	})
	t.Run("a link", func(t *testing.T) {
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		if err := os.Mkdir(filepath.Join(tmp, "elsewhere"), 0o700); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(tmp, fmt.Sprintf("gantry-%d", os.Getuid()))
		if err := os.Symlink("elsewhere", dir); err != nil {
			t.Fatal(err)
		}
		warnFileFails(t, "writing them all to a file failed: "+dir+" is not a folder of yours that only you can enter")
	})
}

// warnFileFails prints 102 warnings and wants the count's line to say
// want.
func warnFileFails(t *testing.T, want string) {
	t.Helper()
	var ds manifest.Diagnostics
	for i := range maxWarnings + 2 {
		ds.Warnf(manifest.Pos{File: "hub.yaml", Line: i + 1, Col: 3}, "parameters", "warning %d", i)
	}
	var out bytes.Buffer
	printWarnings(&out, ds)
	if want := "warning: 2 more warnings not shown (102 in all); " + want; !strings.Contains(out.String(), want) {
		t.Errorf("printed:\n%s\nwant a line with %q", out.String(), want)
	}
}

// TestReportDiagsErrorsBounded: a flood of errors prints maxErrors of them,
// how many more there were and the file that holds them all, then the
// count of all; the exit is still 2.
func TestReportDiagsErrorsBounded(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var ds manifest.Diagnostics
	n := maxErrors + 7
	for i := range n {
		ds.Errorf(manifest.Pos{File: "hub.yaml", Line: i + 1, Col: 1}, "components", "component %q: bad", fmt.Sprint("c", i))
	}
	var out bytes.Buffer
	if err := reportDiags(&out, ds, "nothing was run"); err == nil {
		t.Fatal("no error for errors")
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != maxErrors+2 {
		t.Fatalf("%d lines, want %d errors, the count left out and the total", len(lines), maxErrors)
	}
	want := fmt.Sprintf("error: 7 more errors not shown (%d in all); all of them are in ", n)
	path, ok := strings.CutPrefix(lines[maxErrors], want)
	if !ok {
		t.Fatalf("line %q, want %q and a file", lines[maxErrors], want)
	}
	if data, err := os.ReadFile(path); err != nil || bytes.Count(data, []byte("\n")) != n {
		t.Errorf("the file holds %d lines (%v), want %d", bytes.Count(data, []byte("\n")), err, n)
	}
	if last := lines[maxErrors+1]; last != fmt.Sprintf("%d errors; nothing was run", n) {
		t.Errorf("last line %q", last)
	}
}
