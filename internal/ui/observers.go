package ui

import (
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/secret"
)

// Multi fans events out to several observers, in order.
type Multi []plan.Observer

// StepStarted forwards the event.
func (m Multi) StepStarted(n *plan.Node, at time.Time) {
	for _, o := range m {
		o.StepStarted(n, at)
	}
}

// StepFinished forwards the event.
func (m Multi) StepFinished(n *plan.Node, r plan.Result, started, ended time.Time) {
	for _, o := range m {
		o.StepFinished(n, r, started, ended)
	}
}

// Log forwards the event.
func (m Multi) Log(n *plan.Node, line string, at time.Time) {
	for _, o := range m {
		o.Log(n, line, at)
	}
}

// Note forwards the event.
func (m Multi) Note(n *plan.Node, note plan.Note) {
	for _, o := range m {
		o.Note(n, note)
	}
}

// Masked masks secrets in log lines and results before anything else sees
// them: the display, the run logs and the JSON events all sit behind it.
type Masked struct {
	Masker *secret.Masker
	Next   plan.Observer
}

// StepStarted forwards the event.
func (m Masked) StepStarted(n *plan.Node, at time.Time) { m.Next.StepStarted(n, at) }

// StepFinished masks the reasons and forwards the event.
func (m Masked) StepFinished(n *plan.Node, r plan.Result, started, ended time.Time) {
	r.Reason = m.Masker.Text(r.Reason)
	r.Warning = m.Masker.Text(r.Warning)
	r.Info = m.Masker.Text(r.Info)
	r.Label = m.Masker.Text(r.Label)
	if r.Err != nil {
		r.Err = maskedError{m.Masker.Text(r.Err.Error())}
	}
	m.Next.StepFinished(n, r, started, ended)
}

// Log masks the line and forwards it.
func (m Masked) Log(n *plan.Node, line string, at time.Time) {
	m.Next.Log(n, m.Masker.Text(line), at)
}

// LogPiece masks a piece of a line and forwards it as a line: a secret cut
// between two pieces is masked on both sides, one longer than a piece in
// every piece it fills.
func (m Masked) LogPiece(n *plan.Node, piece string, continued, continues bool, at time.Time) {
	m.Next.Log(n, m.Masker.Piece(piece, continued, continues), at)
}

type maskedError struct{ s string }

func (e maskedError) Error() string { return e.s }

// MaxNoteValue bounds a value an event shows (an output's: the state keeps
// it whole): events are lines of events.jsonl, the report and the display.
const MaxNoteValue = 64 << 10

// Note masks secret values and forwards the event, a long value cut.
func (m Masked) Note(n *plan.Node, note plan.Note) {
	if note.Secret {
		note.Value = secret.Mask
	} else {
		note.Value = m.Masker.Text(note.Value)
		if len(note.Value) > MaxNoteValue {
			cut := MaxNoteValue
			for cut > 0 && !utf8.RuneStart(note.Value[cut]) {
				cut--
			}
			note.Value = fmt.Sprintf("%s… (%d bytes; the state keeps it whole)", note.Value[:cut], len(note.Value))
		}
	}
	m.Next.Note(n, note)
}

// Paused tells every observer that can step aside.
func (m Multi) Paused(on bool) {
	for _, o := range m {
		if p, ok := o.(interface{ Paused(bool) }); ok {
			p.Paused(on)
		}
	}
}

// Paused passes the pause on.
func (m Masked) Paused(on bool) {
	if p, ok := m.Next.(interface{ Paused(bool) }); ok {
		p.Paused(on)
	}
}
