package temporal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	sdktemporal "go.temporal.io/sdk/temporal"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/lines"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/secret"
	"github.com/gantry-dev/gantry/internal/state/pgstate"
)

// step carries out one step of a run with the one runner of its kind, on
// this worker's build of the run: it heartbeats meanwhile, takes a slot
// unless the step is light, takes in what the run's other workers recorded
// first, and has what it recorded in the state, and its lines in the
// database, before it returns.
func (a *activities) step(ctx context.Context, in StepInput) (StepOutput, error) {
	out := StepOutput{Host: a.host, Light: a.light, Worker: a.name, Started: time.Now()}
	if !activity.GetInfo(ctx).IsLocalActivity { // local ones cannot
		stopBeats := a.heartbeat(ctx)
		defer stopBeats()
	}
	fail := func(err error) (StepOutput, error) {
		out.Result, out.Ended = ResultOf(plan.Fail(err)), time.Now()
		return out, nil
	}
	if !in.Light {
		if err := a.slots.acquire(ctx); err != nil {
			return fail(errors.New("interrupted before it started"))
		}
		defer a.slots.release()
		out.Started = time.Now()
	}
	hr, err := a.run(ctx, in)
	if hr != nil {
		defer a.done(hr)
	}
	if err != nil {
		return fail(err)
	}
	wr := hr.run
	n := wr.Plan.Node(in.Step)
	if n == nil {
		return fail(fmt.Errorf("this worker's plan has no step %s", in.Step))
	}
	comp := n.Component
	local := activity.GetInfo(ctx).IsLocalActivity
	hr.mu.Lock()
	// What this worker holds of the step's component is newer than the
	// state only when it ran an earlier step of the component's current
	// attempt as its host; otherwise (the first step of an attempt, a light
	// step run in the workflow's worker) the state's record is taken in
	// first.
	own := comp != "" && !local && hr.hosted[comp] == in.Attempt+1
	if comp != "" && !local {
		hr.hosted[comp] = in.Attempt + 1
		hr.active[comp]++
	}
	// A hosted step reads what its component's earlier steps handed on
	// here: a worker that lost it (restarted) cannot run it.
	for _, id := range n.Inputs {
		if in.Host == "" || in.Inputs[id].Status != plan.OK {
			continue
		}
		if dep := wr.Plan.Node(id); dep != nil && dep.Component == comp && comp != "" {
			if _, ok := hr.data[dataKey(in.Attempt, id)]; !ok {
				hr.mu.Unlock()
				return fail(errNotMine)
			}
		}
	}
	hr.mu.Unlock()
	if comp != "" && !local {
		defer func() {
			hr.mu.Lock()
			hr.active[comp]--
			hr.mu.Unlock()
		}()
	}
	mine := func(name string) bool {
		if name == comp {
			return own
		}
		return hr.isActive(name)
	}
	t0 := time.Now()
	if err := wr.Refresh(ctx, mine); err != nil {
		return fail(fmt.Errorf("read what the run's other workers recorded: %w", err))
	}
	refreshed := time.Since(t0)
	runner, err := wr.Runner(n)
	if err != nil {
		return fail(err)
	}
	env := &stepEnv{a: a, hr: hr, n: n, in: in, ctx: ctx, info: activity.GetInfo(ctx)}
	res := safeRun(component.WithWatcher(ctx, a.reaper), runner, env, n)
	env.flush()
	if a.stopping.Load() && ctx.Err() != nil {
		// Stopped with its worker, not by the run: the workflow takes it
		// as the worker's death (the step's processes are stopped).
		hr.lines.flush(context.WithoutCancel(ctx))
		return out, sdktemporal.NewApplicationError("the worker running the step was stopped", errStopped, Heartbeat{Host: a.host, Worker: a.name})
	}
	hr.lines.flush(context.WithoutCancel(ctx))
	if err := wr.Flush(); err != nil && res.Status != plan.Failed {
		res = plan.Fail(fmt.Errorf("cannot record the state: %w", err))
	}
	hr.mu.Lock()
	hr.data[dataKey(in.Attempt, in.Step)] = res.Data
	hr.mu.Unlock()
	slog.Debug("step done", "step", in.Step, "local", local, "refresh", refreshed.Round(time.Microsecond),
		"total", time.Since(out.Started).Round(time.Microsecond))
	mask := wr.Masker.Text
	res.Reason, res.Warning, res.Info, res.Label = mask(res.Reason), mask(res.Warning), mask(res.Info), mask(res.Label)
	out.Result, out.Ended = ResultOf(res), time.Now()
	return out, nil
}

