package ui

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
)

// TTY is the display on a terminal: a live area at the bottom with one line
// per running component (spinner, elapsed time, its step or last output line,
// cut to the terminal's width), and above it, scrolling, a line for each
// component that finished. While a step asks something (a gate, a pause), the
// live area steps aside and the step's lines are printed as they come.
type TTY struct {
	mu      sync.Mutex
	w       io.Writer
	sty     Style
	tracker *Tracker
	width   func() int

	drawn  []int // display width of each live line drawn
	paused bool
	frame  int
	stop   chan struct{}
	ended  chan struct{}
}

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// NewTTY returns a live display fed by the tracker's state; width reports the
// terminal's current width.
func NewTTY(w io.Writer, sty Style, tracker *Tracker, width func() int) *TTY {
	return &TTY{w: w, sty: sty, tracker: tracker, width: width}
}

// Start begins redrawing the live area ten times a second.
func (t *TTY) Start() {
	t.stop = make(chan struct{})
	t.ended = make(chan struct{})
	io.WriteString(t.w, "\x1b[?25l") // hide the cursor while drawing
	go func() {
		defer close(t.ended)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-t.stop:
				return
			case <-tick.C:
				t.mu.Lock()
				t.frame++
				t.redraw()
				t.mu.Unlock()
			}
		}
	}()
}

// Stop clears the live area and gives the cursor back.
func (t *TTY) Stop() {
	if t.stop != nil {
		close(t.stop)
		<-t.ended
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clear()
	io.WriteString(t.w, "\x1b[0m\x1b[?25h") // no attribute left set, the cursor back
}

// rows is how many terminal rows the live area takes now. Lines are drawn
// narrower than the terminal; when it shrinks, a terminal that rewraps (tmux,
// most modern ones) spreads a line that no longer fits over several rows.
func (t *TTY) rows(width int) int {
	n := 0
	for _, w := range t.drawn {
		if width <= 0 {
			n++
			continue
		}
		n += max(1, (w+width-1)/width)
	}
	return n
}

// clear removes the live area; the cursor ends where it began.
func (t *TTY) clear() {
	n := t.rows(t.width())
	if n > 0 {
		fmt.Fprintf(t.w, "\r\x1b[%dA\x1b[J", n)
	} else {
		io.WriteString(t.w, "\r\x1b[J")
	}
	t.drawn = t.drawn[:0]
}

// above prints lines above the live area.
func (t *TTY) above(lines ...string) {
	if !t.paused {
		t.clear()
	}
	for _, l := range lines {
		io.WriteString(t.w, l+"\n")
	}
	if !t.paused {
		t.draw()
	}
}

func (t *TTY) redraw() {
	if t.paused {
		return
	}
	t.clear()
	t.draw()
}

// draw writes the live area: a line per running component.
func (t *TTY) draw() {
	width := t.width()
	now := time.Now()
	for _, c := range t.tracker.Components() {
		if c.Status != Running {
			continue
		}
		detail := c.Current
		if c.LastLine != "" {
			detail = c.LastLine
		}
		// The tracker keeps lines sanitized; the step label and the name
		// come from manifests, so they are sanitized here too.
		line := fmt.Sprintf("%s %s  %s  %s", spinner[t.frame%len(spinner)], Sanitize(c.Name), FormatDuration(now.Sub(c.Started)), Sanitize(detail))
		line = Truncate(line, width-1)
		io.WriteString(t.w, line+"\n")
		t.drawn = append(t.drawn, Width(line))
	}
}

// StepStarted redraws.
func (t *TTY) StepStarted(*plan.Node, time.Time) {}

// StepFinished prints a line when a component finishes (at its end step,
// run or skipped), for each step of the stack's flight groups, and for
// failures that on_fail let pass.
func (t *TTY) StepFinished(n *plan.Node, r plan.Result, started, ended time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	g, label := Sanitize(groupOf(n)), Sanitize(firstLine(n.Label))
	switch {
	case r.Warning != "":
		t.above(t.sty.Yellow("! "+g+": "+label+" failed; going on: ") + Sanitize(firstLine(r.Warning)))
		return
	case r.Info != "":
		t.above("i " + g + ": " + label + " failed; going on: " + Sanitize(firstLine(r.Info)))
		return
	case n.Component == "":
		switch {
		case n.Hidden || n.Quiet:
		case r.Status == plan.OK:
			t.above(t.sty.Green("✓ "+g+": "+label) + " " + t.sty.Dim(FormatDuration(ended.Sub(started))))
		case r.Status == plan.Failed:
			t.above(t.sty.Red("✗ "+g+": "+label+" failed") + "  " + Sanitize(firstLine(r.Reason)))
		}
		return
	case n.Kind != plan.KindEnd:
		return
	}
	c, ok := t.tracker.Component(groupOf(n))
	if !ok {
		return
	}
	var line string
	switch c.Status {
	case Failed:
		line = t.sty.Red(fmt.Sprintf("✗ %-20s failed     %s", g, FormatDuration(c.Duration()))) + "  " + Sanitize(firstLine(c.Reason))
	case Skipped:
		line = t.sty.Yellow(fmt.Sprintf("- %-20s skipped", g)) + "    " + Sanitize(firstLine(c.Reason))
	case Unchanged:
		line = t.sty.Dim(fmt.Sprintf("= %-20s unchanged", g))
	default:
		line = t.sty.Green(fmt.Sprintf("✓ %-20s %-10s %s", g, c.Status, FormatDuration(c.Duration())))
	}
	t.above(line)
}

// Log shows output lines only while the live area stands aside (a prompt);
// otherwise the last line appears in the component's live line, and all of
// them in the run log.
func (t *TTY) Log(n *plan.Node, line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.paused {
		io.WriteString(t.w, Sanitize(line)+"\n")
	}
}

// Note is not shown.
func (t *TTY) Note(*plan.Node, plan.Note) {}

// Paused hides the live area while a step talks to the person at the terminal.
func (t *TTY) Paused(on bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if on {
		t.clear()
		io.WriteString(t.w, "\x1b[?25h")
		t.paused = true
		return
	}
	t.paused = false
	io.WriteString(t.w, "\x1b[?25l")
	t.draw()
}
