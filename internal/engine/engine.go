// Package engine is gantry's one executor: it walks any plan DAG, starting each
// step the moment its last dependency ends (no polling, no level batching), at
// most --parallel steps at once, with failure paths, soft skips, a stop on
// critical failures and cancellation that reaches every running step. It knows
// steps only as plan nodes and the runners a Binder gives for them.
package engine

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
)

// Binder gives the runner that carries out a step, from its spec.
type Binder interface {
	Runner(n *plan.Node) (plan.Runner, error)
}

// BinderFunc adapts a function to Binder.
type BinderFunc func(n *plan.Node) (plan.Runner, error)

// Runner calls f.
func (f BinderFunc) Runner(n *plan.Node) (plan.Runner, error) { return f(n) }

// Options tune a run.
type Options struct {
	// Parallel is the most steps that run at once (light steps do not count);
	// 1 runs steps one at a time in plan order.
	Parallel int
	// Force goes on with independent branches after a critical step failed.
	Force       bool
	Observer    plan.Observer
	RunID       string
	Interactive bool
	Yes         bool
	// Input reads a line from the terminal for gates and pauses.
	Input func() (string, error)
}

// Outcome is what a run did.
type Outcome struct {
	Results   map[string]plan.Result
	Started   map[string]time.Time
	Ended     map[string]time.Time
	Failed    bool   // a critical step failed
	HaltedBy  string // the step whose failure stopped new work
	Cancelled bool
}

type completion struct {
	idx            int
	result         plan.Result
	started, ended time.Time
}

type succ struct {
	to   int
	kind plan.EdgeKind
}

type run struct {
	ctx     context.Context
	p       *plan.Plan
	opts    Options
	runners []plan.Runner

	succs     [][]succ
	preds     [][]succ // kind and source
	remaining []int
	results   []plan.Result
	done      []bool
	finished  int

	ready   readyHeap
	light   []int
	running int
	holds   holds
	// outside counts steps waiting outside the run without a slot; wanting
	// are those back and waiting for one (Env.Outside).
	outside int
	wanting []chan struct{}
	slots   chan slotRequest

	halted    string
	cancelled bool
	// started groups finish their steps even after the run stopped: a
	// component half-way through its plan is work in flight. Light steps
	// (bookkeeping) do not start a group.
	started map[string]bool
	// failedGroups name the root cause when their failure skips other groups.
	failedGroups map[string]bool

	completions chan completion
	pauseMu     sync.Mutex // serialises prompts
	pauseCount  int        // guarded by mu
	resume      chan struct{}
	mu          sync.Mutex

	out *Outcome
}