// dataKey keys what a step handed on, by its component's attempt.
func dataKey(attempt int, step string) string { return fmt.Sprintf("%d:%s", attempt, step) }

// safeRun runs a step, a panic becoming its failure, as the local executor
// does.
func safeRun(ctx context.Context, r plan.Runner, env plan.Env, n *plan.Node) (res plan.Result) {
	defer func() {
		if p := recover(); p != nil {
			res = plan.Fail(fmt.Errorf("internal error in step %s: %v\n%s", n.ID, p, debug.Stack()))
		}
	}()
	res = r.Run(ctx, env)
	if res.Status == plan.Pending || res.Status == plan.Running {
		res.Status = plan.OK
	}
	return res
}

// heartbeat records the activity's heartbeats until the returned function
// is called: they say the worker lives, and bring the workflow's
// cancellation.
func (a *activities) heartbeat(ctx context.Context) func() {
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The first after HeartbeatEvery: a quick step sends none.
		t := time.NewTicker(HeartbeatEvery)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			activity.RecordHeartbeat(ctx, Heartbeat{Host: a.host, Worker: a.name})
		}
	}()
	return func() { close(stop); <-done }
}

// isActive says whether a component has a step running here as its host:
// what this worker knows of it is then newer than the state.
func (hr *hostedRun) isActive(name string) bool {
	hr.mu.Lock()
	defer hr.mu.Unlock()
	return hr.active[name] > 0
}

// stepEnv is the plan.Env of a step on a worker.
type stepEnv struct {
	a    *activities
	hr   *hostedRun
	n    *plan.Node
	in   StepInput
	ctx  context.Context
	info activity.Info

	streams lines.Writers
}

func (e *stepEnv) log(line string, continued, continues bool) {
	masked := e.hr.run.Masker.Piece(line, continued, continues)
	e.hr.lines.add(pgstate.Line{Step: e.n.ID, Kind: lineLog, Body: masked})
}

// Stream returns a line writer of its own, as the local executor's.
func (e *stepEnv) Stream() io.Writer { return e.streams.New(e.log) }

// flush writes the last line of each stream that did not end with a
// newline.
func (e *stepEnv) flush() { e.streams.Flush() }

func (e *stepEnv) Logf(format string, args ...any) {
	e.log(fmt.Sprintf(format, args...), false, false)
}

// Note sends what the step learned to the client, secret values masked
// here: they never leave the worker.
func (e *stepEnv) Note(n plan.Note) {
	if n.Secret {
		n.Value = secret.Mask
	} else {
		n.Value = e.hr.run.Masker.Text(n.Value)
	}
	e.hr.lines.add(pgstate.Line{Step: e.n.ID, Kind: lineNote, Body: encodeNote(n)})
}

func (e *stepEnv) Interactive() bool { return e.hr.run.Bundle.Interactive }
func (e *stepEnv) Yes() bool         { return e.hr.run.Bundle.Yes }
func (e *stepEnv) RunID() string     { return e.hr.run.Bundle.RunID }

// Outside runs fn keeping the step's slot: steps leave the run's slots
// only on the local executor (docs/temporal.md).
func (e *stepEnv) Outside(fn func() error) error { return fn() }

// Result returns the outcome of one of the step's inputs, as the workflow
// gave it, with the data it handed on here.
func (e *stepEnv) Result(id string) plan.Result {
	if !slices.Contains(e.n.Inputs, id) {
		panic(fmt.Sprintf("step %s reads step %s, which is not among its inputs", e.n.ID, id))
	}
	r := e.in.Inputs[id].Plan()
	e.hr.mu.Lock()
	r.Data = e.hr.data[dataKey(e.in.Attempt, id)]
	e.hr.mu.Unlock()
	return r
}

