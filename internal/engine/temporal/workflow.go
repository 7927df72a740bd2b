package temporal

import (
	"errors"
	"fmt"
	"sort"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/gantry-dev/gantry/internal/engine"
	"github.com/gantry-dev/gantry/internal/plan"
)

// Workflow runs a plan (docs/temporal.md): the scheduler the local executor
// uses decides what starts and what is skipped; each step that starts is an
// activity. A light step is awaited before anything else is decided, as the
// local executor runs it inline. A component's first step goes to the
// shared queue and the worker that takes it hosts the component: its other
// steps go to that worker's queues. A host is known dead when a step it runs
// misses its heartbeats, or one sent to it is not taken in time. When a host
// dies, its components start
// over on another worker where they may run again, and are left incomplete,
// stopping the run, where they may not. Whatever happens, the stack's lock is
// given back at the end.
func Workflow(ctx workflow.Context, in RunInput) (RunOutput, error) {
	p, err := in.Skeleton.Plan(in.Stack)
	if err != nil {
		return RunOutput{}, sdktemporal.NewNonRetryableApplicationError("the run's plan cannot be read", "plan", err)
	}
	if in.Queue == "" {
		in.Queue = DefaultQueue
	}
	w := &run{
		in:         in,
		p:          p,
		nodes:      in.Skeleton.Nodes,
		results:    make([]Result, len(p.Nodes)),
		started:    make([]time.Time, len(p.Nodes)),
		ended:      make([]time.Time, len(p.Nodes)),
		pauses:     map[string]bool{},
		answers:    map[string]Answer{},
		hosts:      map[string]*host{},
		groupHost:  map[string]string{},
		attempt:    map[string]int{},
		ran:        map[string][]int{},
		calls:      map[int]*call{},
		began:      map[int]time.Time{},
		lost:       map[string]string{},
		lostFailed: map[string]bool{},
		restart:    map[string]*restart{},
		spec:       speculation{from: -1},
	}
	// Activities run on a context of their own: cancelling the workflow
	// stops the run as the client's interrupt does, and the steps that
	// must still run (failure paths, ends, the lock's release) can.
	w.ctx, _ = workflow.NewDisconnectedContext(ctx)
	w.s = engine.NewScheduler(p, engine.SchedulerOptions{Parallel: in.Parallel, Force: in.Force, Paused: func() bool { return len(w.pauses) > 0 }})
	if err := w.handlers(ctx); err != nil {
		return RunOutput{}, err
	}
	w.sel = workflow.NewSelector(w.ctx)
	w.listen(ctx)
	for {
		w.dispatch()
		if w.s.Done() {
			break
		}
		if w.s.Idle() && len(w.calls) == 0 {
			w.stuck = w.s.Stuck().Error()
			break
		}
		w.await(!w.sel.HasPending(), func() { w.sel.Select(w.ctx) })
	}
	w.release()
	w.done = true
	return w.output(), nil
}

// run is a workflow's state.
type run struct {
	ctx   workflow.Context
	in    RunInput
	p     *plan.Plan
	nodes []Node
	s     *engine.Scheduler
	sel   workflow.Selector

	results        []Result
	started, ended []time.Time
	events         []Event
	// pauses are the steps holding back new steps; questions those waiting
	// for an answer, answers the answers given.
	pauses    map[string]bool
	questions []Question
	answers   map[string]Answer

	hosts map[string]*host
	// groupHost is the host queue of each component that has one; attempt
	// counts each component's starts over; ran lists the steps of the
	// component's current attempt that started.
	groupHost map[string]string
	attempt   map[string]int
	ran       map[string][]int
	calls     map[int]*call
	seq       int
	// began is when each step that started did: the start of a step lost
	// with its worker, which reports no times.
	began map[int]time.Time
	// lost are the components whose host died and which may not run
	// again: why; restart those waiting for their calls to end before
	// they start over (or are lost).
	lost       map[string]string
	lostFailed map[string]bool
	restart    map[string]*restart

	// spec holds back what a query's replay of history no workflow task
	// has taken in added (speculative.go).
	spec speculation

	cancelled bool
	stuck     string
	// unreleased says why the stack's lock could not be given back.
	unreleased string
	done       bool
}

// host is a worker that hosts components of the run.
type host struct {
	queue, light, worker string
	dead                 bool
}