// Run executes the plan and returns when every step has finished or been
// skipped. It never returns early: after a failure or a cancellation, running
// steps are waited for and the rest are skipped (failure paths and Always
// steps still run). A plan that is not valid, or a step without a runner, is
// an error before anything runs.
func Run(ctx context.Context, p *plan.Plan, b Binder, opts Options) (*Outcome, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	runners := make([]plan.Runner, len(p.Nodes))
	var errs []error
	for i, n := range p.Nodes {
		r, err := b.Runner(n)
		if err != nil {
			errs = append(errs, fmt.Errorf("step %s: %w", n.ID, err))
		}
		runners[i] = r
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if opts.Parallel < 1 {
		opts.Parallel = 1
	}
	if opts.Observer == nil {
		opts.Observer = nopObserver{}
	}
	n := len(p.Nodes)
	r := &run{
		ctx:          ctx,
		p:            p,
		opts:         opts,
		runners:      runners,
		succs:        make([][]succ, n),
		preds:        make([][]succ, n),
		remaining:    make([]int, n),
		results:      make([]plan.Result, n),
		done:         make([]bool, n),
		completions:  make(chan completion, opts.Parallel),
		resume:       make(chan struct{}, 1),
		slots:        make(chan slotRequest),
		started:      map[string]bool{},
		failedGroups: map[string]bool{},
		out: &Outcome{
			Results: make(map[string]plan.Result, n),
			Started: make(map[string]time.Time, n),
			Ended:   make(map[string]time.Time, n),
		},
	}
	for _, e := range p.Edges {
		from, to := p.Node(e.From).Index(), p.Node(e.To).Index()
		r.succs[from] = append(r.succs[from], succ{to: to, kind: e.Kind})
		r.preds[to] = append(r.preds[to], succ{to: from, kind: e.Kind})
		r.remaining[to]++
	}
	for i := range p.Nodes {
		if r.remaining[i] == 0 {
			r.markReady(i)
		}
	}
	if err := r.loop(); err != nil {
		return r.out, err
	}
	return r.out, nil
}

func (r *run) markReady(i int) {
	if r.p.Nodes[i].Light {
		r.light = append(r.light, i)
		return
	}
	heap.Push(&r.ready, i)
}

func (r *run) loop() error {
	total := len(r.p.Nodes)
	ctxDone := r.ctx.Done()
	for {
		r.dispatch()
		if r.finished == total {
			return nil
		}
		if r.running == 0 && r.outside == 0 && r.ready.Len() == 0 && len(r.light) == 0 && !r.paused() {
			// Nothing runs and nothing can start: a plan whose edges were
			// not checked would wait here forever.
			return r.stuck()
		}
		select {
		case c := <-r.completions:
			r.running--
			r.finish(c.idx, c.result, c.started, c.ended)
		case <-ctxDone:
			r.cancelled = true
			r.out.Cancelled = true
			ctxDone = nil
		case m := <-r.slots:
			r.slotMessage(m)
		case <-r.resume:
		}
	}
}

// stuck names the steps that never became ready.
func (r *run) stuck() error {
	var ids []string
	for i, n := range r.p.Nodes {
		if !r.done[i] {
			ids = append(ids, n.ID)
			if len(ids) == 10 {
				ids = append(ids, "…")
				break
			}
		}
	}
	if w := r.waitingNames(); w != "" {
		return fmt.Errorf("engine: the plan cannot go on: %s never became ready; steps wait for %s", strings.Join(ids, ", "), w)
	}
	return fmt.Errorf("engine: the plan cannot go on: %s never became ready (a cycle?)", strings.Join(ids, ", "))
}

// dispatch runs every ready light step, gives slots back to steps returning
// from outside the run, then starts ready steps in plan order while slots
// are free. A step whose resource another holds is set aside.
func (r *run) dispatch() {
	for {
		r.grantSlots()
		for len(r.light) > 0 {
			i := r.light[0]
			r.light = r.light[1:]
			r.start(i)
		}
		if r.paused() {
			return
		}
		if r.ready.Len() == 0 {
			return
		}
		// Skips take no slot, so decide before counting.
		i := r.ready[0]
		if skip, ok := r.decide(i); ok {
			heap.Pop(&r.ready)
			r.skip(i, skip)
			continue
		}
		if res, ok := r.busy(i); ok {
			heap.Pop(&r.ready)
			r.wait(i, res)
			continue
		}
		if r.running >= r.opts.Parallel {
			return
		}
		heap.Pop(&r.ready)
		r.start(i)
	}
}

func (r *run) paused() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pauseCount > 0
}

// decide says whether step i must be skipped instead of run.
func (r *run) decide(i int) (plan.Result, bool) {
	n := r.p.Nodes[i]
	var failurePath, anyFailed bool
	for _, pr := range r.preds[i] {
		dep := r.results[pr.to]
		dn := r.p.Nodes[pr.to]
		if pr.kind == plan.OnFailure {
			failurePath = true
			if dep.Status == plan.Failed {
				anyFailed = true
			}
			continue
		}
		if pr.kind == plan.OnComplete {
			continue
		}
		switch {
		case dep.Status == plan.OK:
		case dep.Soft() && dn.Group != n.Group:
			// A skip by design does not hold back other groups.
		case dep.Soft():
			return plan.Skip(dep.Cause, dep.Reason), true
		case dn.Group != n.Group && dn.Group != "" && r.failedGroups[dn.Group]:
			return plan.Skip(plan.CauseUpstream, dn.Group+" failed"), true
		case dep.Status == plan.Skipped:
			return plan.Skip(upstreamCause(dep.Cause), dep.Reason), true
		default:
			return plan.Skip(plan.CauseUpstream, failedReason(dn, n)), true
		}
	}
	if failurePath && !anyFailed {
		return plan.Skip(plan.CauseNotNeeded, "not needed"), true
	}
	if n.Always {
		return plan.Result{}, false
	}
	if r.halted != "" && !(n.Group != "" && r.started[n.Group]) {
		return plan.Skip(plan.CauseStopped, "not started: the run stopped after "+r.halted+" failed"), true
	}
	if r.cancelled {
		return plan.Skip(plan.CauseInterrupted, "not started: the run was interrupted"), true
	}
	return plan.Result{}, false
}

