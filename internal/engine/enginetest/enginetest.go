// Package enginetest makes random plans shaped like gantry's (components of
// chained steps ending in a light, Always end step; failure paths; critical
// steps; folder resources; stack-level steps around them) with a scripted
// outcome and duration for every step, and runs them on a virtual clock: on
// the local executor (RunLocal), on the bare scheduler (Simulate), and — in
// internal/engine/temporal's tests — on the workflow. Same plan, same
// outcomes, same clock: every executor must start the same steps in the
// same order. Only tests import it.
package enginetest

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/engine"
	"github.com/gantry-dev/gantry/internal/plan"
)

// Step is what a step of a random plan does: the result it returns and how
// long it takes on the virtual clock (light steps take no time).
type Step struct {
	Result   plan.Result
	Duration time.Duration
}

// Spec is the spec of a random plan's steps: the script of the step.
type Spec struct{ Step Step }

// Kind is "test".
func (Spec) Kind() plan.Kind { return "test" }

// RandomCase is the random run of a seed: a plan of 1 to max components
// (RandomPlan), run with --parallel 1, 2, 3 or 8, with --force one time in
// three.
func RandomCase(seed int64, max int) (p *plan.Plan, parallel int, force bool) {
	r := rand.New(rand.NewSource(seed))
	p = RandomPlan(r, 1+r.Intn(max))
	parallel = []int{1, 2, 3, 8}[r.Intn(4)]
	force = r.Intn(3) == 0
	return p, parallel, force
}

// RandomPlan makes a random plan of about n components. The durations of
// its steps are distinct and their sums unlikely to tie; Trace reports a
// tie when one happens (the order would then be a coin toss).
func RandomPlan(r *rand.Rand, n int) *plan.Plan {
	p := plan.New("random", plan.VerbDeploy)
	step := func(outcome float64) Step {
		res := plan.Ok()
		switch {
		case outcome < 0.08:
			res = plan.Fail(fmt.Errorf("scripted failure"))
		case outcome < 0.10:
			res = plan.Fail(fmt.Errorf("scripted abort"))
			res.Abort = true
		case outcome < 0.13:
			res = plan.Skip(plan.CauseByDesign, "scripted skip by design")
		case outcome < 0.16:
			res = plan.Result{Status: plan.OK, Warning: "scripted warning"}
		}
		// Whole minutes from a wide range, plus a unique tail: ties need two
		// sums of different steps to meet exactly. Minutes, not less: the
		// SDK's test environment fires a timer by the wall clock when an
		// activity runs longer than the timer's time left, and steps whose
		// ends are a minute apart keep a loaded machine from reordering
		// them.
		d := time.Duration(1+r.Intn(10_000))*time.Minute + time.Duration(len(p.Nodes)+1)*time.Nanosecond
		return Step{Result: res, Duration: d}
	}
	add := func(nd *plan.Node, s Step) *plan.Node {
		if nd.Light {
			s.Duration = 0
		}
		nd.Label = nd.ID
		nd.Spec = Spec{s}
		return p.Add(nd)
	}
	connect := func(a, b string, k plan.EdgeKind) {
		if err := p.Connect(a, b, k); err != nil {
			panic(err)
		}
	}
	add(&plan.Node{ID: "stack/setup", Group: "stack", Critical: true}, Step{Result: plan.Ok(), Duration: time.Millisecond})
	var ends []string
	comps := n
	for c := 0; c < comps; c++ {
		g := fmt.Sprintf("c%d", c)
		critical := r.Float64() < 0.3
		var folder []string
		if r.Float64() < 0.2 {
			folder = []string{fmt.Sprintf("folder%d", r.Intn(3))}
		}
		begin := add(&plan.Node{ID: g + "/begin", Group: g, Component: g, Critical: critical, Takes: folder}, step(r.Float64()*2))
		connect("stack/setup", begin.ID, plan.OnSuccess)
		// Some components wait for earlier ones.
		for _, e := range ends {
			if r.Float64() < 2.0/float64(len(ends)+1) {
				connect(e, begin.ID, plan.OnSuccess)
			}
		}
		prev := begin.ID
		steps := []string{begin.ID}
		for k := 0; k < r.Intn(4); k++ {
			s := add(&plan.Node{ID: fmt.Sprintf("%s/s%d", g, k), Group: g, Component: g, Critical: critical}, step(r.Float64()))
			connect(prev, s.ID, plan.OnSuccess)
			prev = s.ID
			steps = append(steps, s.ID)
			if r.Float64() < 0.2 {
				// A failure path: runs only when s fails.
				fp := add(&plan.Node{ID: s.ID + "/onfail", Group: g, Component: g}, step(r.Float64()*3))
				connect(s.ID, fp.ID, plan.OnFailure)
				steps = append(steps, fp.ID)
			}
		}
		end := add(&plan.Node{ID: g + "/end", Group: g, Component: g, Light: true, Always: true, Frees: folder}, Step{Result: plan.Ok()})
		for _, s := range steps {
			connect(s, end.ID, plan.OnComplete)
		}
		ends = append(ends, end.ID)
	}
	fin := add(&plan.Node{ID: "stack/finalize", Group: "stack", Light: true, Always: true}, Step{Result: plan.Ok()})
	connect("stack/setup", fin.ID, plan.OnSuccess)
	for _, s := range p.Sinks() {
		if s.ID != fin.ID {
			connect(s.ID, fin.ID, plan.OnComplete)
		}
	}
	return p
}

// ScriptOf is the script of a random plan's step.
func ScriptOf(n *plan.Node) Step { return n.Spec.(Spec).Step }

