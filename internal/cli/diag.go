package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"

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
	for _, d := range errs {
		fmt.Fprintln(w, d.String())
	}
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

// printWarnings prints warnings, one per line, up to maxWarnings, and then
// how many it left out and the file that holds them all (allWarnings).
func printWarnings(w io.Writer, warnings manifest.Diagnostics) {
	for i, d := range warnings {
		if i == maxWarnings {
			var where string
			if path, err := allWarnings(warnings); err != nil {
				where = "writing them all to a file failed: " + err.Error()
			} else {
				where = "all of them are in " + path
			}
			fmt.Fprintf(w, "warning: %d more warnings not shown (%d in all); %s\n", len(warnings)-maxWarnings, len(warnings), where)
			return
		}
		fmt.Fprintln(w, d.String())
	}
}

// allWarnings writes warnings, one per line, to a new file of the
// temporary folder ($TMPDIR), readable by this user only, and returns its
// path: those past maxWarnings are shown nowhere else. A new name each
// time (never a name another user could have made a link of), which the
// system's cleaning of its temporary folder removes in time.
func allWarnings(warnings manifest.Diagnostics) (string, error) {
	f, err := os.CreateTemp("", "gantry-warnings-*.txt")
	if err != nil {
		return "", err
	}
	bw := bufio.NewWriter(f)
	for _, d := range warnings {
		bw.WriteString(d.String())
		bw.WriteByte('\n')
	}
	err = bw.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
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
