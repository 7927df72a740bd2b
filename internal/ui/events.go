package ui

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
)

// Event is one line of the JSON event stream (docs/events.md).
type Event struct {
	Time       time.Time       `json:"time"`
	Event      string          `json:"event"`
	Run        string          `json:"run,omitempty"`
	Stack      string          `json:"stack,omitempty"`
	Verb       string          `json:"verb,omitempty"`
	Step       string          `json:"step,omitempty"`
	Kind       string          `json:"kind,omitempty"`
	Label      string          `json:"label,omitempty"`
	Component  string          `json:"component,omitempty"`
	Status     string          `json:"status,omitempty"`
	DurationMS *int64          `json:"duration_ms,omitempty"`
	Reason     string          `json:"reason,omitempty"`
	Warning    string          `json:"warning,omitempty"`
	Info       string          `json:"info,omitempty"`
	Line       *string         `json:"line,omitempty"`
	Name       string          `json:"name,omitempty"`
	Value      *string         `json:"value,omitempty"`
	Secret     bool            `json:"secret,omitempty"`
	Components []ComponentJSON `json:"components,omitempty"`
	LogDir     string          `json:"log_dir,omitempty"`
}

// ComponentJSON is a component's line in run_started and run_finished events.
type ComponentJSON struct {
	Name       string `json:"name"`
	Verb       string `json:"verb"`
	Status     string `json:"status"`
	DurationMS int64  `json:"duration_ms"`
	Reason     string `json:"reason,omitempty"`
}

// Events writes the JSON event stream, one event per line. Lines are
// buffered until the run goes idle (Idle) or Flush.
//
// The stream keeps two promises (docs/events.md): a step_started comes
// before every step_finished of the same step — a step the run skipped
// without starting it gets one at the moment it was skipped — and times
// never go backwards in stream order. Events reach the stream from several
// goroutines, each stamped when it happened, so one stamped a moment
// before the event written ahead of it is written with that event's time.
type Events struct {
	mu  sync.Mutex
	w   *bufio.Writer
	enc *json.Encoder
	buf []byte // one event's line (appendEvent)
	run string
	// last is the time of the event written last.
	last time.Time
	// running are the steps started and not yet finished.
	running map[string]struct{}
	// now stamps the events that come without a time.
	now func() time.Time
	// tap hears every event written (Tap); err is the first write error.
	tap EventTap
	err error
}

// An EventTap hears every event an Events writes, as its line goes to the
// stream: the run that just ended reads its report's facts from what it
// heard instead of decoding its events file again. It is called with the
// Events' lock held and must not keep ev.
type EventTap interface {
	// HeardEvent is an event as written (its time and run set) and its
	// line; line is nil for a line encoding/json wrote.
	HeardEvent(ev *Event, line []byte)
}

// Tap makes t hear every event written from now on.
func (e *Events) Tap(t EventTap) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.tap = t
}

// Err is the first error writing the stream met, once it is flushed: what
// a tap heard is what the stream holds only while Err is nil.
func (e *Events) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.err
}

// NewEvents writes events to w.
func NewEvents(w io.Writer, runID string) *Events {
	bw := bufio.NewWriterSize(w, 64<<10)
	return &Events{w: bw, enc: json.NewEncoder(bw), run: runID, running: map[string]struct{}{}, now: time.Now}
}

// SetClock makes the events that come without a time (log lines, outputs)
// take it from now instead of the wall clock: for a run replayed or
// simulated, whose other events carry times of their own.
func (e *Events) SetClock(now func() time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.now = now
}

// Idle writes the buffered events.
func (e *Events) Idle() { e.Flush() }

// Flush writes the buffered events.
func (e *Events) Flush() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.keep(e.w.Flush())
}

// keep notes the first write error (bufio keeps it too, so every flush
// after returns it); e.mu is held.
func (e *Events) keep(err error) {
	if err != nil && e.err == nil {
		e.err = err
	}
}

// Emit writes one event.
func (e *Events) Emit(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.emit(ev)
}

// emit writes one event; e.mu is held.
func (e *Events) emit(ev Event) {
	if ev.Time.IsZero() {
		ev.Time = e.now().UTC()
	}
	if ev.Time.Before(e.last) {
		ev.Time = e.last
	}
	ev.Run = e.run
	if line, ok := appendEvent(e.buf[:0], &ev); ok {
		e.buf = line
		// A failed write comes back at Flush: bufio keeps its error.
		_, _ = e.w.Write(line)
		e.last = ev.Time
		if e.tap != nil {
			e.tap.HeardEvent(&ev, line)
		}
		return
	}
	// An event encoding/json refuses (a time past year 9999) is not
	// written, and sets no time for those after it.
	if e.enc.Encode(ev) == nil {
		e.last = ev.Time
		if e.tap != nil {
			e.tap.HeardEvent(&ev, nil)
		}
	}
}

func ms(d time.Duration) *int64 { v := d.Milliseconds(); return &v }

// StepStarted emits step_started.
func (e *Events) StepStarted(n *plan.Node, at time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.running[n.ID] = struct{}{}
	e.emit(stepStarted(n, at))
}

func stepStarted(n *plan.Node, at time.Time) Event {
	return Event{Time: at.UTC(), Event: "step_started", Step: n.ID, Kind: string(n.Kind), Label: n.Label, Component: n.Component}
}

// StepFinished emits step_finished (not for failure paths that were not
// taken), after a step_started for a step that was skipped without
// starting.
func (e *Events) StepFinished(n *plan.Node, r plan.Result, started, ended time.Time) {
	if r.Cause == plan.CauseNotNeeded {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.running[n.ID]; ok {
		delete(e.running, n.ID)
	} else {
		e.emit(stepStarted(n, started))
	}
	e.emit(Event{Time: ended.UTC(), Event: "step_finished", Step: n.ID, Kind: string(n.Kind), Label: n.Label, Component: n.Component,
		Status: r.Status.String(), DurationMS: ms(ended.Sub(started)), Reason: r.Reason, Warning: r.Warning, Info: r.Info})
}

// Log emits log.
func (e *Events) Log(n *plan.Node, line string, at time.Time) {
	e.Emit(Event{Time: at.UTC(), Event: "log", Step: n.ID, Component: n.Component, Line: &line})
}

// Note emits output for captured outputs.
func (e *Events) Note(n *plan.Node, note plan.Note) {
	if note.Kind != plan.NoteOutput {
		return
	}
	v := note.Value
	e.Emit(Event{Time: note.Time().UTC(), Event: "output", Step: n.ID, Component: n.Component, Name: note.Name, Value: &v, Secret: note.Secret})
}

// Components converts tracked components for run events.
func Components(comps []ComponentRun) []ComponentJSON {
	out := make([]ComponentJSON, len(comps))
	for i, c := range comps {
		out[i] = ComponentJSON{Name: c.Name, Verb: c.Verb, Status: c.Status, DurationMS: c.Duration().Milliseconds(), Reason: c.Reason}
	}
	return out
}
