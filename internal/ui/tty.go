package ui

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
)

// TTY is the display on a terminal: a live area at the bottom — a header
// with how many components are done, running, waiting and failed and the
// time so far, a line per running component (spinner, elapsed time, its
// step or last output line), with --show-queue the components waiting and
// what for — and above it, scrolling, a line for each component that
// finished. While a step asks something (a gate, a pause), the live area
// steps aside and the step's lines are printed as they come, named by
// their component.
//
// The live area never takes more than two thirds of the terminal's height
// (what does not fit is counted: "+7 more running"), and no line is wider
// than the terminal: every frame is redrawn in place, and none is pushed
// into the scrollback. The terminal is written ten times a second at most,
// by the display's own goroutine: events only update what it draws, so a
// slow terminal never holds the run up.
type TTY struct {
	mu      sync.Mutex // what is drawn: pending, paused, stopped, interrupts, labels
	tracker *Tracker
	sty     Style
	opts    TTYOptions
	pending []aboveLine // lines to print above the live area
	paused  bool
	// stopped is set once Stop draws the last frame: lines printed after
	// it are written at once.
	stopped bool
	// interrupts is how many interrupts the run had (0, 1, 2): the header
	// says the run is stopping.
	interrupts int
	// hold keeps the lines to print above the live area (finished
	// components, -v logs) back while a step asks something, so that the
	// question stays the last line; asker is the group of the step that
	// asks (plan.NoteAsking), whose lines alone are printed meanwhile, and
	// question the last of them as printed. Urgent lines (failures,
	// warnings) are not held: the person deciding must know the run already
	// failed; the question is printed again below them.
	hold     bool
	asker    string
	question string
	labels   stepLabels
	start    time.Time

	out   sync.Mutex // the terminal: one writer at a time
	w     io.Writer
	size  func() (width, height int)
	drawn []int // display width of each live line on the screen
	frame int
	buf   []byte

	stop  chan struct{}
	ended chan struct{}
}

// TTYOptions tune the live display.
type TTYOptions struct {
	// ShowQueue lists the components waiting, each with what it waits for.
	ShowQueue bool
}

var spinner = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// NewTTY returns a live display fed by the tracker's state; size reports the
// terminal's current width and height.
func NewTTY(w io.Writer, sty Style, tracker *Tracker, size func() (width, height int), opts TTYOptions) *TTY {
	return &TTY{w: w, sty: sty, tracker: tracker, size: size, opts: opts}
}

// Start begins drawing the live area ten times a second.
func (t *TTY) Start() {
	t.start = time.Now()
	t.stop = make(chan struct{})
	t.ended = make(chan struct{})
	t.write("\x1b[?25l") // hide the cursor while drawing
	go func() {
		defer close(t.ended)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-t.stop:
				return
			case <-tick.C:
				t.render(true)
			}
		}
	}()
}

// Stop clears the live area, prints the lines still to print and gives the
// cursor back.
func (t *TTY) Stop() {
	if t.stop != nil {
		close(t.stop)
		<-t.ended
	}
	// The terminal is held from the moment Print stops queueing until the
	// last frame is written: a line printed meanwhile comes after it.
	t.out.Lock()
	defer t.out.Unlock()
	t.mu.Lock()
	t.paused, t.stopped, t.hold = true, true, false
	t.mu.Unlock()
	t.renderLocked(false)
	_, _ = io.WriteString(t.w, "\x1b[0m\x1b[?25h") // no attribute left set, the cursor back
}

// Print prints lines of gantry's own (a warning, the interrupt's message,
// an error) above the live area at the next frame, instead of where the
// cursor is, where the frame after would draw over them and they would
// leave a copy of the live area in the scrollback. After Stop they are
// written at once. They are printed while a step asks too.
func (t *TTY) Print(lines ...string) { t.print(true, lines) }

// PrintLog is Print for lines that may wait while a step asks something
// (-v logs): they come after the answer.
func (t *TTY) PrintLog(lines ...string) { t.print(false, lines) }