// signal sends a signal to the step's workflow.
func (e *stepEnv) signal(name string, arg any) error {
	return e.a.c.SignalWorkflow(context.WithoutCancel(e.ctx), e.info.WorkflowExecution.ID, e.info.WorkflowExecution.RunID, name, arg)
}

// Pause holds back the run's new steps while fn runs: the workflow hears
// of it, and the client's display steps aside.
func (e *stepEnv) Pause(fn func() error) error {
	id := e.n.ID + "#" + randomID()
	e.hr.lines.flush(e.ctx)
	if err := e.signal(SignalPause, PauseSignal{ID: id, On: true}); err != nil {
		return fmt.Errorf("hold the run back: %w", err)
	}
	err := fn()
	e.hr.lines.flush(e.ctx)
	if serr := e.signal(SignalPause, PauseSignal{ID: id}); serr != nil && err == nil {
		err = fmt.Errorf("let the run go on: %w", serr)
	}
	return err
}

// Ask logs the question and asks the client for an answer, through the
// workflow, and waits for it: a client attached later can answer too.
func (e *stepEnv) Ask(question string) (string, error) {
	id := e.n.ID + "#" + randomID()
	e.Logf("%s", question)
	e.hr.lines.flush(e.ctx)
	if err := e.signal(SignalAsk, Question{ID: id, Step: e.n.ID, Text: e.hr.run.Masker.Text(plan.Asking(e.n, question))}); err != nil {
		return "", fmt.Errorf("ask the client: %w", err)
	}
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return "", errors.New("interrupted while waiting for an answer")
		case <-t.C:
		}
		v, err := e.a.c.QueryWorkflow(e.ctx, e.info.WorkflowExecution.ID, e.info.WorkflowExecution.RunID, QueryAnswer, id)
		if err != nil {
			continue // no answer yet
		}
		var ans Answer
		if err := v.Get(&ans); err != nil {
			return "", err
		}
		if ans.Err != "" {
			return ans.Text, errors.New(ans.Err)
		}
		return ans.Text, nil
	}
}

func randomID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Kinds of the lines a worker sends.
const (
	lineLog  int16 = 0 // a line of the step's output
	lineNote int16 = 1 // a note (plan.Note, JSON)
)

func encodeNote(n plan.Note) string {
	b, _ := json.Marshal(n)
	return string(b)
}

func decodeNote(s string) (plan.Note, bool) {
	var n plan.Note
	return n, json.Unmarshal([]byte(s), &n) == nil
}

// shipper sends a run's lines to the database in batches, in order: a
// moment after the first line of a batch, and whenever a step ends or asks.
type shipper struct {
	pg    *pgstate.Store
	runID string

	mu     sync.Mutex
	buf    []pgstate.Line
	shipMu sync.Mutex // batches go one at a time, in order
	kick   chan struct{}
	stop   chan struct{}
	done   chan struct{}
}

func newShipper(pg *pgstate.Store, runID string) *shipper {
	s := &shipper{pg: pg, runID: runID, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go s.loop()
	return s
}

func (s *shipper) add(l pgstate.Line) {
	s.mu.Lock()
	s.buf = append(s.buf, l)
	first := len(s.buf) == 1
	s.mu.Unlock()
	if first {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
}

func (s *shipper) loop() {
	defer close(s.done)
	for {
		select {
		case <-s.stop:
			return
		case <-s.kick:
		}
		t := time.NewTimer(50 * time.Millisecond)
		select {
		case <-s.stop:
			t.Stop()
			return
		case <-t.C:
		}
		s.flush(context.Background())
	}
}

// flush sends what is queued now.
func (s *shipper) flush(ctx context.Context) {
	s.shipMu.Lock()
	defer s.shipMu.Unlock()
	s.mu.Lock()
	batch := s.buf
	s.buf = nil
	s.mu.Unlock()
	if len(batch) == 0 {
		return
	}
	if err := s.pg.AppendLines(ctx, s.runID, batch); err != nil {
		slog.Warn("a step's log lines could not be sent to the client", "run", s.runID, "lines", len(batch), "err", err)
	}
}

func (s *shipper) close() {
	close(s.stop)
	<-s.done
	s.flush(context.Background())
	s.pg.Close()
}
