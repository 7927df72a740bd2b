package plan

import (
	"context"
	"io"
	"time"
)

// Env is what the executor gives a running step.
type Env interface {
	// Stream returns a new stream of the step's output: what is written to
	// it goes to the run log and the display one line at a time, secrets
	// masked. Each source of output (a process's stdout, its stderr) takes a
	// stream of its own, so that their partial lines never mix.
	Stream() io.Writer
	// Logf writes one line to the step's log and display.
	Logf(format string, args ...any)
	// Pause stops new steps from starting while fn runs (a prompt on the
	// terminal), then lets them go on.
	Pause(fn func() error) error
	// Outside runs fn, which waits for something outside the run (another
	// gantry run's lock), with the step's --parallel slot given back meanwhile:
	// the run's other steps go on, so two runs waiting for each other's locks
	// cannot fill each other's slots.
	Outside(fn func() error) error
	// Interactive reports whether a person can answer prompts (stdin is a terminal).
	Interactive() bool
	// Ask shows question to the person at the terminal, and in the step's
	// log, and reads one line of answer.
	Ask(question string) (string, error)
	// Yes reports whether --yes approved every gate.
	Yes() bool
	// RunID is the id of the run.
	RunID() string
	// Note reports something the step learned (an output it captured) to the
	// display and the events.
	Note(Note)
	// Result returns the result of one of the step's inputs (Node.Inputs):
	// how it ended and the data it handed on. Asking for a step that is not
	// an input is a bug; it panics.
	Result(id string) Result
}

// NoteKind says what a note reports.
type NoteKind uint8

// Note kinds.
const (
	// NoteOutput is an output a component produced.
	NoteOutput NoteKind = iota + 1
	// NoteLabel is the step's label with its values expanded (${…}, #{…},
	// {{…}}), known once the step runs: displays show it in place of the
	// label of the plan, which names them.
	NoteLabel
	// NoteAsking says the step is about to ask the person at the terminal
	// something (a gate, a pause), with the run held back: a display that
	// steps aside for it shows only this step's group's lines meanwhile,
	// so that other components' output does not push the question away.
	NoteAsking
)

// Note is something a step reports besides its output lines.
type Note struct {
	Kind   NoteKind
	Name   string
	Value  string
	Secret bool
	// At is when the step said it (observers may hear of it later); zero
	// when unknown (a worker's note).
	At time.Time
}

// Time is when the note was said: At, or now when it is not known.
func (n Note) Time() time.Time {
	if n.At.IsZero() {
		return time.Now()
	}
	return n.At
}

// Runner does the work of a step.
type Runner interface {
	Run(ctx context.Context, env Env) Result
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, env Env) Result

// Run calls f.
func (f RunnerFunc) Run(ctx context.Context, env Env) Result { return f(ctx, env) }

// Observer receives the events of a run: the displays, the run logs and the
// JSON events are observers. Calls come from several goroutines but never for
// the same step at once.
type Observer interface {
	StepStarted(n *Node, at time.Time)
	StepFinished(n *Node, r Result, started, ended time.Time)
	// Log is a line of a step's output, at the time the step printed it
	// (observers may hear of it later).
	Log(n *Node, line string, at time.Time)
	Note(n *Node, note Note)
}

// PieceLogger is implemented by observers that must know which log lines
// are pieces of a longer one: a line longer than a writer holds back comes
// in pieces, each but the first going on from the last piece of its stream
// (continued), each but the last going on in the next (continues). A
// masker needs it, for a secret cut between two pieces or longer than one.
// Observers without it are given the pieces as lines (Log).
type PieceLogger interface {
	LogPiece(n *Node, piece string, continued, continues bool, at time.Time)
}

// Asking is a step's question as the terminal asks it, named by the
// component (or the stack's group) that asks, as the display names its
// lines: with parallel components, which gate is being answered.
func Asking(n *Node, question string) string {
	if n.Group == "" {
		return question
	}
	return "[" + n.Group + "] " + question
}

// Pauser is implemented by observers that must step aside while a step asks
// the person at the terminal something (a gate, a pause).
type Pauser interface {
	Paused(on bool)
}