func (t *TTY) print(urgent bool, lines []string) {
	t.mu.Lock()
	if !t.stopped {
		t.above(urgent, lines...)
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	for _, l := range lines {
		t.write(l + "\n")
	}
}

// Interrupted makes the header say that the run is stopping: after the
// first interrupt, that another one stops every process at once; after the
// second, that they are being stopped.
func (t *TTY) Interrupted(second bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.interrupts = 1
	if second {
		t.interrupts = 2
	}
}

func (t *TTY) write(s string) {
	t.out.Lock()
	defer t.out.Unlock()
	_, _ = io.WriteString(t.w, s)
}

// render writes one frame in one write: over the live area drawn last,
// the lines to print above it and (unless paused) the live area as it is
// now. tick says the spinner moves on.
func (t *TTY) render(tick bool) {
	t.out.Lock()
	defer t.out.Unlock()
	t.renderLocked(tick)
}

// renderLocked is render with the terminal (t.out) held.
func (t *TTY) renderLocked(tick bool) {
	t.mu.Lock()
	lines := t.takePending()
	paused, interrupts := t.paused, t.interrupts
	t.mu.Unlock()
	if tick {
		t.frame++
	}
	width, height := t.size()
	old := t.rows(width)
	t.drawn = t.drawn[:0]
	b := t.buf[:0]
	if old > 0 {
		b = fmt.Appendf(b, "\r\x1b[%dA", old) // to the top of the live area
	}
	for _, l := range lines {
		b = append(b, l...)
		b = append(b, eraseLine...)
	}
	if !paused {
		b = t.draw(b, width, height, interrupts)
	}
	b = t.erase(b, old, len(b) > 0 && (len(lines) > 0 || len(t.drawn) > 0))
	t.buf = b
	if len(b) > 0 {
		_, _ = t.w.Write(b)
	}
}

// eraseLine ends a line written over the live area: the rest of the row
// erased, the next row.
const eraseLine = "\x1b[K\n"

// erase appends what erases the rows of the old live area (old of them)
// that the new lines did not cover. After lines were written the cursor
// is below them and erasing to the end of the screen is enough. Without
// any, the cursor is at the live area's top, which may be the screen's
// top-left corner: there tmux (scroll-on-clear) and some terminals take
// an erase of the whole screen as a clear that pushes it into the
// scrollback, so the rows are erased one at a time.
func (t *TTY) erase(b []byte, old int, wrote bool) []byte {
	switch {
	case old == 0:
	case wrote:
		b = append(b, "\x1b[J"...)
	default:
		for i := 0; i < old; i++ {
			if i > 0 {
				b = append(b, "\x1b[B"...)
			}
			b = append(b, "\x1b[2K"...)
		}
		if old > 1 {
			b = fmt.Appendf(b, "\x1b[%dA", old-1)
		}
	}
	return b
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

// liveRows is how many rows the live area may take in a terminal of height
// rows: two thirds of it, at least 3, always one less than the terminal
// (the cursor's row), so that a frame never scrolls.
func liveRows(height int) int {
	return min(max(height*2/3, 3), height-1)
}

// draw appends the live area: the header, the running components, the
// waiting ones with --show-queue, within liveRows. interrupts is how many
// interrupts the run had.
func (t *TTY) draw(b []byte, width, height, interrupts int) []byte {
	rows := liveRows(height)
	if rows < 1 {
		return b
	}
	avail := rows - 1
	live := t.tracker.Live(avail, avail)
	line := func(s string) {
		s = Truncate(s, width-1)
		b = append(b, s...)
		b = append(b, eraseLine...)
		t.drawn = append(t.drawn, Width(s))
	}
	line(t.header(&live, interrupts))
	running, waiting := live.Active, live.Counts[Waiting]
	runRows := min(running, avail)
	queueRows := 0
	if t.opts.ShowQueue && waiting > 0 {
		queueRows = min(waiting, max(avail-runRows, avail/3))
		runRows = min(running, avail-queueRows)
	}
	now := time.Now()
	shown := len(live.Running)
	if runRows < running {
		shown = runRows - 1
	}
	for _, c := range live.Running[:max(0, min(shown, len(live.Running)))] {
		// The tracker keeps lines sanitized; the step label and the name
		// come from manifests, so they are sanitized here too.
		line(fmt.Sprintf("%s %s  %s  %s", spinner[t.frame%len(spinner)], Sanitize(c.Name), FormatDuration(now.Sub(c.Started)), Sanitize(c.Detail())))
	}
	if runRows > 0 && runRows < running {
		line(t.sty.Dim(fmt.Sprintf("  +%d more running", running-max(shown, 0))))
	}
	shown = min(len(live.Waiting), queueRows)
	if queueRows < waiting {
		shown = queueRows - 1
	}
	for _, q := range live.Waiting[:max(0, shown)] {
		line(t.sty.Dim("· " + Sanitize(q.Name) + "  " + waitingFor(q)))
	}
	if queueRows > 0 && queueRows < waiting {
		line(t.sty.Dim(fmt.Sprintf("  +%d more waiting", waiting-max(shown, 0))))
	}
	return b
}

// header is the first line of the live area: "3/10 done · 2 running ·
// 4 waiting · 1 failed · 12.3s · deploy web" — the counts first, so that
// a narrow terminal cuts the names. After an interrupt, what it does comes
// before the names: "· stopping (interrupt again to stop at once) ·".
func (t *TTY) header(l *Live, interrupts int) string {
	c := l.Counts
	done := c[Deployed] + c[Undeployed] + c[Done] + c[Unchanged]
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d/%d done · %d running · %d waiting · ", done, l.Total, c[Running], c[Waiting])
	failed := fmt.Sprintf("%d failed", c[Failed])
	if c[Failed] > 0 {
		failed = t.sty.Red(failed)
	}
	sb.WriteString(failed)
	if c[Skipped] > 0 {
		fmt.Fprintf(&sb, " · %d skipped", c[Skipped])
	}
	sb.WriteString(" · " + FormatDuration(time.Since(t.start).Truncate(100*time.Millisecond)))
	switch interrupts {
	case 1:
		sb.WriteString(" · " + t.sty.Yellow("stopping (interrupt again to stop at once)"))
	case 2:
		sb.WriteString(" · " + t.sty.Yellow("stopping every process now"))
	}
	sb.WriteString(" · " + l.Verb)
	if l.Stack != "" {
		sb.WriteString(" " + Sanitize(l.Stack))
	}
	return sb.String()
}

// waitingFor says what a waiting component waits for.
func waitingFor(q Queued) string {
	if len(q.Blocked) > 0 {
		names := make([]string, len(q.Blocked))
		for i, n := range q.Blocked {
			names[i] = Sanitize(n)
		}
		return "after " + strings.Join(names, ", ")
	}
	return "waiting for a free slot (--parallel)"
}

// aboveLine is a line to print above the live area; an urgent one (a
// failure, a warning) is printed even while a step asks.
type aboveLine struct {
	text   string
	urgent bool
}

// above queues lines to print above the live area at the next frame; t.mu
// is held.
func (t *TTY) above(urgent bool, lines ...string) {
	for _, l := range lines {
		t.pending = append(t.pending, aboveLine{l, urgent})
	}
}

// takePending returns the lines to print at this frame, and keeps those
// held while a step asks; t.mu is held. When urgent lines are printed
// meanwhile, the question comes again below them, so that it stays the
// last line, where the answer is typed.
func (t *TTY) takePending() []string {
	var lines []string
	kept := t.pending[:0]
	for _, l := range t.pending {
		if t.hold && !l.urgent {
			kept = append(kept, l)
			continue
		}
		lines = append(lines, l.text)
	}
	if t.hold && len(lines) > 0 && t.question != "" {
		lines = append(lines, t.question)
	}
	t.pending = kept
	return lines
}

// StepStarted is drawn from the tracker.
func (t *TTY) StepStarted(*plan.Node, time.Time) {}

// StepFinished prints a line when a component finishes (at its end step,
// run or skipped), for each step of the stack's flight groups, and for
// failures that on_fail let pass.
func (t *TTY) StepFinished(n *plan.Node, r plan.Result, started, ended time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	g, label := Sanitize(groupOf(n)), Sanitize(firstLine(t.labels.label(n)))
	t.labels.done(n)
	switch {
	case r.Warning != "":
		t.above(true, t.sty.Yellow("! "+g+": "+label+" failed; going on: ")+Sanitize(firstLine(r.Warning)))
		return
	case r.Info != "":
		t.above(false, "i "+g+": "+label+" failed; going on: "+Sanitize(firstLine(r.Info)))
		return
	case n.Component == "":
		switch {
		case n.Hidden || n.Quiet:
		case r.Status == plan.OK:
			t.above(false, t.sty.Green("✓ "+g+": "+label)+" "+t.sty.Dim(FormatDuration(ended.Sub(started))))
		case r.Status == plan.Failed:
			t.above(true, t.sty.Red("✗ "+g+": "+label+" failed")+"  "+Sanitize(firstLine(r.Reason)))
		}
		return
	case !n.Settles():
		return
	}
	c, ok := t.tracker.Component(groupOf(n))
	if !ok {
		return
	}
	var line string
	urgent := c.Status == Failed
	switch c.Status {
	case Failed:
		line = t.sty.Red(fmt.Sprintf("✗ %-20s %-10s %s", g, c.ShownStatus(), FormatDuration(c.Duration()))) + "  " + Sanitize(firstLine(c.Reason))
	case Skipped:
		line = t.sty.Yellow(fmt.Sprintf("- %-20s skipped", g)) + "    " + Sanitize(firstLine(c.Reason))
	case Unchanged:
		line = t.sty.Dim(fmt.Sprintf("= %-20s unchanged", g))
	default:
		line = t.sty.Green(fmt.Sprintf("✓ %-20s %-10s %s", g, c.Status, FormatDuration(c.Duration())))
	}
	t.above(urgent, line)
}

// Log shows output lines only while the live area stands aside (a prompt),
// named by their component, and then only the asking step's group's
// (plan.NoteAsking) when it is known; otherwise the last line appears in
// the component's live line, and all of them in the run log.
func (t *TTY) Log(n *plan.Node, line string, _ time.Time) {
	t.mu.Lock()
	if !t.paused || t.asker != "" && t.asker != groupOf(n) {
		t.mu.Unlock()
		return
	}
	shown := t.sty.Dim("["+Sanitize(groupOf(n))+"]") + " " + Sanitize(line)
	if t.asker != "" {
		t.question = shown // its last line: the question
	}
	t.mu.Unlock()
	t.write(shown + "\n")
}

// Note keeps the expanded labels of the stack's steps, for their lines.
func (t *TTY) Note(n *plan.Node, note plan.Note) {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch note.Kind {
	case plan.NoteLabel:
		t.labels.expand(n, note.Value)
	case plan.NoteAsking:
		if t.paused {
			t.asker = groupOf(n)
		}
	}
}

// Paused hides the live area while a step talks to the person at the
// terminal, and brings it back. The lines to print above it are printed
// first, then held back until the answer.
func (t *TTY) Paused(on bool) {
	t.mu.Lock()
	t.paused, t.hold, t.asker, t.question = on, false, "", ""
	t.mu.Unlock()
	t.render(false)
	t.mu.Lock()
	t.hold = on && !t.stopped
	t.mu.Unlock()
	if on {
		t.write("\x1b[?25h")
	} else {
		t.write("\x1b[?25l")
	}
}
