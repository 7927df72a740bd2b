package report

import (
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/ui"
)

// FromPlan makes the model of the page a plan shows before it runs: what
// each component would go through and why, with the parameters it would
// get (params may be nil).
func FromPlan(p *plan.Plan, params *Params) *Model {
	return assemble(p, params, nil)
}

// assemble makes a page's model from a plan, the parameters (nil when
// none were kept) and, for a run, what its events say (nil for a plan).
func assemble(p *plan.Plan, params *Params, facts *runFacts) *Model {
	m, index := planModel(p)
	return complete(m, index, p, params, facts)
}

// planModel is the part of a page's model its plan alone makes: the
// components, their steps and ties, where their boxes go; index places
// each component and group in m.Components.
func planModel(p *plan.Plan) (m *Model, index map[string]int) {
	m = &Model{Kind: KindPlan, Stack: p.Stack, Verb: p.Verb, Orphans: p.Orphans, Params: []Param{}, Edges: []Edge{}, Critical: []int{}}
	cg := p.ComponentGraph()
	index = map[string]int{}
	add := func(c *Component) *Component {
		index[c.Name] = len(m.Components)
		c.Ready, c.Start, c.End = -1, -1, -1
		c.Steps, c.Params, c.Outputs = []*Step{}, []Param{}, []Output{}
		m.Components = append(m.Components, c)
		return c
	}
	for _, n := range cg.Nodes {
		c := add(&Component{Name: n.Name, Verb: n.Verb, Action: n.Action, Reason: n.Reason, Mandatory: n.Mandatory, Orphan: n.Orphan, Up: n.Up})
		for _, s := range n.Steps {
			c.Steps = append(c.Steps, newStep(s))
		}
	}
	comps := len(m.Components)
	// The stack's groups with steps people see: pre-flight, post-flight,
	// the installation handler.
	for _, n := range p.Nodes {
		if n.Component != "" || n.Hidden {
			continue
		}
		g := group(n)
		i, ok := index[g]
		if !ok {
			i = len(m.Components)
			add(&Component{Name: g, Group: true, Verb: p.Verb, Mandatory: n.Critical})
		}
		m.Components[i].Steps = append(m.Components[i].Steps, newStep(n))
	}
	for _, e := range cg.Edges {
		m.Edges = append(m.Edges, Edge{From: index[e.From], To: index[e.To], Label: e.Label(), Weak: e.Weak()})
	}
	m.Reduced = cg.Reduced
	edges := make([][2]int, len(m.Edges))
	for i, e := range m.Edges {
		edges[i] = [2]int{e.From, e.To}
	}
	xs, ys, layout := layOut(comps, edges)
	for i := 0; i < comps; i++ {
		m.Components[i].X, m.Components[i].Y = xs[i], ys[i]
	}
	m.Layout = layout
	return m, index
}

// complete puts the parameters and what a run did on the model planModel
// made of p.
func complete(m *Model, index map[string]int, p *plan.Plan, params *Params, facts *runFacts) *Model {
	m.Generated = time.Now().UTC().Format(time.RFC3339)
	if params != nil {
		m.ParamsKept = true
		m.Params = append(m.Params, params.Stack...)
		for _, c := range m.Components {
			c.Params = append(c.Params, params.Components[c.Name]...)
		}
	}
	if facts == nil {
		for _, c := range m.Components {
			c.Status = c.Action
		}
		return m
	}
	m.Kind = KindRun
	m.applyRun(p, facts, index)
	return m
}

// A PlanModel is the part of a run's report its plan alone makes
// (planModel), worked out while the run goes on: the component graph and
// its layout are half of what a report of 1,000 components took to make
// when the run had ended.
type PlanModel struct {
	p     *plan.Plan
	done  chan struct{}
	mu    sync.Mutex
	m     *Model
	index map[string]int
}

// PreparePlan starts working out the plan's part of the report of a run
// of p, which must not change meanwhile.
func PreparePlan(p *plan.Plan) *PlanModel {
	pm := &PlanModel{p: p, done: make(chan struct{})}
	go func() {
		defer close(pm.done)
		pm.m, pm.index = planModel(p)
	}()
	return pm
}

// take hands out the model worked out for p, once; false when it was
// worked out for another plan, or handed out already.
func (pm *PlanModel) take(p *plan.Plan) (*Model, map[string]int, bool) {
	if pm == nil || pm.p != p {
		return nil, nil, false
	}
	<-pm.done
	pm.mu.Lock()
	defer pm.mu.Unlock()
	m, index := pm.m, pm.index
	pm.m, pm.index = nil, nil
	return m, index, m != nil
}

