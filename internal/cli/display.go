package cli

import (
	"fmt"
	"os"

	"golang.org/x/term"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/ui"
)

// display shows a run on stdout: one JSON event per line with --output json,
// the live display on a terminal, plain lines otherwise; and at the end the
// summary.
type display struct {
	a      *app
	output string
	opts   ui.TTYOptions
	sty    ui.Style
	live   *ui.TTY
	events *ui.Events
}

func (a *app) display(output string, opts ui.TTYOptions) *display {
	return &display{a: a, output: output, opts: opts, sty: ui.Style{Color: a.color()}}
}

// Start picks how the run is shown.
func (d *display) Start(r *action.Started) plan.Observer {
	a := d.a
	switch {
	case d.output == "json":
		d.events = ui.NewEvents(a.stdout, r.RunID)
		d.events.Emit(r.Event)
		return d.events
	case a.liveTerminal() != nil:
		fd := int(a.liveTerminal().Fd())
		d.live = ui.NewTTY(a.stdout, d.sty, r.Tracker, func() (int, int) {
			w, h, err := term.GetSize(fd)
			if err != nil || w <= 0 || h <= 0 {
				return 80, 24
			}
			return w, h
		}, d.opts)
		d.live.Start()
		if a.errs != nil {
			a.errs.showOn(d.live, a.liveTerminal())
		}
		return d.live
	}
	return ui.NewPlain(a.stdout, d.sty)
}

// Finish ends the live display and prints how the run ended.
func (d *display) Finish(o *action.Outcome) {
	if d.live != nil {
		d.live.Stop()
		if d.a.errs != nil {
			d.a.errs.detach()
		}
	}
	if d.events != nil {
		d.events.Emit(o.Event)
		d.events.Flush()
		return
	}
	d.a.printRunEnd(o)
}

// stoppedAny reports whether a failure stopped any step from starting.
func stoppedAny(results map[string]plan.Result) bool {
	for _, r := range results {
		if r.Status == plan.Skipped && r.Cause == plan.CauseStopped {
			return true
		}
	}
	return false
}

// printRunEnd prints the summary, the last lines of failed components' logs
// and where the logs are.
func (a *app) printRunEnd(o *action.Outcome) {
	fmt.Fprintln(a.stdout)
	ui.WriteSummary(a.stdout, o.Components, o.Duration)
	for _, c := range o.Components {
		if c.Status != ui.Failed {
			continue
		}
		tail := o.RunLog.Tail(c.Name, 20)
		if len(tail) == 0 {
			continue
		}
		fmt.Fprintf(a.stdout, "\nlast lines of %s:\n", relPath(o.RunLog.Path(c.Name)))
		for _, line := range tail {
			// The log keeps the raw text; the terminal gets what it shows.
			fmt.Fprintln(a.stdout, "  "+ui.Sanitize(line))
		}
	}
	// An interrupted run stopped for the interrupt, whatever failed on the
	// way: --force would not have gone on. Nor does --force help when the
	// failure stopped nothing (the post-flight group, last).
	if h := o.Engine.HaltedBy; h != "" && !o.Engine.Cancelled && stoppedAny(o.Engine.Results) {
		fmt.Fprintf(a.stdout, "\nstopped after %s failed (mandatory); --force goes on with independent components\n", h)
	}
	fmt.Fprintf(a.stdout, "\nlogs: %s\n", relPath(o.LogDir))
}

// color reports whether to colour the output: not with NO_COLOR or
// --no-color, and only on a terminal that can show colours (not TERM=dumb).
func (a *app) color() bool {
	return !a.noColor && a.liveTerminal() != nil
}

// liveTerminal returns stdout when it is a terminal that can move its
// cursor and show colours, for the live display; nil for a terminal that
// says it cannot (TERM=dumb, or no TERM: Emacs' shell, a serial console),
// which gets plain lines, as when stdout is not a terminal.
func (a *app) liveTerminal() *os.File {
	if dumbTerminal() {
		return nil
	}
	return a.stdoutTerminal()
}

// dumbTerminal reports whether TERM says the terminal cannot move its
// cursor nor show colours: dumb, or unset.
func dumbTerminal() bool {
	t := os.Getenv("TERM")
	return t == "" || t == "dumb"
}

// stdoutTerminal returns stdout when it is a terminal, else nil.
func (a *app) stdoutTerminal() *os.File {
	f, ok := a.stdout.(*os.File)
	if ok && isTerminal(f) {
		return f
	}
	return nil
}
