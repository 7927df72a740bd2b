package ui

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteSummary prints the final table: component, verb, status, duration and
// the reason of skips and failures.
func WriteSummary(w io.Writer, comps []ComponentRun, sty Style) {
	// tabwriter writes each cell on its own: buffered, the table of 10,000
	// components is one write, not 50,000.
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "COMPONENT\tVERB\tSTATUS\tDURATION\tREASON")
	for _, c := range comps {
		d := "-"
		if c.Duration() > 0 && c.Status != Skipped && c.Status != Unchanged && c.Status != Waiting {
			d = FormatDuration(c.Duration())
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Name, c.Verb, c.Status, d, oneLine(c.Reason))
	}
	tw.Flush()
}

// oneLine is the first line of s, sanitized, at most 160 columns.
func oneLine(s string) string {
	return strings.TrimSpace(Truncate(Sanitize(firstLine(s)), 160))
}