// call is a step's activity under way.
type call struct {
	idx    int
	host   string // "" for the shared queue
	cancel workflow.CancelFunc
	future workflow.Future
}

// restart is a component whose host died, waiting for its steps' calls to
// end.
type restart struct {
	worker string
	steps  []int // the steps that were running on it
}

// handlers answers queries.
func (w *run) handlers(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, QueryProgress, func(since int) (Progress, error) {
		visible := w.spec.visible(len(w.events))
		if since < 0 || since > visible {
			since = visible
		}
		end := min(visible, since+2000)
		return Progress{Events: w.events[since:end], Next: end, Paused: len(w.pauses) > 0,
			Questions: append([]Question(nil), w.questions...), Done: w.done && w.spec.settled()}, nil
	}); err != nil {
		return err
	}
	return workflow.SetQueryHandler(ctx, QueryAnswer, func(id string) (Answer, error) {
		a, ok := w.answers[id]
		if !ok {
			return Answer{}, errNoAnswer
		}
		return a, nil
	})
}

// errNoAnswer is the answer query's error while a question has none.
var errNoAnswer = errors.New("no answer yet")

// listen takes the signals.
func (w *run) listen(ctx workflow.Context) {
	w.sel.AddReceive(workflow.GetSignalChannel(ctx, SignalCancel), func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(w.ctx, nil)
		w.cancel()
	})
	// The workflow cancelled (temporal workflow cancel): as the client's
	// interrupt. ctx.Done stays ready once closed, so a goroutine hands it
	// on once.
	cancelled := workflow.NewBufferedChannel(w.ctx, 1)
	workflow.Go(ctx, func(gctx workflow.Context) {
		gctx.Done().Receive(gctx, nil)
		w.spec.handoffs++
		cancelled.Send(w.ctx, true)
	})
	w.sel.AddReceive(cancelled, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(w.ctx, nil)
		w.cancel()
	})
	w.sel.AddReceive(workflow.GetSignalChannel(ctx, SignalPause), func(c workflow.ReceiveChannel, _ bool) {
		var ps PauseSignal
		c.Receive(w.ctx, &ps)
		if ps.On {
			w.pauses[ps.ID] = true
		} else {
			delete(w.pauses, ps.ID)
		}
	})
	w.sel.AddReceive(workflow.GetSignalChannel(ctx, SignalAsk), func(c workflow.ReceiveChannel, _ bool) {
		var q Question
		c.Receive(w.ctx, &q)
		if _, answered := w.answers[q.ID]; !answered {
			w.questions = append(w.questions, q)
		}
	})
	w.sel.AddReceive(workflow.GetSignalChannel(ctx, SignalAnswer), func(c workflow.ReceiveChannel, _ bool) {
		var a Answer
		c.Receive(w.ctx, &a)
		w.answers[a.ID] = a
		for i, q := range w.questions {
			if q.ID == a.ID {
				w.questions = append(w.questions[:i], w.questions[i+1:]...)
				break
			}
		}
	})
}

// cancel stops the run: nothing new starts, running steps are cancelled
// (their processes stop) and end as interrupted.
func (w *run) cancel() {
	if w.cancelled {
		return
	}
	w.cancelled = true
	w.s.Cancel()
	for _, idx := range w.runningSteps() {
		w.calls[idx].cancel()
	}
}

func (w *run) runningSteps() []int {
	idx := make([]int, 0, len(w.calls))
	for i := range w.calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	return idx
}

// dispatch carries out the scheduler's decisions until it has none.
func (w *run) dispatch() {
	for {
		d, ok := w.s.Next()
		if !ok {
			return
		}
		switch d.Kind {
		case engine.Skipped:
			now := workflow.Now(w.ctx)
			w.finished(d.Step, ResultOf(d.Result), now, now)
		case engine.Start:
			w.start(d.Step)
		case engine.Grant:
			// Steps never leave the run on workers (Env.Outside is local).
		}
	}
}

