package cli

import (
	"fmt"
	"io"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// reportDiags prints warnings and errors, one per line, and returns an error
// that exits with code 2 when there are errors. what names the command's work
// for the closing line ("nothing was written", "nothing was run").
func reportDiags(w io.Writer, diags manifest.Diagnostics, consequence string) error {
	diags = diags.Sorted()
	for _, d := range diags.Warnings() {
		fmt.Fprintln(w, d.String())
	}
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