// Trace is how a run went: the order steps started in (skips are not
// starts), each step's result, and the run's end.
type Trace struct {
	Started  []string
	Statuses map[string]string
	Failed   bool
	HaltedBy string
	// Tie is set when two running steps ended at the same virtual time.
	Tie bool
}

// StatusOf writes a result as traces compare it.
func StatusOf(r plan.Result) string {
	s := r.Status.String()
	if r.Status == plan.Skipped {
		s += "(" + r.Cause.String() + ")"
	}
	return s
}

// clock is the virtual clock of a run: each running step ends at its start
// plus its duration, and the step that ends first ends next.
type clock struct {
	mu      sync.Mutex
	now     time.Duration
	ends    map[string]time.Duration
	release map[string]chan struct{}
	tie     bool
}

func (c *clock) started(id string, d time.Duration) chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.release[id]
	if ch == nil {
		ch = make(chan struct{})
		c.release[id] = ch
	}
	c.ends[id] = c.now + d
	return ch
}

// next ends the running step that ends first.
func (c *clock) next() {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ids []string
	for id := range c.ends {
		ids = append(ids, id)
	}
	if len(ids) == 0 {
		panic("enginetest: the executor waits but nothing runs")
	}
	sort.Slice(ids, func(i, j int) bool {
		if c.ends[ids[i]] != c.ends[ids[j]] {
			return c.ends[ids[i]] < c.ends[ids[j]]
		}
		return ids[i] < ids[j]
	})
	if len(ids) > 1 && c.ends[ids[0]] == c.ends[ids[1]] {
		c.tie = true
	}
	id := ids[0]
	c.now = c.ends[id]
	delete(c.ends, id)
	ch := c.release[id]
	if ch == nil {
		ch = make(chan struct{})
		c.release[id] = ch
	}
	close(ch)
}

// traceObserver keeps the start order and starts the steps' clocks.
type traceObserver struct {
	mu    sync.Mutex
	t     *Trace
	clock *clock
}

func (o *traceObserver) StepStarted(n *plan.Node, _ time.Time) {
	o.mu.Lock()
	o.t.Started = append(o.t.Started, n.ID)
	o.mu.Unlock()
	if !n.Light {
		o.clock.started(n.ID, ScriptOf(n).Duration)
	}
}

func (o *traceObserver) StepFinished(n *plan.Node, r plan.Result, _, _ time.Time) {
	o.mu.Lock()
	o.t.Statuses[n.ID] = StatusOf(r)
	o.mu.Unlock()
}

func (o *traceObserver) Log(*plan.Node, string, time.Time) {}
func (o *traceObserver) Note(*plan.Node, plan.Note)        {}

// RunLocal runs a random plan on the local executor on the virtual clock:
// each time the executor has started what it can (Options.Settled), the
// running step that ends first ends.
func RunLocal(p *plan.Plan, parallel int, force bool) (*Trace, error) {
	t := &Trace{Statuses: map[string]string{}}
	c := &clock{ends: map[string]time.Duration{}, release: map[string]chan struct{}{}}
	obs := &traceObserver{t: t, clock: c}
	binder := engine.BinderFunc(func(n *plan.Node) (plan.Runner, error) {
		s, ok := n.Spec.(Spec)
		if !ok {
			return nil, fmt.Errorf("not a random plan's step: %T", n.Spec)
		}
		return plan.RunnerFunc(func(context.Context, plan.Env) plan.Result {
			if !n.Light {
				c.mu.Lock()
				ch := c.release[n.ID]
				if ch == nil {
					ch = make(chan struct{})
					c.release[n.ID] = ch
				}
				c.mu.Unlock()
				<-ch
			}
			return s.Step.Result
		}), nil
	})
	out, err := engine.Run(context.Background(), p, binder, engine.Options{Parallel: parallel, Force: force, Observer: obs, Settled: c.next})
	if err != nil {
		return nil, err
	}
	t.Failed, t.HaltedBy, t.Tie = out.Failed, out.HaltedBy, c.tie
	return t, nil
}

// Simulate runs a random plan on the bare scheduler on the virtual clock.
func Simulate(p *plan.Plan, parallel int, force bool) (*Trace, error) {
	t := &Trace{Statuses: map[string]string{}}
	s := engine.NewScheduler(p, engine.SchedulerOptions{Parallel: parallel, Force: force})
	type running struct {
		i   int
		end time.Duration
	}
	var now time.Duration
	var run []running
	for {
		for {
			d, ok := s.Next()
			if !ok {
				break
			}
			n := p.Nodes[d.Step]
			switch d.Kind {
			case engine.Skipped:
				t.Statuses[n.ID] = StatusOf(d.Result)
			case engine.Start:
				t.Started = append(t.Started, n.ID)
				res := ScriptOf(n).Result
				if n.Light {
					s.Finish(d.Step, res)
					t.Statuses[n.ID] = StatusOf(res)
					continue
				}
				run = append(run, running{d.Step, now + ScriptOf(n).Duration})
			}
		}
		if s.Done() {
			break
		}
		if s.Idle() {
			return nil, s.Stuck()
		}
		sort.Slice(run, func(a, b int) bool {
			if run[a].end != run[b].end {
				return run[a].end < run[b].end
			}
			return p.Nodes[run[a].i].ID < p.Nodes[run[b].i].ID
		})
		if len(run) > 1 && run[0].end == run[1].end {
			t.Tie = true
		}
		next := run[0]
		run = run[1:]
		now = next.end
		res := ScriptOf(p.Nodes[next.i]).Result
		s.Finish(next.i, res)
		t.Statuses[p.Nodes[next.i].ID] = StatusOf(res)
	}
	t.Failed, t.HaltedBy = s.Failed(), s.HaltedBy()
	return t, nil
}