// start starts a step: its activity, or, for a component whose host died
// and which may not run again, its end without running.
func (w *run) start(idx int) {
	n := w.nodes[idx]
	w.began[idx] = workflow.Now(w.ctx)
	w.events = append(w.events, Event{Step: idx, At: w.began[idx]})
	if why, ok := w.lost[n.Group]; ok && n.Component != "" {
		var res plan.Result
		switch {
		case n.Kind == plan.KindEnd:
			res = plan.Skip(plan.CauseUpstream, n.Component+" failed")
		case !w.lostFailed[n.Group]:
			// The first step it comes to stops the run, as the step that
			// was lost would have.
			w.lostFailed[n.Group] = true
			res = abort(why).Plan()
		default:
			res = plan.Skip(plan.CauseStopped, "not run: "+why)
		}
		now := workflow.Now(w.ctx)
		w.s.Finish(idx, res)
		w.finished(idx, ResultOf(res), now, now)
		return
	}
	if n.Component != "" {
		w.ran[n.Group] = append(w.ran[n.Group], idx)
	}
	w.call(idx)
	if !n.Light {
		return
	}
	// Light: awaited before anything else is decided; other steps' ends
	// wait. A light step sent again (its worker died) is awaited too.
	for {
		c := w.calls[idx]
		if c == nil {
			return
		}
		w.await(!c.future.IsReady(), func() { w.resolved(c) })
	}
}

// call sends a step to its queue.
func (w *run) call(idx int) *call {
	n := w.nodes[idx]
	queue, hostQueue := w.in.Queue, ""
	if hq, ok := w.groupHost[n.Group]; ok && n.Component != "" {
		h := w.hosts[hq]
		hostQueue = hq
		queue = h.queue
		if n.Light {
			queue = h.light
		}
	}
	in := StepInput{Stack: w.in.Stack, RunID: w.in.RunID, Fingerprint: w.in.Fingerprint, State: w.in.State,
		Step: n.ID, Kind: n.Kind, Light: n.Light, Spec: n.Spec, Attempt: w.attempt[n.Group], Host: hostQueue}
	if len(n.Inputs) > 0 {
		in.Inputs = make(map[string]Result, len(n.Inputs))
		for _, id := range n.Inputs {
			in.Inputs[id] = w.results[w.p.Node(id).Index()]
		}
	}
	w.seq++
	ao := workflow.ActivityOptions{
		TaskQueue:           queue,
		ActivityID:          fmt.Sprintf("%d:%s", w.seq, n.ID),
		StartToCloseTimeout: stepTimeout,
		HeartbeatTimeout:    HeartbeatTimeout,
		WaitForCancellation: true,
		RetryPolicy:         &sdktemporal.RetryPolicy{MaximumAttempts: 1},
	}
	if hostQueue != "" {
		// A host takes what is sent to it at once (its queues have no
		// limit; its steps wait for a slot there, heartbeating): a step
		// not taken in time says the host is gone.
		ao.ScheduleToStartTimeout = hostStartTimeout
	}
	var c *call
	if n.Light && n.Local {
		// In this worker's process: no round trip through the server.
		lctx, cancel := workflow.WithCancel(workflow.WithLocalActivityOptions(w.ctx, workflow.LocalActivityOptions{
			StartToCloseTimeout: localTimeout,
			RetryPolicy:         &sdktemporal.RetryPolicy{MaximumAttempts: 3},
		}))
		in.Host = ""
		c = &call{idx: idx, cancel: cancel, future: workflow.ExecuteLocalActivity(lctx, ActivityStep, in)}
	} else {
		actx, cancel := workflow.WithCancel(workflow.WithActivityOptions(w.ctx, ao))
		c = &call{idx: idx, host: hostQueue, cancel: cancel, future: workflow.ExecuteActivity(actx, ActivityStep, in)}
	}
	w.calls[idx] = c
	if !n.Light {
		w.sel.AddFuture(c.future, func(workflow.Future) { w.resolved(c) })
	}
	return c
}

