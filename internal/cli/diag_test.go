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
			if filepath.Dir(path) != os.Getenv("TMPDIR") {
				t.Errorf("the warnings are in %s, not in the temporary folder %s", path, os.Getenv("TMPDIR"))
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
		})
	}
}

// TestPrintWarningsFileFails: when the file of all warnings cannot be
// written, the count says so instead of naming one.
func TestPrintWarningsFileFails(t *testing.T) {
	t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
	var ds manifest.Diagnostics
	for i := range maxWarnings + 2 {
		ds.Warnf(manifest.Pos{File: "hub.yaml", Line: i + 1, Col: 3}, "parameters", "warning %d", i)
	}
	var out bytes.Buffer
	printWarnings(&out, ds)
	if want := "warning: 2 more warnings not shown (102 in all); writing them all to a file failed: "; !strings.Contains(out.String(), want) {
		t.Errorf("printed:\n%s\nwant a line with %q", out.String(), want)
	}
}
