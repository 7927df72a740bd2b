package ui

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteSummary prints the final table — component, verb, status, duration
// and the reason of skips and failures, a failure that did not fail the run
// as "failed (optional)" — and a line of totals with the run's duration.
func WriteSummary(w io.Writer, comps []ComponentRun, took time.Duration, sty Style) {
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Name, c.Verb, c.ShownStatus(), d, oneLine(c.Reason))
	}
	tw.Flush()
	fmt.Fprintln(bw, Totals(comps, took))
}

// Totals is the summary's last line: how many components ended how, in
// the order the table first shows each status, and how long the run took:
// "total: 3 deployed, 1 failed (optional), 2 skipped in 4.2s".
func Totals(comps []ComponentRun, took time.Duration) string {
	n := map[string]int{}
	var order []string
	for _, c := range comps {
		s := c.ShownStatus()
		if n[s] == 0 {
			order = append(order, s)
		}
		n[s]++
	}
	parts := make([]string, len(order))
	for i, s := range order {
		parts[i] = fmt.Sprintf("%d %s", n[s], s)
	}
	if len(parts) == 0 {
		parts = []string{"nothing"}
	}
	return "total: " + strings.Join(parts, ", ") + " in " + FormatDuration(took)
}

// oneLine is the first line of s, sanitized, at most 160 columns.
func oneLine(s string) string {
	return strings.TrimSpace(Truncate(Sanitize(firstLine(s)), 160))
}