// newStep is a visible step as the page shows it, before it ran.
func newStep(n *plan.Node) *Step {
	return &Step{ID: n.ID, Title: plan.Title(n), Kind: string(n.Kind), Ready: -1, Start: -1, End: -1}
}

// group is the group a stack-level step belongs to.
func group(n *plan.Node) string {
	if n.Group != "" {
		return n.Group
	}
	return n.ID
}

// applyRun puts what the run did on the model: statuses, times, outputs,
// the critical path.
func (m *Model) applyRun(p *plan.Plan, facts *runFacts, index map[string]int) {
	m.Run, m.Status, m.Why = facts.id, facts.status, facts.why
	t0 := facts.started
	if t0.IsZero() {
		for _, s := range facts.steps {
			if !s.started.IsZero() && (t0.IsZero() || s.started.Before(t0)) {
				t0 = s.started
			}
		}
	}
	if !t0.IsZero() {
		m.Started = t0.UTC().Format(time.RFC3339Nano)
	}
	var runEnd int64
	switch {
	case !facts.finished.IsZero():
		runEnd = facts.finished.Sub(t0).Milliseconds()
	case !facts.last.IsZero() && !t0.IsZero():
		// Killed before it ended: it went on until its last event (a
		// step still running printed until then).
		runEnd = max(facts.last.Sub(t0).Milliseconds(), 0)
	}
	times := timeSteps(p, facts, t0, runEnd)
	for _, t := range times {
		runEnd = max(runEnd, t.end)
	}
	m.DurationMS = runEnd
	steps := map[string]*Step{}
	for _, c := range m.Components {
		for _, s := range c.Steps {
			steps[s.ID] = s
		}
	}
	for i, n := range p.Nodes {
		t := times[i]
		if s := steps[n.ID]; s != nil {
			s.Ready, s.Start, s.End = t.ready, t.start, t.end
			if r := facts.steps[n.ID]; r != nil {
				s.Status, s.Reason, s.Warning, s.Info = r.status, r.reason, r.warning, r.info
				if s.Status == "" {
					s.Status = ui.Running
				}
			}
		}
		ci, ok := index[componentOf(n)]
		if !ok || !t.ran() {
			continue
		}
		c := m.Components[ci]
		if c.Start < 0 || t.start < c.Start {
			c.Start, c.Ready = t.start, t.ready
		}
		c.End = max(c.End, t.end)
	}
	for _, c := range m.Components {
		c.Outputs = append(c.Outputs, facts.outputs[c.Name]...)
		line, ok := facts.comps[c.Name]
		switch {
		case ok && !facts.finished.IsZero():
			c.Status, c.Why = line.Status, line.Reason
		default:
			// A run killed before it ended said how it began only.
			c.Status = statusFromSteps(c, facts)
		}
	}
	m.markCritical(p, criticalPath(p, times), steps, index)
}

// componentOf is the component, or stack-level group, of a step.
func componentOf(n *plan.Node) string {
	if n.Component != "" {
		return n.Component
	}
	return group(n)
}

// statusFromSteps is a component's status when the run's events do not
// say how it ended (ui.StatusFromSteps). One that began and whose end step
// (hidden: no step of the report) never recorded it was under way.
func statusFromSteps(c *Component, facts *runFacts) string {
	statuses := make([]string, len(c.Steps), len(c.Steps)+1)
	for i, s := range c.Steps {
		statuses[i] = s.Status
	}
	stepStatus := func(step string) (string, bool) {
		if r := facts.steps[step]; r != nil {
			return r.status, true
		}
		return "", false
	}
	if !c.Group && ui.BetweenSteps(c.Name, stepStatus) {
		statuses = append(statuses, ui.Running)
	}
	return ui.StatusFromSteps(c.Verb, c.Group, statuses)
}

// markCritical marks the steps, components and ties on the critical path.
func (m *Model) markCritical(p *plan.Plan, path []int, steps map[string]*Step, index map[string]int) {
	for _, i := range path {
		n := p.Nodes[i]
		if s := steps[n.ID]; s != nil {
			s.Critical = true
		}
		ci, ok := index[componentOf(n)]
		if !ok {
			continue
		}
		if k := len(m.Critical); k == 0 || m.Critical[k-1] != ci {
			m.Critical = append(m.Critical, ci)
		}
		m.Components[ci].Critical = true
	}
	next := map[[2]int]bool{}
	for k := 1; k < len(m.Critical); k++ {
		next[[2]int{m.Critical[k-1], m.Critical[k]}] = true
	}
	for i := range m.Edges {
		m.Edges[i].Critical = next[[2]int{m.Edges[i].From, m.Edges[i].To}]
	}
}
