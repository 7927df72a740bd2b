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
func WriteSummary(w io.Writer, comps []ComponentRun, took time.Duration) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	rows := make([][summaryColumns]string, 0, len(comps)+1)
	rows = append(rows, [summaryColumns]string{"COMPONENT", "VERB", "STATUS", "DURATION", "REASON"})
	for _, c := range comps {
		d := "-"
		if c.Duration() > 0 && c.Status != Skipped && c.Status != Unchanged && c.Status != Waiting {
			d = FormatDuration(c.Duration())
		}
		rows = append(rows, [summaryColumns]string{c.Name, c.Verb, c.ShownStatus(), d, oneLine(c.Reason)})
	}
	writeTable(bw, rows)
	fmt.Fprintln(bw, Totals(comps, took))
}

const summaryColumns = 5

// writeTable writes rows as text/tabwriter does with a padding of two
// spaces (the last column unpadded). tabwriter formats a cell at a time:
// a table of 10,000 rows took 15 ms, written twice at the end of a run
// (the display and summary.txt). Rows of plain ASCII, where a cell's width
// is its length, are aligned here; others are left to tabwriter, which
// measures runes and knows its escapes (TestWriteTableLikeTabwriter).
func writeTable(w io.Writer, rows [][summaryColumns]string) {
	var width [summaryColumns - 1]int
	for _, r := range rows {
		for i, cell := range r {
			if !plainCell(cell) {
				writeTabwriter(w, rows)
				return
			}
			if i < len(width) {
				width[i] = max(width[i], len(cell))
			}
		}
	}
	const padding = 2
	var line []byte
	for _, r := range rows {
		line = line[:0]
		for i, cell := range r[:len(width)] {
			line = append(line, cell...)
			for range width[i] - len(cell) + padding {
				line = append(line, ' ')
			}
		}
		line = append(line, r[len(width)]...)
		line = append(line, '\n')
		w.Write(line)
	}
}

// plainCell reports a cell of printable ASCII only.
func plainCell(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// writeTabwriter is writeTable by text/tabwriter.
func writeTabwriter(w io.Writer, rows [][summaryColumns]string) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r[:], "\t"))
	}
	tw.Flush()
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
