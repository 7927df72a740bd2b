package engine

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/lines"
	"github.com/gantry-dev/gantry/internal/plan"
)

// stepEnv is the plan.Env of one running step.
type stepEnv struct {
	r       *run
	n       *plan.Node
	streams lines.Writers
	// logMu keeps the step's lines one at a time: its streams are written
	// from several goroutines, and observers take a step's events in turn.
	logMu sync.Mutex
}

func (e *stepEnv) log(line string, continued, continues bool) {
	e.logMu.Lock()
	at := time.Now()
	if pl, ok := e.r.opts.Observer.(plan.PieceLogger); ok {
		pl.LogPiece(e.n, line, continued, continues, at)
	} else {
		e.r.opts.Observer.Log(e.n, line, at)
	}
	e.logMu.Unlock()
}

// Stream returns a line writer of its own: a process's stdout and stderr
// each take one, so that a partial line of one is never glued to a line of
// the other.
func (e *stepEnv) Stream() io.Writer { return e.streams.New(e.log) }

func (e *stepEnv) Logf(format string, args ...any) {
	e.log(fmt.Sprintf(format, args...), false, false)
}

// flush emits the last line of each stream that did not end with a newline.
func (e *stepEnv) flush() { e.streams.Flush() }

func (e *stepEnv) Interactive() bool { return e.r.opts.Interactive }

func (e *stepEnv) Note(n plan.Note) {
	if n.At.IsZero() {
		n.At = time.Now()
	}
	e.logMu.Lock()
	e.r.opts.Observer.Note(e.n, n)
	e.logMu.Unlock()
}
func (e *stepEnv) Yes() bool     { return e.r.opts.Yes }
func (e *stepEnv) RunID() string { return e.r.opts.RunID }

// Result returns the result of an input of the step. Inputs come before the
// step in the plan, so they have finished: their results were written by the
// executor's loop before it started this step.
func (e *stepEnv) Result(id string) plan.Result {
	if !slices.Contains(e.n.Inputs, id) {
		panic(fmt.Sprintf("step %s reads step %s, which is not among its inputs", e.n.ID, id))
	}
	return e.r.s.Result(e.r.p.Node(id).Index())
}

// Ask logs the question and asks it on the terminal. An interrupt does not
// wait for the answer: the read goes on alone (the run ends soon after) and
// the step hears that it was interrupted.
func (e *stepEnv) Ask(question string) (string, error) {
	if e.r.opts.Ask == nil || !e.r.opts.Interactive {
		return "", errors.New("no terminal to read an answer from")
	}
	e.Logf("%s", question)
	type answer struct {
		line string
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		line, err := e.r.opts.Ask(plan.Asking(e.n, question))
		got <- answer{line, err}
	}()
	select {
	case a := <-got:
		return a.line, a.err
	case <-e.r.ctx.Done():
		return "", errors.New("interrupted while waiting for an answer")
	}
}

// Pause holds back new steps while fn runs; prompts of concurrent steps take
// turns.
func (e *stepEnv) Pause(fn func() error) error {
	r := e.r
	r.mu.Lock()
	r.pauseCount++
	r.mu.Unlock()
	r.pauseMu.Lock()
	// A live display steps aside while someone is asked something.
	pa, _ := r.opts.Observer.(plan.Pauser)
	if pa != nil {
		pa.Paused(true)
	}
	err := fn()
	if pa != nil {
		pa.Paused(false)
	}
	r.pauseMu.Unlock()
	r.mu.Lock()
	r.pauseCount--
	r.mu.Unlock()
	select {
	case r.resume <- struct{}{}:
	default:
	}
	return err
}
