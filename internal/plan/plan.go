package plan

import (
	"context"
	"fmt"
	"io"
	"time"
)

// Status is the outcome of a step.
type Status uint8

// Step outcomes.
const (
	Pending Status = iota
	Running
	OK
	Failed
	Skipped
)

func (s Status) String() string {
	return [...]string{"pending", "running", "ok", "failed", "skipped"}[s]
}

// Result is what a step reports when it ends.
type Result struct {
	Status Status
	// Soft marks a skip by design (an optional requirement not met): the rest
	// of the step's group is skipped too, but steps outside it may go on.
	Soft   bool
	Reason string // why a step was skipped or failed, for people
	Err    error
	// Warning is set when a step failed but on_fail let the plan go on.
	Warning string
	// Info is an informational message (on_fail: info).
	Info string
	// Abort stops new work, as a critical failure does (on_fail: pause answered
	// with abort).
	Abort bool
}

// Ok, Fail and Skip build results.
func Ok() Result { return Result{Status: OK} }

// Fail is a failed result.
func Fail(err error) Result { return Result{Status: Failed, Err: err, Reason: err.Error()} }

// Skip is a skipped result; soft skips do not block steps outside the group.
func Skip(reason string, soft bool) Result {
	return Result{Status: Skipped, Reason: reason, Soft: soft}
}

// Env is what the executor gives a running step.
type Env interface {
	// Output is where the step's process output goes: the component's log and
	// the display, one line at a time, secrets masked.
	Output() io.Writer
	// Logf writes one line to the step's log and display.
	Logf(format string, args ...any)
	// Pause stops new steps from starting while fn runs (a prompt on the
	// terminal), then lets them go on.
	Pause(fn func() error) error
	// Interactive reports whether a person can answer prompts (stdin is a terminal).
	Interactive() bool
	// Input reads one line from the terminal.
	Input() (string, error)
	// Yes reports whether --yes approved every gate.
	Yes() bool
	// RunID is the id of the run.
	RunID() string
	// Note reports something the step learned (an output it captured) to the
	// display and the events.
	Note(Note)
}

// Note is something a step reports besides its output lines.
type Note struct {
	Kind   string // "output"
	Name   string
	Value  string
	Secret bool
}

// Runner does the work of a step.
type Runner interface {
	Run(ctx context.Context, env Env) Result
}

// SkipRecorder is implemented by runners that record something when their
// step is skipped without running (a component's state, for instance).
type SkipRecorder interface {
	Skipped(r Result)
}

// RunnerFunc adapts a function to Runner.
type RunnerFunc func(ctx context.Context, env Env) Result

// Run calls f.
func (f RunnerFunc) Run(ctx context.Context, env Env) Result { return f(ctx, env) }

// EdgeKind says when an edge lets its target run.
type EdgeKind uint8

// Edge kinds: a success edge lets the target run when the source succeeded; a
// failure edge when the source failed (the failure path); a completion edge
// when the source ended, whatever its outcome (post-flight after optional
// components that failed).
const (
	OnSuccess EdgeKind = iota
	OnFailure
	OnComplete
)

func (k EdgeKind) String() string {
	switch k {
	case OnFailure:
		return "failure"
	case OnComplete:
		return "complete"
	}
	return "success"
}

// Node is one step of a plan.
type Node struct {
	ID        string
	Kind      string // component, exec, call, probe, gate, delay, begin, end, failed, group, ...
	Label     string
	Component string // the component the step belongs to, "" for stack-level steps
	// Group is the failure domain: a failure skips the rest of the group and
	// sends it down its failure path.
	Group string
	Point string // injection point (pre_component, quality_probe, ...), for display
	Verb  string // the verb a component step carries out
	// Action is what the step does to its component, for display: deploy,
	// redeploy, undeploy, unchanged, skip, teardown-orphan.
	Action string
	Reason string // why the action (skip reasons, orphan)
	// Details are shown under the step in text plans (a component's plugins).
	Details []string
	// Hidden steps are bookkeeping, left out of text plans.
	Hidden bool
	// Light steps are quick and never block: the executor runs them inline,
	// without taking one of the --parallel slots.
	Light bool
	// Critical steps stop new work when they fail (mandatory components).
	Critical bool
	// Always steps run even after the run stopped (failure paths, bookkeeping).
	Always bool
	Runner Runner `json:"-"`

	index int
}

// Index is the node's position in the plan, its dispatch priority.
func (n *Node) Index() int { return n.index }

// Edge is a dependency between steps: To runs after From.
type Edge struct {
	From, To string
	Kind     EdgeKind
}

// Plan is a DAG of steps.
type Plan struct {
	Verb    string
	Stack   string
	Created time.Time
	Nodes   []*Node
	Edges   []Edge
	// Orphans are components in the state that the stack no longer lists and
	// that this plan leaves alone (teardown_orphans: none).
	Orphans []string
	index   map[string]*Node
}

// New returns an empty plan.
func New(stack, verb string) *Plan {
	return &Plan{Stack: stack, Verb: verb, Created: time.Now().UTC(), index: map[string]*Node{}}
}

// Add appends a node; its position is its priority among ready steps.
func (p *Plan) Add(n *Node) *Node {
	if _, dup := p.index[n.ID]; dup {
		panic(fmt.Sprintf("plan: duplicate step id %q", n.ID))
	}
	n.index = len(p.Nodes)
	p.Nodes = append(p.Nodes, n)
	p.index[n.ID] = n
	return n
}

// Node returns the step with the id, or nil.
func (p *Plan) Node(id string) *Node { return p.index[id] }

// Connect adds an edge.
func (p *Plan) Connect(from, to string, kind EdgeKind) {
	if p.index[from] == nil || p.index[to] == nil {
		panic(fmt.Sprintf("plan: edge %s → %s between unknown steps", from, to))
	}
	p.Edges = append(p.Edges, Edge{From: from, To: to, Kind: kind})
}
