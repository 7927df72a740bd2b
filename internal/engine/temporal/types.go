// Package temporal is gantry's second engine (docs/temporal.md): a plan runs
// as a Temporal workflow — driven by the same deterministic scheduler as the
// local executor (engine.Scheduler) — and each of its steps as an activity
// that `gantry worker` processes carry out with the one runner of the step's
// kind. It is the only package that imports the Temporal SDK; only the
// gantry binary links it (cmd/gantry/plugins.go), as the heavy plugins.
package temporal

import (
	"encoding/json"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
)

// Names on the server.
const (
	// WorkflowName is the workflow that runs a plan.
	WorkflowName = "gantry.run"
	// ActivityStep carries out one step.
	ActivityStep = "gantry.step"
	// ActivityRelease gives the stack's lock back when the run has ended.
	ActivityRelease = "gantry.release"

	// DefaultQueue is the task queue workers share: workflow tasks, the first
	// step of each component, stack-level steps.
	DefaultQueue = "gantry"

	// Signals the workflow takes.
	SignalCancel = "cancel" // stop the run (the client was interrupted)
	SignalPause  = "pause"  // a step holds back new steps while it asks (PauseSignal)
	SignalAsk    = "ask"    // a step waits for an answer (Question)
	SignalAnswer = "answer" // the client's answer (Answer)

	// Queries the workflow answers.
	QueryProgress = "progress" // the run's events since an index (Progress)
	QueryAnswer   = "answer"   // the answer to a question, once given
)

// Timing of the workflow's activities.
const (
	// HeartbeatTimeout is how long a step may go without a heartbeat before
	// its worker counts as dead. Workers record one every HeartbeatEvery;
	// the SDK sends them every 80% of the timeout (6.4 s), which leaves a
	// loaded machine 1.6 s of slack — and is also how soon a running step
	// hears that the run was cancelled.
	HeartbeatTimeout = 8 * time.Second
	HeartbeatEvery   = time.Second
	// stepTimeout bounds a step only as a backstop: steps have timeouts of
	// their own (lifecycle.timeout).
	stepTimeout = 365 * 24 * time.Hour
	// hostStartTimeout is how long a step may wait in its host's queues,
	// where pollers always wait, before its host counts as dead.
	hostStartTimeout = 10 * time.Second
	// localTimeout bounds a light step run as a local activity (a
	// component's end, the run's finalize: bookkeeping).
	localTimeout = 5 * time.Minute
	// workflowTaskTimeout bounds one workflow task: the first rebuilds the
	// plan from its skeleton.
	workflowTaskTimeout = time.Minute
	// StickyTimeout is how long a workflow task waits for the worker that
	// ran the last one before any worker takes it: a dead worker costs
	// about that.
	StickyTimeout = time.Second
)

// RunInput is what the workflow of one run is started with.
type RunInput struct {
	Stack string
	RunID string
	// Fingerprint names the plan, the checkout and the options: a worker
	// whose own build of the run differs refuses its steps.
	Fingerprint string
	// State is the state's location without its password.
	State string
	// Queue is the shared task queue.
	Queue    string
	Parallel int
	Force    bool
	Skeleton Skeleton
}

// Skeleton is what the workflow needs of a plan: its steps, their flags,
// resources and specs, and its edges. The specs travel to the workers with
// each step, for the record; workers run the step of their own build.
type Skeleton struct {
	Nodes []Node `json:"nodes"`
	Edges []Edge `json:"edges"`
}

// Node is a step of the skeleton.
type Node struct {
	ID        string    `json:"id"`
	Kind      plan.Kind `json:"kind"`
	Label     string    `json:"label"`
	Component string    `json:"component,omitempty"`
	Group     string    `json:"group,omitempty"`
	Light     bool      `json:"light,omitempty"`
	Critical  bool      `json:"critical,omitempty"`
	Always    bool      `json:"always,omitempty"`
	Takes     []string  `json:"takes,omitempty"`
	Frees     []string  `json:"frees,omitempty"`
	Inputs    []string  `json:"inputs,omitempty"`
	// Rerun says the step may run again on another worker after the one
	// running it died: gantry's bookkeeping always may, a component's own
	// work when the component declares it (lifecycle.idempotent).
	Rerun bool `json:"rerun,omitempty"`
	// Local light steps run in the process of the workflow's worker, as a
	// local activity (no round trip through the server): those that need
	// nothing their host holds (a component's end when it locked no
	// folder; the run's finalize).
	Local bool            `json:"local,omitempty"`
	Spec  json.RawMessage `json:"spec,omitempty"`
}

