// Package engine is gantry's one executor: it walks any plan DAG, starting each
// step the moment its last dependency ends (no polling, no level batching), at
// most --parallel steps at once, with failure paths, soft skips, a stop on
// critical failures and cancellation that reaches every running step. It knows
// steps only as plan nodes and the runners a Binder gives for them.
package engine

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
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
	// Ask shows a gate's or a pause's question where the person at the
	// terminal sees it (the step has logged it) and reads a line of answer.
	Ask func(question string) (string, error)
	// Settled, when set, is called each time the executor has started every
	// step it can and waits for one to end: tests drive steps one at a time
	// with it.
	Settled func()
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

type run struct {
	ctx     context.Context
	p       *plan.Plan
	opts    Options
	runners []plan.Runner
	s       *Scheduler

	// wanting are the grants of steps back from outside the run, oldest
	// first (Env.Outside).
	wanting []chan struct{}
	slots   chan slotRequest

	completions chan completion
	// idle hands a step to a worker goroutine waiting for one; quit,
	// closed when the run ends, lets the waiting workers go (workers.go).
	idle       chan func()
	quit       chan struct{}
	pauseMu    sync.Mutex // serialises prompts
	pauseCount int        // guarded by mu
	resume     chan struct{}
	mu         sync.Mutex

	out *Outcome
}

// Run executes the plan and returns when every step has finished or been
// skipped. It never returns early: after a failure or a cancellation, running
// steps are waited for and the rest are skipped (failure paths and Always
// steps still run). A plan that is not valid, or a step without a runner, is
// an error before anything runs. Its decisions are the Scheduler's.
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
		ctx:         ctx,
		p:           p,
		opts:        opts,
		runners:     runners,
		completions: make(chan completion, opts.Parallel),
		idle:        make(chan func()),
		quit:        make(chan struct{}),
		resume:      make(chan struct{}, 1),
		slots:       make(chan slotRequest),
		out: &Outcome{
			Results: make(map[string]plan.Result, n),
			Started: make(map[string]time.Time, n),
			Ended:   make(map[string]time.Time, n),
		},
	}
	r.s = NewScheduler(p, SchedulerOptions{Parallel: opts.Parallel, Force: opts.Force, Paused: r.paused})
	// Deferred: a panic out of the loop (an observer's, say) must let the
	// idle workers go too.
	defer close(r.quit)
	err := r.loop()
	r.out.Failed, r.out.HaltedBy = r.s.Failed(), r.s.HaltedBy()
	return r.out, err
}

func (r *run) loop() error {
	ctxDone := r.ctx.Done()
	for {
		r.dispatch()
		if r.s.Done() {
			if r.ctx.Err() != nil && !r.out.Cancelled && r.anyFailed() {
				// The interrupt and the last completions came together,
				// and the select took the completions: a step the
				// interrupt failed makes the run interrupted all the
				// same (a run that ended well is left as it is).
				r.s.Cancel()
				r.out.Cancelled = true
			}
			return nil
		}
		if r.s.Idle() {
			// Nothing runs and nothing can start: a plan whose edges were
			// not checked would wait here forever.
			return r.s.Stuck()
		}
		if r.opts.Settled != nil {
			r.opts.Settled()
		}
		select {
		case c := <-r.completions:
			r.s.Finish(c.idx, c.result)
			r.finished(c.idx, c.result, c.started, c.ended)
		case <-ctxDone:
			r.s.Cancel()
			r.out.Cancelled = true
			ctxDone = nil
		case m := <-r.slots:
			r.slotMessage(m)
		case <-r.resume:
		}
	}
}

// anyFailed reports whether a step of the run failed.
func (r *run) anyFailed() bool {
	for _, res := range r.out.Results {
		if res.Status == plan.Failed {
			return true
		}
	}
	return false
}

// dispatch carries out the scheduler's decisions until it has none: light
// steps run inline, others on the run's workers (goStep).
func (r *run) dispatch() {
	for {
		d, ok := r.s.Next()
		if !ok {
			return
		}
		switch d.Kind {
		case Grant:
			close(r.wanting[0])
			r.wanting = r.wanting[1:]
		case Skipped:
			now := time.Now()
			r.finished(d.Step, d.Result, now, now)
		case Start:
			r.start(d.Step)
		}
	}
}

func (r *run) paused() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.pauseCount > 0
}

func (r *run) start(i int) {
	n := r.p.Nodes[i]
	env := &stepEnv{r: r, n: n}
	started := time.Now()
	r.opts.Observer.StepStarted(n, started)
	if n.Light {
		res := r.safeRun(i, env)
		env.flush()
		r.s.Finish(i, res)
		r.finished(i, res, started, time.Now())
		return
	}
	r.goStep(func() {
		res := r.safeRun(i, env)
		env.flush()
		r.completions <- completion{idx: i, result: res, started: started, ended: time.Now()}
	})
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

// finished records a step's end in the outcome and tells the observer; the
// scheduler has it already.
func (r *run) finished(i int, res plan.Result, started, ended time.Time) {
	n := r.p.Nodes[i]
	r.out.Results[n.ID] = res
	r.out.Started[n.ID] = started
	r.out.Ended[n.ID] = ended
	r.opts.Observer.StepFinished(n, res, started, ended)
}

type nopObserver struct{}

func (nopObserver) StepStarted(*plan.Node, time.Time)                          {}
func (nopObserver) StepFinished(*plan.Node, plan.Result, time.Time, time.Time) {}
func (nopObserver) Log(*plan.Node, string, time.Time)                          {}
func (nopObserver) Note(*plan.Node, plan.Note)                                 {}
