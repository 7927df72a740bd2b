package ui

import (
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
)

// Async hands events to its observers on a goroutine of its own, in order:
// the executor's loop only queues them, and never waits for a display, a
// log file or the JSON encoder before it starts the next step. When the
// queue runs dry it tells the observers (Idle), which write what they
// buffered, so files and streams stay current.
type Async struct {
	next  plan.Observer
	queue chan func()
	done  chan struct{}
}

// NewAsync starts delivering events to next.
func NewAsync(next plan.Observer) *Async {
	a := &Async{next: next, queue: make(chan func(), 4096), done: make(chan struct{})}
	go a.deliver()
	return a
}

func (a *Async) deliver() {
	defer close(a.done)
	idler, _ := a.next.(interface{ Idle() })
	for fn := range a.queue {
		fn()
		if len(a.queue) == 0 && idler != nil {
			idler.Idle()
		}
	}
}

// StepStarted queues the event.
func (a *Async) StepStarted(n *plan.Node, at time.Time) {
	a.queue <- func() { a.next.StepStarted(n, at) }
}

// StepFinished queues the event.
func (a *Async) StepFinished(n *plan.Node, r plan.Result, started, ended time.Time) {
	a.queue <- func() { a.next.StepFinished(n, r, started, ended) }
}

// Log queues the event.
func (a *Async) Log(n *plan.Node, line string, at time.Time) {
	a.queue <- func() { a.next.Log(n, line, at) }
}

// LogPiece queues the event.
func (a *Async) LogPiece(n *plan.Node, piece string, continued, continues bool, at time.Time) {
	a.queue <- func() {
		if pl, ok := a.next.(plan.PieceLogger); ok {
			pl.LogPiece(n, piece, continued, continues, at)
		} else {
			a.next.Log(n, piece, at)
		}
	}
}

// Note queues the event.
func (a *Async) Note(n *plan.Node, note plan.Note) {
	a.queue <- func() { a.next.Note(n, note) }
}

// Flush waits until every event queued so far is delivered and written.
func (a *Async) Flush() {
	c := make(chan struct{})
	a.queue <- func() { close(c) }
	<-c
}

// Paused delivers what is queued, then lets the observers step aside (or
// come back) before the caller goes on: a prompt must not race the display.
func (a *Async) Paused(on bool) {
	a.Flush()
	if p, ok := a.next.(interface{ Paused(bool) }); ok {
		p.Paused(on)
	}
}

// Close delivers what is queued and stops. No event may follow.
func (a *Async) Close() {
	close(a.queue)
	<-a.done
}

// Idle forwards to the observers that buffer.
func (m Multi) Idle() {
	for _, o := range m {
		if i, ok := o.(interface{ Idle() }); ok {
			i.Idle()
		}
	}
}

// Idle forwards to the observers that buffer.
func (m Masked) Idle() {
	if i, ok := m.Next.(interface{ Idle() }); ok {
		i.Idle()
	}
}

// Idle tells an observer that buffers to write what it holds, for callers
// outside Async that want each event out at once.
func Idle(o plan.Observer) {
	if i, ok := o.(interface{ Idle() }); ok {
		i.Idle()
	}
}
