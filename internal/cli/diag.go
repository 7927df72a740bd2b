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
// how many it left out.
func printWarnings(w io.Writer, warnings manifest.Diagnostics) {
	for i, d := range warnings {
		if i == maxWarnings {
			fmt.Fprintf(w, "warning: %d more warnings not shown (%d in all)\n", len(warnings)-maxWarnings, len(warnings))
			return
		}
		fmt.Fprintln(w, d.String())
	}
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