// upstreamCause is the cause of a skip passed on from a skipped step: a stop
// or an interruption stays what it was; anything else is upstream.
func upstreamCause(c plan.Cause) plan.Cause {
	if c == plan.CauseStopped || c == plan.CauseInterrupted {
		return c
	}
	return plan.CauseUpstream
}

func failedReason(dep, n *plan.Node) string {
	if dep.Group != "" && dep.Group != n.Group {
		return dep.Group + " failed"
	}
	return "step " + dep.Label + " failed"
}

func (r *run) skip(i int, res plan.Result) {
	now := time.Now()
	r.finish(i, res, now, now)
}

func (r *run) start(i int) {
	if res, skip := r.decide(i); skip {
		r.skip(i, res)
		return
	}
	n := r.p.Nodes[i]
	if n.Group != "" && !n.Light {
		r.started[n.Group] = true
	}
	r.take(i)
	env := &stepEnv{r: r, n: n}
	started := time.Now()
	r.opts.Observer.StepStarted(n, started)
	if n.Light {
		res := r.safeRun(i, env)
		env.flush()
		r.finish(i, res, started, time.Now())
		return
	}
	r.running++
	go func() {
		res := r.safeRun(i, env)
		env.flush()
		r.completions <- completion{idx: i, result: res, started: started, ended: time.Now()}
	}()
}

func (r *run) safeRun(i int, env *stepEnv) (res plan.Result) {
	n := r.p.Nodes[i]
	defer func() {
		if p := recover(); p != nil {
			res = plan.Fail(fmt.Errorf("internal error in step %s: %v\n%s", n.ID, p, debug.Stack()))
		}
	}()
	res = r.runners[i].Run(r.ctx, env)
	if res.Status == plan.Pending || res.Status == plan.Running {
		res.Status = plan.OK
	}
	return res
}

func (r *run) finish(i int, res plan.Result, started, ended time.Time) {
	if r.done[i] {
		panic("engine: step finished twice")
	}
	n := r.p.Nodes[i]
	r.done[i] = true
	r.finished++
	r.results[i] = res
	r.out.Results[n.ID] = res
	r.out.Started[n.ID] = started
	r.out.Ended[n.ID] = ended
	r.opts.Observer.StepFinished(n, res, started, ended)
	if res.Status == plan.Failed && n.Group != "" {
		r.failedGroups[n.Group] = true
	}
	r.free(i)
	if res.Status == plan.Failed && (n.Critical || res.Abort) {
		r.out.Failed = true
		if (!r.opts.Force || res.Abort) && r.halted == "" {
			r.halted = n.Group
			if r.halted == "" {
				r.halted = n.Label
			}
			r.out.HaltedBy = r.halted
		}
	}
	for _, s := range r.succs[i] {
		r.remaining[s.to]--
		if r.remaining[s.to] == 0 {
			r.markReady(s.to)
		}
	}
}

type nopObserver struct{}

func (nopObserver) StepStarted(*plan.Node, time.Time)                          {}
func (nopObserver) StepFinished(*plan.Node, plan.Result, time.Time, time.Time) {}
func (nopObserver) Log(*plan.Node, string)                                     {}
func (nopObserver) Note(*plan.Node, plan.Note)                                 {}

// readyHeap orders ready steps by their position in the plan.
type readyHeap []int

func (h readyHeap) Len() int           { return len(h) }
func (h readyHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h readyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *readyHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *readyHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
