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
	// While a step asks something (a gate, a pause: Paused, then
	// plan.NoteAsking), asker is its group: other groups' lines are held
	// until the answer, so that the question stays the last line with the
	// answer typed under it; failures are not held (nor the lines held of
	// their group, which lead up to them), and the question (the asker's
	// last line) is written again below them.
	asker, question string
	held            []heldLine
	// heldBytes is the size of held; past maxHeld, lines are counted in
	// dropped, by group, instead (a chatty component beside a question
	// that waits for hours), and said when released.
	heldBytes int
	dropped   map[string]int
}

// maxHeld bounds the lines held while a step asks: what is past it is in
// the run's logs.
const maxHeld = 1 << 20

// heldLine is a line of group held while another group's step asks.
type heldLine struct{ group, line string }

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

// println writes a line, or holds it while another group's step asks
// something; p.mu is held.
func (p *Plain) println(prefix, text string) { p.emit(prefix, text, false) }

// emit is println; an urgent line (a failure) is never held. p.mu is held.
func (p *Plain) emit(prefix, text string, urgent bool) {
	line := p.sty.Dim("["+prefix+"]") + " " + text + "\n"
	switch {
	case p.asker == "":
		_, _ = p.w.WriteString(line)
		return
	case prefix == p.asker:
		p.question = line
		_, _ = p.w.WriteString(line)
	case !urgent:
		if p.heldBytes+len(line) > maxHeld {
			if p.dropped == nil {
				p.dropped = map[string]int{}
			}
			p.dropped[prefix]++
			return
		}
		p.held = append(p.held, heldLine{prefix, line})
		p.heldBytes += len(line)
		return
	default:
		p.release(prefix)
		_, _ = p.w.WriteString(line + p.question)
	}
	// The person at the terminal reads this now, not when the run idles.
	_ = p.w.Flush()
}

// Paused holds other groups' lines from the moment a step says it asks
// (plan.NoteAsking), and writes them once it has its answer.
func (p *Plain) Paused(on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		_ = p.w.Flush()
		return
	}
	p.asker, p.question = "", ""
	p.release("")
	_ = p.w.Flush()
}

// release writes the lines held of group (of every group when ""); p.mu is
// held.
func (p *Plain) release(group string) {
	kept := p.held[:0]
	p.heldBytes = 0
	for _, l := range p.held {
		if group != "" && l.group != group {
			kept = append(kept, l)
			p.heldBytes += len(l.line)
			continue
		}
		_, _ = p.w.WriteString(l.line)
	}
	p.held = kept
	groups := make([]string, 0, len(p.dropped))
	for g := range p.dropped {
		if group == "" || g == group {
			groups = append(groups, g)
		}
	}
	slices.Sort(groups)
	for _, g := range groups {
		_, _ = p.w.WriteString(p.sty.Dim("["+g+"]") + " " + fmt.Sprintf("… %d more lines while a question waited, not shown here: they are in the run's log", p.dropped[g]) + "\n")
		delete(p.dropped, g)
	}
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
	if p.labels.hold(n, time.Time{}) {
		return
	}
	p.started(n, n.Label)
}

// StepFinished reports how visible steps ended, and skips of components.
func (p *Plain) StepFinished(n *plan.Node, r plan.Result, started, ended time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, held := p.labels.release(n); held {
		p.started(n, n.Label)
	}
	label := Sanitize(p.labels.label(n))
	p.labels.done(n)
	g := groupOf(n)
	d := FormatDuration(ended.Sub(started))
	switch {
	case r.Status == plan.Failed:
		p.emit(g, laned(n, p.sty.Red("✗ "+label+" failed")+" ("+d+"): "+SanitizeLines(r.Reason)), true)
	case r.Warning != "":
		p.emit(g, laned(n, p.sty.Yellow("! "+label+" failed; going on ("+wentOnBy(n, "warn")+")")+": "+SanitizeLines(r.Warning)), true)
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
func (p *Plain) Log(n *plan.Node, line string, _ time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, held := p.labels.release(n); held {
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
	p.mu.Lock()
	defer p.mu.Unlock()
	switch note.Kind {
	case plan.NoteAsking:
		p.asker = groupOf(n)
		return
	case plan.NoteLabel:
	default:
		return
	}
	p.labels.expand(n, note.Value)
	if _, held := p.labels.release(n); held {
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
