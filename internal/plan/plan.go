// Package plan holds gantry's plans: DAGs of steps, each step described by
// data (its Spec), with the edges that order them and the renderings people
// read (text, JSON, DOT, Mermaid). It is the vocabulary shared by the
// builders (plan/build), the step kinds (plan/steps), the executor (engine)
// and the displays (ui), and knows nothing of YAML, expressions or
// processes. A plan refuses an edge that would close a cycle when it is
// added, so the executor never meets one.
package plan

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/internal/dag"
)

// Verbs of stack runs.
const (
	VerbDeploy   = "deploy"
	VerbUndeploy = "undeploy"
)

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
	Kind      Kind
	Label     string
	Component string // the component the step belongs to, "" for stack-level steps
	// Group is the failure domain: a failure skips the rest of the group.
	Group string
	Point string // injection point (pre_component, quality_probe, ...), for display
	Verb  string // the verb a component step carries out
	// Action is what the step does to its component, for display: deploy,
	// redeploy, undeploy, unchanged, skip, teardown-orphan.
	Action string
	Reason string // why the action (skip reasons, orphan)
	// Lane names the branch of a parallel plugin list the step runs in;
	// displays put it before the step's lines.
	Lane string
	// Listed steps are entries of a component's plugin list: displays head
	// them as sow does ("==> deploy rec").
	Listed bool
	// Quiet steps run without being announced (a plugin entry whose name
	// starts with "-"); plans still list them.
	Quiet bool
	// Hidden steps are bookkeeping, left out of text plans and displays.
	Hidden bool
	// Light steps are quick and never block: the executor runs them inline,
	// without taking one of the --parallel slots.
	Light bool
	// Critical steps stop new work when they fail (mandatory components).
	Critical bool
	// Always steps run even after the run stopped, and whatever the steps
	// they complete-wait for did (bookkeeping that records the outcome).
	Always bool
	// Inputs are the steps whose results (and Result.Data) this step reads;
	// each must come before it in the plan's graph.
	Inputs []string
	// Takes names resources the step holds from its start until a step that
	// Frees them finishes: while another step holds one, the step waits
	// without taking a --parallel slot. Components that render templates
	// into their folder take the folder, so that two never render and run
	// in the same folder at once.
	Takes []string
	// Frees names resources released when the step finishes, however it
	// ends (skipped too), if a step of its group holds them.
	Frees []string
	// Spec is what the step does.
	Spec Spec

	index int
}

// Settles reports whether the step is the last of its component: its end,
// or the one step of a component the plan knows --resume finds unchanged.
func (n *Node) Settles() bool { return n.Kind == KindEnd || n.SettledUnchanged() }

// SettledUnchanged reports whether the step is the one step of a component
// the plan knows --resume finds unchanged (Component.Settled).
func (n *Node) SettledUnchanged() bool {
	_, ok := n.Spec.(Unchanged)
	return ok
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
	// Components are the components the plan runs, with what their steps
	// share.
	Components map[string]*Component
	// Orphans are components in the state that the stack no longer lists and
	// that this plan leaves alone (teardown_orphans: none, or a run of some
	// components).
	Orphans []string
	// OrphansLeftBecause says why Orphans are left alone, for the text
	// plan: "teardown_orphans is none" when empty.
	OrphansLeftBecause string
	// OrphansElsewhere are those of Orphans whose records of their own (a
	// landscape's) are not in the stack's folder: an undeploy from here
	// would delete nothing, and refuses them without --force -c.
	OrphansElsewhere []string
	// OrphanDependents are, by orphan, the orphans that recorded they
	// depend on it: an undeploy of it alone is refused while they are
	// deployed.
	OrphanDependents map[string][]string
	// SomeComponents says the run deploys some components (-c, -o): their
	// hub.provides holds the state's capabilities too, as the Hub CLI's
	// (build.HubProvides).
	SomeComponents bool

	index map[string]*Node
	graph dag.Acyclic
	// edgeEnds are the node indices of Edges, kept by Connect.
	edgeEnds [][2]int
}

// New returns an empty plan.
func New(stack, verb string) *Plan {
	return &Plan{Stack: stack, Verb: verb, Created: time.Now().UTC(), index: map[string]*Node{}, Components: map[string]*Component{}}
}

// Reserve makes room for about nodes more steps (and three times as many edges)
// and components more components: a plan of 10,000 components otherwise
// grows its index a dozen times over, rehashing it each time, and its
// slices of steps and edges, grown by a quarter at each append past a few
// hundred, allocate five times what they end up holding.
func (p *Plan) Reserve(nodes, components int) {
	if nodes > 0 {
		index := make(map[string]*Node, len(p.index)+nodes)
		maps.Copy(index, p.index)
		p.index = index
		p.Nodes = slices.Grow(p.Nodes, nodes)
		p.graph.Reserve(nodes)
		// Three edges a step: a component's three steps have two between
		// them, one to the stack's steps, and its dependencies (three on
		// average in bench's random stacks: 62,481 edges for 30,002 steps,
		// 1.5 MB of room left unused).
		p.Edges = slices.Grow(p.Edges, 3*nodes)
		p.edgeEnds = slices.Grow(p.edgeEnds, 3*nodes)
	}
	if components > 0 {
		comps := make(map[string]*Component, len(p.Components)+components)
		maps.Copy(comps, p.Components)
		p.Components = comps
	}
}

