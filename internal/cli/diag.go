package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/gantry-dev/gantry/internal/atomicfile"
	"github.com/gantry-dev/gantry/internal/manifest"
)

// reportDiags prints warnings and errors, one per line, and returns an error
// that exits with code 2 when there are errors. what names the command's work
// for the closing line ("nothing was written", "nothing was run").
func reportDiags(w io.Writer, diags manifest.Diagnostics, consequence string) error {
	diags = diags.Sorted()
	printWarnings(w, diags.Warnings())
	errs := diags.Errors()
	if len(errs) == 0 {
		return nil
	}
	printCapped(w, errs, maxErrors, "error", "errors")
	noun := "errors"
	if len(errs) == 1 {
		noun = "error"
	}
	fmt.Fprintf(w, "%d %s; %s\n", len(errs), noun, consequence)
	return silentExit(ExitInvalid)
}

// maxWarnings is how many warnings one report prints: a stack of 50,000
// components can warn 50,000 times of the same mistake, and the errors
// after them, or the run, would scroll out of reach.
const maxWarnings = 100

// maxErrors is how many errors one report prints: every error is found in
// one round, but 30,000 lines of one mistake repeated (a generated file)
// hide the first, which is the one to read.
const maxErrors = 500

// printWarnings prints warnings, one per line, up to maxWarnings, and then
// how many it left out and the file that holds them all (allDiags).
func printWarnings(w io.Writer, warnings manifest.Diagnostics) {
	printCapped(w, warnings, maxWarnings, "warning", "warnings")
}

// printCapped prints diagnostics, one per line, up to max, and then how
// many it left out and the file that holds them all (allDiags).
func printCapped(w io.Writer, diags manifest.Diagnostics, max int, one, many string) {
	for i, d := range diags {
		if i == max {
			var where string
			if path, err := allDiags(many, diags); err != nil {
				where = "writing them all to a file failed: " + err.Error()
			} else {
				where = "all of them are in " + path
			}
			fmt.Fprintf(w, "%s: %d more %s not shown (%d in all); %s\n", one, len(diags)-max, many, len(diags), where)
			return
		}
		fmt.Fprintln(w, d.String())
	}
}

// allDiags writes diagnostics, one per line, to a file of this user's
// folder of the temporary folder ($TMPDIR/gantry-<uid>, 0700), named by
// what it holds (<kind>-<digest>.txt, 0600), and returns its path: those
// past the cap are shown nowhere else. The same diagnostics, printed again
// at every run, are the same file; the system's cleaning of its temporary
// folder removes them in time.
func allDiags(kind string, diags manifest.Diagnostics) (string, error) {
	var b bytes.Buffer
	for _, d := range diags {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	dir, err := privateTempDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b.Bytes())
	path := filepath.Join(dir, kind+"-"+hex.EncodeToString(sum[:8])+".txt")
	if err := atomicfile.Write(path, b.Bytes(), 0o600, false); err != nil {
		return "", err
	}
	return path, nil
}

// privateTempDir is this user's folder of the temporary folder, made if
// missing: a folder of the user's own that only they can enter, never a
// link or a folder another user made in its place.
func privateTempDir() (string, error) {
	dir := filepath.Join(os.TempDir(), "gantry-"+strconv.Itoa(os.Getuid()))
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Getuid() || fi.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("%s is not a folder of yours that only you can enter", dir)
	}
	return dir, nil
}

// reportDiagsOnce is reportDiags for diagnostics of work done more than once
// (a plan built again after the lock): warnings already in said are not
// repeated, and the ones printed are added to it.
func reportDiagsOnce(w io.Writer, diags manifest.Diagnostics, consequence string, said map[string]bool) error {
	var keep manifest.Diagnostics
	for _, d := range diags {
		if d.Severity == manifest.SevWarning {
			if said[d.String()] {
				continue
			}
			said[d.String()] = true
		}
		keep = append(keep, d)
	}
	return reportDiags(w, keep, consequence)
}