// resolved takes in a step's activity that ended.
func (w *run) resolved(c *call) {
	if w.calls[c.idx] != c {
		return // a call of an attempt that was given up
	}
	delete(w.calls, c.idx)
	n := w.nodes[c.idx]
	var out StepOutput
	err := c.future.Get(w.ctx, &out)
	if r := w.restart[n.Group]; r != nil && n.Component != "" {
		// Its host died: whatever the call says, the component starts over
		// or is lost once all its calls are in.
		r.steps = append(r.steps, c.idx)
		w.settle(n.Group)
		return
	}
	if err == nil {
		if out.Host != "" && n.Component != "" && !n.Light {
			if h := w.hosts[out.Host]; h != nil && h.dead {
				// A worker this run gave up for dead took the component's
				// first step: its data is there, and that worker is not
				// trusted with more. The component starts over.
				w.restart[n.Group] = &restart{worker: h.worker, steps: []int{c.idx}}
				w.settle(n.Group)
				return
			}
			if _, ok := w.groupHost[n.Group]; !ok {
				w.hosted(n.Group, out)
			}
		}
		w.s.Finish(c.idx, out.Result.Plan())
		w.finished(c.idx, out.Result, out.Started, out.Ended)
		return
	}
	now := workflow.Now(w.ctx)
	var ce *sdktemporal.CanceledError
	if w.cancelled && errors.As(err, &ce) {
		// The run's interrupt reached it before a worker took it.
		res := ResultOf(plan.Fail(errors.New("interrupted before a worker took it")))
		w.s.Finish(c.idx, res.Plan())
		w.finished(c.idx, res, now, now)
		return
	}
	// A step's activity returns an error only when its worker lost it
	// (stopped, dead, crashed): a step's own failure is a result.
	name, stopped, dead := workerDied(err)
	hq := c.host
	if hq == "" {
		hq = hostOf(err)
	}
	worker := w.describeWorker(name, stopped, hq)
	if !dead {
		worker = fmt.Sprintf("%v", err)
	}
	if n.Component != "" {
		w.restart[n.Group] = &restart{worker: worker, steps: []int{c.idx}}
		w.hostDied(hq, worker)
		w.settle(n.Group)
		return
	}
	if n.Rerun && !w.cancelled {
		w.log(c.idx, fmt.Sprintf("the worker running this step died (%s): running it again on another worker", worker))
		w.call(c.idx)
		return
	}
	res := abort(fmt.Sprintf("the worker running this step died (%s); it may have done part of its work", worker))
	w.s.Finish(c.idx, res.Plan())
	w.finished(c.idx, res, w.startOf(c.idx, now), now)
}

// describeWorker names the worker that lost a step: as its heartbeats
// named it, else as the host it was recorded as (a heartbeat timeout
// before the step's first heartbeat carries no name), else "a worker".
func (w *run) describeWorker(name string, stopped bool, hostQueue string) string {
	if name == "" {
		if h := w.hosts[hostQueue]; h != nil && h.worker != "" {
			name = h.worker
		} else {
			name = "a worker"
		}
	}
	if stopped {
		name += ", stopped"
	}
	return name
}

// startOf is when a step started, for one lost with its worker: the
// workflow's start of it, else now.
func (w *run) startOf(idx int, now time.Time) time.Time {
	if t, ok := w.began[idx]; ok {
		return t
	}
	return now
}

// abort is the failure of a step lost with its worker: it stops the run.
func abort(reason string) Result {
	return Result{Status: plan.Failed, Reason: reason, Abort: true}
}

// hosted records the worker that took a component's first step as its
// host.
func (w *run) hosted(group string, out StepOutput) {
	w.groupHost[group] = out.Host
	if w.hosts[out.Host] == nil {
		w.hosts[out.Host] = &host{queue: out.Host, light: out.Light, worker: out.Worker}
	}
}

// hostDied takes in that a host is gone: what was sent to it is cancelled,
// and each component it hosted waits for its calls to end, then starts over
// on another worker or is lost.
func (w *run) hostDied(queue, worker string) {
	h := w.hosts[queue]
	if h != nil {
		if h.dead || w.done {
			return
		}
		h.dead = true
		if worker == "" {
			worker = h.worker
		}
	}
	var groups []string
	for g, hq := range w.groupHost {
		if hq == queue && queue != "" {
			groups = append(groups, g)
		}
	}
	sort.Strings(groups)
	for _, g := range groups {
		delete(w.groupHost, g)
		if w.restart[g] == nil {
			w.restart[g] = &restart{worker: worker}
		}
	}
	for _, idx := range w.runningSteps() {
		if c := w.calls[idx]; c.host == queue && queue != "" {
			c.cancel()
		}
	}
	for _, g := range groups {
		w.settle(g)
	}
}