// Edge is an edge of the skeleton: From and To index Nodes.
type Edge struct {
	From int           `json:"from"`
	To   int           `json:"to"`
	Kind plan.EdgeKind `json:"kind"`
}

// Result is a step's outcome as it travels: plan.Result without its error
// value and its in-memory data.
type Result struct {
	Status  plan.Status `json:"status"`
	Cause   plan.Cause  `json:"cause,omitempty"`
	Reason  string      `json:"reason,omitempty"`
	Warning string      `json:"warning,omitempty"`
	Info    string      `json:"info,omitempty"`
	Abort   bool        `json:"abort,omitempty"`
	Label   string      `json:"label,omitempty"`
}

// ResultOf is r as it travels.
func ResultOf(r plan.Result) Result {
	return Result{Status: r.Status, Cause: r.Cause, Reason: r.Reason, Warning: r.Warning, Info: r.Info, Abort: r.Abort, Label: r.Label}
}

// Plan is the result as a plan.Result.
func (r Result) Plan() plan.Result {
	return plan.Result{Status: r.Status, Cause: r.Cause, Reason: r.Reason, Warning: r.Warning, Info: r.Info, Abort: r.Abort, Label: r.Label}
}

// StepInput is what an activity of a step gets.
type StepInput struct {
	Stack       string
	RunID       string
	Fingerprint string
	State       string
	Step        string
	Kind        plan.Kind
	Light       bool
	Spec        json.RawMessage
	// Attempt counts the times the step's component started over on
	// another worker.
	Attempt int
	// Inputs are the outcomes of the steps it reads (Node.Inputs); their
	// data is in its host's memory.
	Inputs map[string]Result
	// Host is the worker queue the step was sent to, "" for the shared
	// queue.
	Host string
}

// StepOutput is what an activity of a step returns.
type StepOutput struct {
	Result Result
	// Host and Light are the queues of the worker that ran the step: its
	// component's later steps go there.
	Host, Light    string
	Worker         string // host name and pid, for messages
	Started, Ended time.Time
}

// ReleaseInput gives a run's lock back.
type ReleaseInput struct {
	Stack, RunID, State string
}

// RunOutput is what the workflow returns.
type RunOutput struct {
	// Results, Started and Ended are indexed as the skeleton's nodes; a step
	// never decided (a stuck plan) has the zero Result.
	Results   []Result
	Started   []time.Time
	Ended     []time.Time
	Failed    bool
	HaltedBy  string
	Cancelled bool
	// Error says why the run could not go on (a stuck plan).
	Error string
	// Unreleased says why the run's last activity could not give the
	// stack's lock back; "" when it did.
	Unreleased string
}

// Event is one thing that happened in the run, as the client shows it.
type Event struct {
	Step int
	// Finished is false for a start, true for an end (a skip has no start).
	Finished bool
	At       time.Time
	Result   Result
	Started  time.Time
	Ended    time.Time
	// Log is a line of the workflow's own for the step's log (a worker
	// died); such an event neither starts nor ends it.
	Log string
}

// Progress answers QueryProgress: the events from an index on, whether new
// steps are held back, and the questions waiting for an answer.
type Progress struct {
	Events    []Event
	Next      int
	Paused    bool
	Questions []Question
	Done      bool
}

// PauseSignal holds back new steps (On) or lets them go.
type PauseSignal struct {
	ID string
	On bool
}

// Question is a step's request for an answer from the person at the
// client's terminal; its prompt went out as the step's log lines.
type Question struct {
	ID   string
	Step string
	// Text is the question, secrets masked.
	Text string
}

// Answer is the client's answer to a question.
type Answer struct {
	ID   string
	Text string
	// Err says the client could not read one (its terminal went away).
	Err string
}
