package ui

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
)

// Plain writes one line per event, prefixed with the component: the display
// when the output is not a terminal. Lines of parallel components interleave
// whole, never mixed.
type Plain struct {
	mu     sync.Mutex
	w      *bufio.Writer
	sty    Style
	labels stepLabels
}

// NewPlain returns a plain renderer. Lines are buffered until the run goes
// idle (Idle).
func NewPlain(w io.Writer, sty Style) *Plain {
	return &Plain{w: bufio.NewWriterSize(w, 32<<10), sty: sty}
}

// Idle writes the buffered lines.
func (p *Plain) Idle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.w.Flush()
}

// println writes a line; p.mu is held.
func (p *Plain) println(prefix, text string) {
	fmt.Fprintf(p.w, "%s %s\n", p.sty.Dim("["+prefix+"]"), text)
}

// started writes a step's start line with label; p.mu is held.
func (p *Plain) started(n *plan.Node, label string) {
	title := titled(n, Sanitize(label))
	if n.Listed {
		title = "==> " + title
	}
	p.println(groupOf(n), laned(n, title))
}

// StepStarted announces visible steps; one whose label names values is
// announced once it says what they are.
func (p *Plain) StepStarted(n *plan.Node, _ time.Time) {
	if n.Hidden || n.Quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.labels.hold(n) {
		return
	}
	p.started(n, n.Label)
}

// StepFinished reports how visible steps ended, and skips of components.
func (p *Plain) StepFinished(n *plan.Node, r plan.Result, started, ended time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.labels.release(n) {
		p.started(n, n.Label)
	}
	label := Sanitize(p.labels.label(n))
	p.labels.done(n)
	g := groupOf(n)
	d := FormatDuration(ended.Sub(started))
	switch {
	case r.Status == plan.Failed:
		p.println(g, laned(n, p.sty.Red("✗ "+label+" failed")+" ("+d+"): "+SanitizeLines(r.Reason)))
	case r.Warning != "":
		p.println(g, laned(n, p.sty.Yellow("! "+label+" failed; going on ("+wentOnBy(n, "warn")+")")+": "+SanitizeLines(r.Warning)))
	case r.Info != "":
		p.println(g, laned(n, "i "+label+" failed; going on ("+wentOnBy(n, "info")+"): "+SanitizeLines(r.Info)))
	case r.Status == plan.Skipped && (n.Kind == plan.KindBegin || n.SettledUnchanged()):
		if r.Cause == plan.CauseUnchanged {
			p.println(g, p.sty.Dim("= unchanged"))
		} else {
			p.println(g, p.sty.Yellow("- skipped")+": "+SanitizeLines(r.Reason))
		}
	case r.Status == plan.OK && !n.Hidden && !n.Quiet:
		p.println(g, laned(n, p.sty.Green("✓ "+label)+" ("+d+")"))
	}
}

// Log prints a line of a step's output, sanitized like on a terminal: the
// output may still reach one (a pager, a CI log viewer), and colours follow
// gantry's own setting, not the component's.
func (p *Plain) Log(n *plan.Node, line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.labels.release(n) {
		p.started(n, n.Label)
	}
	p.println(groupOf(n), laned(n, Sanitize(line)))
}

// laned puts a step's lane (the branch of a parallel plugin list it runs
// in) before a line of it, so that lines of branches running at once can be
// told apart.
func laned(n *plan.Node, text string) string {
	if n.Lane == "" {
		return text
	}
	return "[" + Sanitize(n.Lane) + "] " + text
}

// FormatDuration shows durations the way people read them: 850ms, 3.2s, 1m05s.
func FormatDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return strings.TrimSuffix(d.Round(time.Second).String(), "0s")
}

// Note announces a step held back with its expanded label; outputs are
// not shown (they appear in explain).
func (p *Plain) Note(n *plan.Node, note plan.Note) {
	if note.Kind != plan.NoteLabel {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.labels.expand(n, note.Value)
	if p.labels.release(n) {
		p.started(n, note.Value)
	}
}

// wentOnBy says why a step that failed went on, logged as level (warn or
// info): its on_fail, and a pause that was told to continue (or --yes).
func wentOnBy(n *plan.Node, level string) string {
	var onFail []string
	switch s := n.Spec.(type) {
	case plan.Injected:
		onFail = s.Step.OnFail
	case plan.Entry:
		onFail = s.OnFail
	}
	if slices.Contains(onFail, "pause") {
		if slices.Contains(onFail, level) {
			return "on_fail: pause, continued, " + level
		}
		return "on_fail: pause, continued"
	}
	return "on_fail: " + level
}