// settle starts a component over, or gives it up, once none of its calls
// is under way.
func (w *run) settle(group string) {
	r := w.restart[group]
	if r == nil {
		return
	}
	for _, c := range w.calls {
		if w.nodes[c.idx].Group == group && w.nodes[c.idx].Component != "" {
			return
		}
	}
	delete(w.restart, group)
	delete(w.groupHost, group)
	comp := ""
	rerun := true
	for _, idx := range w.ran[group] {
		comp = w.nodes[idx].Component
		rerun = rerun && w.nodes[idx].Rerun
	}
	sort.Ints(r.steps)
	if rerun && !w.cancelled {
		if err := w.s.Reset(group); err == nil {
			w.attempt[group]++
			w.ran[group] = nil
			for _, idx := range r.steps {
				w.log(idx, fmt.Sprintf("the worker running %s died (%s): starting it over on another worker", comp, r.worker))
			}
			return
		}
	}
	why := fmt.Sprintf("the worker running %s (%s) died", comp, r.worker)
	if !rerun {
		why += fmt.Sprintf("; %s is left incomplete: it does not declare lifecycle.idempotent, so it is not run again", comp)
	}
	w.lost[group] = why
	w.lostFailed[group] = len(r.steps) > 0
	now := workflow.Now(w.ctx)
	for _, idx := range r.steps {
		res := abort(why)
		w.s.Finish(idx, res.Plan())
		w.finished(idx, res, w.startOf(idx, now), now)
	}
}

// finished records how a step ended, for the output and the client.
func (w *run) finished(idx int, res Result, started, ended time.Time) {
	w.results[idx] = res
	w.started[idx], w.ended[idx] = started, ended
	w.events = append(w.events, Event{Step: idx, Finished: true, At: workflow.Now(w.ctx), Result: res, Started: started, Ended: ended})
}

// log adds a line of the workflow's own to a step's log.
func (w *run) log(idx int, line string) {
	w.events = append(w.events, Event{Step: idx, At: workflow.Now(w.ctx), Log: line})
}

// release gives the stack's lock back.
func (w *run) release() {
	actx := workflow.WithActivityOptions(w.ctx, workflow.ActivityOptions{
		TaskQueue:           w.in.Queue,
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &sdktemporal.RetryPolicy{MaximumAttempts: 30, MaximumInterval: 10 * time.Second},
	})
	f := workflow.ExecuteActivity(actx, ActivityRelease, ReleaseInput{Stack: w.in.Stack, RunID: w.in.RunID, State: w.in.State})
	var err error
	w.await(!f.IsReady(), func() { err = f.Get(actx, nil) })
	if err != nil {
		workflow.GetLogger(w.ctx).Warn("the stack's lock could not be given back", "err", err)
		w.unreleased = err.Error()
		var ae *sdktemporal.ApplicationError
		if errors.As(err, &ae) {
			w.unreleased = ae.Message()
		}
	}
}

func (w *run) output() RunOutput {
	return RunOutput{Results: w.results, Started: w.started, Ended: w.ended, Failed: w.s.Failed(), HaltedBy: w.s.HaltedBy(),
		Cancelled: w.cancelled, Error: w.stuck, Unreleased: w.unreleased}
}

// workerDied reports whether an activity ended because its worker went
// away (dead): no heartbeat in time, not started in time on a host's
// queue, or its worker stopped while it ran (stopped). It names the worker
// when the error does ("" when not: describeWorker).
func workerDied(err error) (name string, stopped, dead bool) {
	var ae *sdktemporal.ApplicationError
	if errors.As(err, &ae) && ae.Type() == errStopped {
		var hb Heartbeat
		if ae.HasDetails() && ae.Details(&hb) == nil {
			name = hb.Worker
		}
		return name, true, true
	}
	var te *sdktemporal.TimeoutError
	if errors.As(err, &te) {
		switch te.TimeoutType() {
		case enumspb.TIMEOUT_TYPE_HEARTBEAT, enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START:
			var hb Heartbeat
			if te.HasLastHeartbeatDetails() && te.LastHeartbeatDetails(&hb) == nil {
				name = hb.Worker
			}
			return name, false, true
		}
	}
	return "", false, false
}

// hostOf is the host queue an activity's heartbeats (or its worker, when
// stopped) named.
func hostOf(err error) string {
	var ae *sdktemporal.ApplicationError
	var hb Heartbeat
	if errors.As(err, &ae) && ae.Type() == errStopped && ae.HasDetails() && ae.Details(&hb) == nil {
		return hb.Host
	}
	var te *sdktemporal.TimeoutError
	if errors.As(err, &te) && te.HasLastHeartbeatDetails() && te.LastHeartbeatDetails(&hb) == nil {
		return hb.Host
	}
	return ""
}

// Heartbeat is what a step's heartbeats carry: where it runs.
type Heartbeat struct {
	Host   string
	Worker string
}