// Add appends a node; its position is its priority among ready steps. A
// duplicate id is a bug of the builder: it panics.
func (p *Plan) Add(n *Node) *Node {
	if _, dup := p.index[n.ID]; dup {
		panic(fmt.Sprintf("plan: duplicate step id %q", n.ID))
	}
	n.index = len(p.Nodes)
	p.Nodes = append(p.Nodes, n)
	p.index[n.ID] = n
	p.graph.AddNode()
	return n
}

// Node returns the step with the id, or nil.
func (p *Plan) Node(id string) *Node { return p.index[id] }

// CycleError is an edge refused because it would close a cycle.
type CycleError struct {
	Path []string // from → to → … → from
}

func (e *CycleError) Error() string {
	return "plan: the edge would close a cycle: " + strings.Join(e.Path, " → ")
}

// Connect adds an edge. An edge between unknown steps, or one that would
// close a cycle, is refused with an error and the plan is left as it was.
func (p *Plan) Connect(from, to string, kind EdgeKind) error {
	a, b := p.index[from], p.index[to]
	if a == nil || b == nil {
		return fmt.Errorf("plan: edge %s → %s between unknown steps", from, to)
	}
	if cycle := p.graph.AddEdge(a.index, b.index); cycle != nil {
		path := make([]string, len(cycle))
		for i, v := range cycle {
			path[i] = p.Nodes[v].ID
		}
		return &CycleError{Path: path}
	}
	p.Edges = append(p.Edges, Edge{From: from, To: to, Kind: kind})
	p.edgeEnds = append(p.edgeEnds, [2]int{a.index, b.index})
	return nil
}

// EdgeEnds are the indices of the nodes of the plan's i-th edge: the
// executor's scheduler reads every edge, and looking both ends up by id
// cost more than the rest of setting it up.
func (p *Plan) EdgeEnds(i int) (from, to int) {
	if len(p.edgeEnds) == len(p.Edges) {
		return p.edgeEnds[i][0], p.edgeEnds[i][1]
	}
	e := p.Edges[i] // edges assigned directly, not through Connect
	return p.index[e.From].index, p.index[e.To].index
}

// Precedes reports whether step a must end before step b can start: a path
// of edges leads from a to b. Like Connect and Validate, it must not run
// concurrently with another of them on the same plan: the graph's search
// keeps its marks and buffers in the graph.
func (p *Plan) Precedes(a, b string) bool {
	x, y := p.index[a], p.index[b]
	return x != nil && y != nil && x != y && p.graph.Reaches(x.index, y.index)
}

// Validate checks what the executor relies on: every step has a spec, and
// every input of a step is a step that precedes it. Edges are checked when
// they are added.
func (p *Plan) Validate() error {
	var problems []string
	freed := map[[2]string]bool{} // group, resource
	for _, n := range p.Nodes {
		for _, res := range n.Frees {
			freed[[2]string{n.Group, res}] = true
		}
	}
	for _, n := range p.Nodes {
		if n.Spec == nil {
			problems = append(problems, fmt.Sprintf("step %s has no spec", n.ID))
		}
		if n.Light && len(n.Takes) > 0 {
			problems = append(problems, fmt.Sprintf("step %s is light but takes %s: a light step runs at once, it cannot wait", n.ID, strings.Join(n.Takes, ", ")))
		}
		for _, res := range n.Takes {
			if !freed[[2]string{n.Group, res}] {
				problems = append(problems, fmt.Sprintf("step %s takes %s, which no step of its group frees", n.ID, res))
			}
		}
		for _, in := range n.Inputs {
			if p.index[in] == nil {
				problems = append(problems, fmt.Sprintf("step %s reads unknown step %s", n.ID, in))
			} else if !p.Precedes(in, n.ID) {
				problems = append(problems, fmt.Sprintf("step %s reads step %s, which does not come before it", n.ID, in))
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("plan %s %s is not valid: %s", p.Verb, p.Stack, strings.Join(problems, "; "))
	}
	return nil
}

// Sinks are the steps no other step waits for, in plan order.
func (p *Plan) Sinks() []*Node { return p.ends(false) }

// Sources are the steps that wait for no other step, in plan order.
func (p *Plan) Sources() []*Node { return p.ends(true) }

// ends are the steps no edge names at the one end (its target when to,
// else its source). Edges are read by their ends' indices, not their ids:
// a plan of 10,000 components has 60,000 edges to look up.
func (p *Plan) ends(to bool) []*Node {
	named := make([]bool, len(p.Nodes))
	for i := range p.Edges {
		from, target := p.EdgeEnds(i)
		if to {
			named[target] = true
		} else {
			named[from] = true
		}
	}
	var out []*Node
	for i, n := range p.Nodes {
		if !named[i] {
			out = append(out, n)
		}
	}
	return out
}
