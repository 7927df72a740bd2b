package landscape

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/atomicfile"
	"github.com/gantry-dev/gantry/internal/plugin"
)

// TestExportMode: an export file's mode is octal digits as sow's chmod
// takes them, quoted; every number (what YAML makes of an unquoted mode,
// 0400 coming as 256) is refused with how to write it quoted.
func TestExportMode(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want os.FileMode
		err  string
	}{
		{in: "0600", want: 0o600},
		{in: "600", want: 0o600},
		{in: "4755", want: 0o755 | os.ModeSetuid},
		{in: "1777", want: 0o777 | os.ModeSticky},
		{in: float64(384), err: `the number 384 is no mode gantry takes: write the mode quoted, "0600" for an unquoted 0600 (YAML reads it as the number 384)`},
		{in: float64(493), err: `"0755" for an unquoted 0755`},
		{in: float64(256), err: `the number 256 is no mode gantry takes: write the mode quoted, "0400" for an unquoted 0400 (YAML reads it as the number 256), "0256" for 256`},
		{in: float64(420), err: `"0644" for an unquoted 0644 (YAML reads it as the number 420), "0420" for 420`},
		// 600, 640, 644, 755 typed without a leading zero: the digits, as
		// sow's chmod takes them, not the sticky or setuid mode 01130,
		// 01200, 01204, 01363 they are as numbers, which nobody types.
		{in: float64(640), want: 0o640},
		{in: float64(600), want: 0o600},
		{in: float64(755), want: 0o755},
		{in: float64(4755), want: 0o755 | os.ModeSetuid},
		// Digits that are not octal (an unquoted 0600 is 384) or a number
		// that may be an unquoted mode with a leading zero (400 is 0620).
		{in: float64(400), err: `"0620" for an unquoted 0620 (YAML reads it as the number 400), "0400" for 400`},
		{in: float64(2755), want: 0o755 | os.ModeSetgid},
		{in: float64(444), want: 0o444},
		// An unquoted 04755, 01777 or 02750: YAML's 2541, 1023 and 1512,
		// whose digits are no file's mode.
		{in: float64(2541), err: `the number 2541 is no mode gantry takes: write the mode quoted, "4755" for an unquoted 04755 (YAML reads it as the number 2541)`},
		{in: float64(1023), err: `the number 1023 is no mode gantry takes: write the mode quoted, "1777" for an unquoted 01777`},
		{in: float64(1512), err: `the number 1512 is no mode gantry takes: write the mode quoted, "2750" for an unquoted 02750`},
		// Sticky on a file, or digits that are no file's mode.
		{in: float64(1777), err: `the number 1777 is no mode gantry takes`},
		{in: float64(7777), err: `the number 7777 is no mode gantry takes`},
		{in: float64(17777), err: `the number 17777 is no mode gantry takes`},
		{in: float64(0), err: `write the mode quoted, "0000" for an unquoted 0 (YAML reads it as the number 0)`},
		{in: float64(99999), err: `the number 99999 is no mode gantry takes: write the mode quoted, like "0600"`},
		{in: float64(0.5), err: `the number 0.5 is no mode gantry takes: write the mode quoted, like "0600"`},
		{in: "0900", err: `expected an octal mode like "0600", got "0900"`},
		{in: "17777", err: `got "17777"`},
		{in: true, err: `expected an octal mode like "0600", got`},
		{in: map[string]any{}, err: "got a mapping"},
	} {
		got, err := exportMode(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: got %v, %v; want an error with %q", tc.in, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%v: got %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// TestExportFilesModes: exported files get their modes, one without a mode
// what the umask lets a new file have and never more than the file it
// replaces had, and a bad mode stops the exports before any file is
// written.
func TestExportFilesModes(t *testing.T) {
	root := t.TempDir()
	w := &work{l: &Landscape{Root: root}, c: &Component{Name: "a"}, call: &plugin.Call{Stdout: io.Discard}}
	narrow := filepath.Join(w.export_(), "n")
	if err := os.MkdirAll(w.export_(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(narrow, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(narrow, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := w.exportFiles("export.yaml", []byte(`{"files":{"s":{"data":"x","mode":"0600"},"p":{"path":"d/p","data":1},"n":{"data":"new"}}}`)); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{"s": 0o600, "d/p": atomicfile.Umasked(0o666), "n": 0o600 & atomicfile.Umasked(0o666)} {
		fi, err := os.Stat(filepath.Join(w.export_(), p))
		if err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: got %v, %v; want %v", p, fi.Mode(), err, want)
		}
	}
	err := w.exportFiles("export.yaml", []byte(`{"files":{"a":{"data":"x","mode":"0600"},"b":{"data":"y","mode":384}}}`))
	if err == nil || !strings.Contains(err.Error(), "export.yaml: files.b.mode: the number 384 is no mode gantry takes") {
		t.Errorf("got %v", err)
	}
	if _, err := os.Stat(filepath.Join(w.export_(), "a")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was written before the bad mode was found: %v", err)
	}
}
