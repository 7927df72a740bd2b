package temporal

import (
	"context"
	"errors"
	"fmt"
	"os"
	osuser "os/user"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/engine"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/state/pgstate"
)

// maxInput bounds the workflow's input once compressed: Temporal refuses a
// payload past 2 MB.
const maxInput = 1536 << 10

// maxSteps bounds the steps a workflow runs as activities: its history is
// cut at 51,200 events.
const maxSteps = 6000

// pollEvery is how often an attached client asks the workflow and the
// database what happened.
const pollEvery = 200 * time.Millisecond

// memoRun is the memo key of a workflow's run id.
const memoRun = "gantryRun"

// Run carries out a run on the workers (docs/temporal.md): it takes the
// stack's lock; when a workflow of the stack runs with no client attached
// (the last one died), it attaches to it; otherwise it prepares the run,
// hands the lock to a new workflow, starts it and attaches. Attached, it
// feeds the run's record with what the workflow and the workers report
// until the workflow ends; an interrupt cancels the run, as a local run's.
func (e *Engine) Run(ctx context.Context, rr *action.RemoteRun) (*action.Outcome, error) {
	pg, ok := rr.Store.(*pgstate.Store)
	if !ok {
		return nil, &action.InvalidError{Err: fmt.Errorf("--engine %s needs the state in PostgreSQL, not %s", e.location, rr.Store), Consequence: "nothing was run"}
	}
	c, err := e.dial(ctx, identity())
	if err != nil {
		return nil, err
	}
	defer c.Close()
	wfID := WorkflowID(rr.StateLocation, rr.Stack)
	runID := action.NewRunID()
	h := holder(runID, rr.Command)
	if err := e.waitOtherRun(ctx, c, pg, wfID, rr); err != nil {
		return nil, err
	}
	lock, attached, err := pg.LockClient(ctx, h, rr.Lock)
	if err != nil {
		return nil, lockError(err, pg)
	}
	defer func() { _ = lock.Release() }()
	if attached != nil {
		temporalRun, running, err := e.running(ctx, c, wfID, attached.RunID)
		if err != nil {
			return nil, err
		}
		var data []byte
		endedMeanwhile := false
		if running {
			if data, err = pg.Bundle(ctx, attached.RunID); errors.Is(err, pgstate.ErrRunEnded) {
				// It ended since running looked, and gave the lock back:
				// this command takes the lock again, as after any run.
				running, endedMeanwhile = false, true
			} else if err != nil {
				return nil, err
			}
		}
		if running {
			if why, err := rr.Differs(data); err != nil {
				return nil, err
			} else if why != "" {
				// Another run took the workflow's place since
				// waitOtherRun looked: refused before this command
				// opens a record of a run it does not follow.
				return nil, &action.LockedError{LockedError: &state.LockedError{Path: pg.String(), Holder: &attached.Holder}, StatePath: pg.String(), Differs: why}
			}
			rec, err := rr.Attach(attached.RunID, data, attached.Holder.Since)
			if err != nil {
				return nil, err
			}
			rr.Warn(fmt.Sprintf("attached to the stack's run %s, which runs on Temporal workers (workflow %s) since %s; this %s's own plan is not run", attached.RunID, wfID, attached.Holder.Since.Format(time.RFC3339), rr.Command))
			return e.follow(ctx, c, pg, wfID, temporalRun, attached.RunID, rec, rr)
		}
		if !endedMeanwhile {
			// The workflow ended without giving the lock back (terminated
			// on the server): the lock is stale.
			if err := pg.ReleaseWorkflow(ctx, attached.RunID); err != nil {
				return nil, err
			}
			rr.Warn(fmt.Sprintf("the stack's run %s (workflow %s) is no longer running but held the state's lock: released", attached.RunID, wfID))
		}
		_ = lock.Release()
		if lock, attached, err = pg.LockClient(ctx, h, rr.Lock); err != nil {
			return nil, lockError(err, pg)
		}
		if attached != nil {
			return nil, lockError(&state.LockedError{Path: pg.String(), Holder: &attached.Holder}, pg)
		}
	}
	prep, err := rr.Prepare(ctx, runID)
	if err != nil {
		return nil, err
	}
	in, err := e.input(rr, runID, prep)
	if err != nil {
		return nil, err
	}
	if err := pg.HandOver(ctx, runID, wfID, h, prep.Bundle); err != nil {
		return nil, err
	}
	wr, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       wfID,
		TaskQueue:                e.queue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowTaskTimeout:      workflowTaskTimeout,
		Memo:                     map[string]any{memoRun: runID},
	}, WorkflowName, in)
	if err != nil {
		_ = pg.TakeBack(context.WithoutCancel(ctx), runID)
		var started *serviceerror.WorkflowExecutionAlreadyStarted
		if errors.As(err, &started) {
			return nil, lockError(&state.LockedError{Path: pg.String(), Holder: &state.Holder{Command: "another gantry run", Workflow: wfID}}, pg)
		}
		return nil, fmt.Errorf("start the run's workflow on %s: %w", e.hostPort, err)
	}
	rec, err := prep.Open()
	if err != nil {
		// The run goes on without a display; the next deploy attaches.
		return nil, err
	}
	return e.follow(ctx, c, pg, wfID, wr.GetRunID(), runID, rec, rr)
}

// otherRunPoll is how often a client waiting for another run on workers
// (--lock-timeout) looks again.
const otherRunPoll = time.Second

// waitOtherRun refuses, as a held lock is refused (exit 3; --lock-timeout
// waits), a run that a workflow of the stack runs and that is not the one
// this command asks for (another verb, selection or options): this
// command must not attach to it and exit with its outcome as if it were
// its own. A workflow that is gone is left to the lock's own handling.
func (e *Engine) waitOtherRun(ctx context.Context, c client.Client, pg *pgstate.Store, wfID string, rr *action.RemoteRun) error {
	why := ""
	err := state.WaitLock(ctx, pg.String(), rr.Lock, otherRunPoll, func() (bool, *state.Holder, error) {
		wf, err := pg.HeldByWorkflow(ctx)
		if err != nil || wf == nil {
			return wf == nil, nil, err
		}
		if _, running, err := e.running(ctx, c, wfID, wf.RunID); err != nil || !running {
			return !running, nil, err
		}
		data, err := pg.Bundle(ctx, wf.RunID)
		if err != nil {
			return true, nil, nil // it ended meanwhile
		}
		if why, err = rr.Differs(data); err != nil || why == "" {
			return err == nil, nil, err
		}
		return false, &wf.Holder, nil
	})
	var le *state.LockedError
	if errors.As(err, &le) {
		return &action.LockedError{LockedError: le, StatePath: pg.String(), Differs: why}
	}
	return err
}

// input is the workflow's input for a prepared run; one too large for a
// Temporal payload is refused before anything starts.
func (e *Engine) input(rr *action.RemoteRun, runID string, prep *action.Prepared) (RunInput, error) {
	rerun, local := rr.Rerun, rr.Local
	if rerun == nil {
		rerun = func(*plan.Node) bool { return false }
	}
	if local == nil {
		local = func(*plan.Node) bool { return false }
	}
	sk, err := SkeletonOf(prep.Plan, rerun, local)
	if err != nil {
		return RunInput{}, err
	}
	// A workflow's history holds at most 51,200 events; a step that runs
	// as an activity takes about seven (its three and its workflow task's).
	steps := 0
	for _, n := range sk.Nodes {
		if !n.Local {
			steps++
		}
	}
	if steps > maxSteps {
		return RunInput{}, &action.InvalidError{Err: fmt.Errorf("the plan has %d steps that run as activities; a Temporal workflow's history holds about %d: run it locally, or in parts (-c)", steps, maxSteps), Consequence: "nothing was run"}
	}
	in := RunInput{Stack: rr.Stack, RunID: runID, Fingerprint: prep.Fingerprint, State: rr.StateLocation, Queue: e.queue,
		Parallel: rr.Parallel, Force: rr.Force, Skeleton: sk}
	p, err := dataConverter.ToPayload(in)
	if err != nil {
		return RunInput{}, fmt.Errorf("encode the run for the workflow: %w", err)
	}
	if n := len(p.GetData()); n > maxInput {
		return RunInput{}, &action.InvalidError{Err: fmt.Errorf("the plan's %d steps take %d KiB once compressed; a Temporal workflow takes at most %d KiB: run it locally, or in parts (-c)", len(prep.Plan.Nodes), n>>10, maxInput>>10), Consequence: "nothing was run"}
	}
	return in, nil
}

// running reports whether the stack's workflow runs the run runID, and its
// Temporal run id.
func (e *Engine) running(ctx context.Context, c client.Client, wfID, runID string) (string, bool, error) {
	d, err := c.DescribeWorkflowExecution(ctx, wfID, "")
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("ask the Temporal server %s about workflow %s: %w", e.hostPort, wfID, err)
	}
	info := d.GetWorkflowExecutionInfo()
	if info.GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		return "", false, nil
	}
	var memo string
	if f := info.GetMemo().GetFields()[memoRun]; f != nil {
		_ = dataConverter.FromPayload(f, &memo)
	}
	return info.GetExecution().GetRunId(), memo == runID, nil
}

func holder(runID, command string) state.Holder {
	host, _ := os.Hostname()
	user := ""
	if u, err := osuser.Current(); err == nil {
		user = u.Username
	}
	return state.Holder{Host: host, PID: os.Getpid(), RunID: runID, Command: command, User: user, Since: time.Now().UTC()}
}

func lockError(err error, pg *pgstate.Store) error {
	var le *state.LockedError
	if errors.As(err, &le) {
		return &action.LockedError{LockedError: le, StatePath: pg.String()}
	}
	return err
}

// follow feeds a run's record with what the workflow and the workers
// report, until the workflow ends, and ends the record with its outcome.
// An interrupt asks the workflow to cancel the run; a second one, or no
// news of the run for detachAfter after the first (no worker serves it),
// stops following it: the run ends when a worker takes it up.
func (e *Engine) follow(ctx context.Context, c client.Client, pg *pgstate.Store, wfID, temporalRun, runID string, rec *action.RemoteRecord, rr *action.RemoteRun) (*action.Outcome, error) {
	bg := context.WithoutCancel(ctx)
	// Done at the second interrupt; a poll that waits for a worker
	// (a query does) ends with it.
	now := component.StopNow(ctx)
	f := &follower{c: c, pg: pg, wfID: wfID, runID: runID, rec: rec, rr: rr, obs: rec.Observer(), nodes: rec.Plan.Nodes,
		started: map[int]bool{}, pending: map[string][]pgstate.Line{}, asked: map[string]bool{}, byID: map[string]int{}}
	for i, n := range f.nodes {
		f.byID[n.ID] = i
	}
	done := make(chan error, 1)
	var out RunOutput
	go func() { done <- c.GetWorkflow(bg, wfID, temporalRun).Get(bg, &out) }()
	cancelled := false
	heard := time.Now() // the last news of the run
	served := &servedCheck{next: time.Now().Add(workerWait)}
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	var runErr error
	for finished := false; !finished; {
		select {
		case runErr = <-done:
			finished = true
		case <-t.C:
		case <-ctx.Done():
			if !cancelled {
				cancelled = true
				ctx, heard = bg, time.Now()
				if err := c.SignalWorkflow(bg, wfID, temporalRun, SignalCancel, nil); err != nil {
					rr.Warn(fmt.Sprintf("the run could not be told to stop: %v", err))
				}
			}
		case <-now.Done():
			return e.detach(bg, c, wfID, temporalRun, rec, cancelled, served)
		}
		pctx, cancel := context.WithTimeout(now, pollTimeout)
		err := f.poll(pctx)
		cancel()
		if err == nil && !f.idle {
			heard = time.Now()
		}
		if !finished {
			e.checkServed(bg, c, served, rr)
		}
		if cancelled && !finished && time.Since(heard) > detachAfter() {
			return e.detach(bg, c, wfID, temporalRun, rec, cancelled, served)
		}
	}
	// What the last poll may have missed.
	for i := 0; i < 3; i++ {
		if err := f.poll(bg); err == nil && f.idle {
			break
		}
	}
	if runErr != nil {
		rec.Finish(nil)
		return nil, fmt.Errorf("the run's workflow %s failed: %w", wfID, runErr)
	}
	eo := &engine.Outcome{Results: map[string]plan.Result{}, Started: map[string]time.Time{}, Ended: map[string]time.Time{},
		Failed: out.Failed, HaltedBy: out.HaltedBy, Cancelled: out.Cancelled}
	for i, r := range out.Results {
		if i >= len(f.nodes) || r.Status == plan.Pending {
			continue
		}
		id := f.nodes[i].ID
		eo.Results[id] = r.Plan()
		eo.Started[id], eo.Ended[id] = out.Started[i], out.Ended[i]
	}
	if out.Unreleased != "" {
		rr.Warn(fmt.Sprintf("the run's workflow %s could not give the stack's lock back: %s; the next %s --engine %s gives it back", wfID, out.Unreleased, rr.Command, e.location))
	}
	o := rec.Finish(eo)
	if out.Error != "" {
		return o, errors.New(out.Error)
	}
	return o, nil
}

// pollTimeout bounds a poll: a query waits for a worker to answer it.
const pollTimeout = 10 * time.Second

// workerWait is how long a client waits for a worker to poll the run's
// task queue before it says that none does.
const workerWait = 5 * time.Second

// detachAfter is how long an interrupted client waits without news of its
// run before it stops following it: the workers' heartbeats bring them
// the cancellation within 6.4 s, and their steps' processes get the grace
// period to end.
func detachAfter() time.Duration { return component.StopGrace() + 20*time.Second }

// livePoller is how recently a worker must have polled a task queue to be
// taken as serving it: an idle worker polls again at least every minute.
const livePoller = 90 * time.Second

// servedCheck is what a client knows of the workers serving its run.
type servedCheck struct {
	next   time.Time // when to ask again
	warned bool      // it said no worker serves the queue
	none   bool      // no worker did at the last check
}

// checkServed asks, every workerWait, whether any worker polls the run's
// task queue, and says once when none does: the run waits for one.
func (e *Engine) checkServed(ctx context.Context, c client.Client, sc *servedCheck, rr *action.RemoteRun) {
	if sc.warned || time.Now().Before(sc.next) {
		return
	}
	sc.next = time.Now().Add(workerWait)
	ctx, cancel := context.WithTimeout(ctx, pollTimeout)
	defer cancel()
	d, err := c.DescribeTaskQueue(ctx, e.queue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
	if err != nil {
		return // the server is away for a moment: ask again later
	}
	sc.none = true
	for _, p := range d.GetPollers() {
		if time.Since(p.GetLastAccessTime().AsTime()) < livePoller {
			sc.none = false
		}
	}
	if sc.none {
		sc.warned = true
		rr.Warn(fmt.Sprintf("no worker serves task queue %s on %s (namespace %s): the run waits for one; start `gantry worker --engine %s` in a checkout of the stack", e.queue, e.hostPort, e.namespace, e.location))
	}
}

// detach stops following a run that was asked to stop (it is asked now if
// it was not yet) and ends its record here: the workflow ends the run, and
// gives the stack's lock back, when a worker takes it up.
func (e *Engine) detach(ctx context.Context, c client.Client, wfID, temporalRun string, rec *action.RemoteRecord, cancelled bool, sc *servedCheck) (*action.Outcome, error) {
	if !cancelled {
		_ = c.SignalWorkflow(ctx, wfID, temporalRun, SignalCancel, nil)
	}
	rec.Finish(nil)
	why := ""
	if sc.none {
		why = fmt.Sprintf(" (no worker serves task queue %s)", e.queue)
	}
	return nil, &action.DetachedError{Msg: fmt.Sprintf("interrupted: stopped following the run; its workflow %s was asked to cancel and ends when a worker takes it up%s. "+
		"It holds the stack's lock until it ends: start `gantry worker --engine %s` to let it end and give the lock back, "+
		"or terminate it (temporal workflow terminate --workflow-id '%s'), after which the next gantry deploy --engine %s gives the lock back", wfID, why, e.location, wfID, e.location)}
}

// follower is an attached client's view of a run: what it has shown.
type follower struct {
	c     client.Client
	pg    *pgstate.Store
	wfID  string
	runID string
	rec   *action.RemoteRecord
	rr    *action.RemoteRun
	obs   plan.Observer
	nodes []*plan.Node
	byID  map[string]int

	next    int   // the next event to show
	after   int64 // the last line shown
	started map[int]bool
	pending map[string][]pgstate.Line // lines not shown yet, by step
	paused  bool
	asked   map[string]bool
	idle    bool // the last poll found nothing new
}

// poll shows what happened since the last poll: steps that started, their
// lines, steps that ended, in that order (a step's lines are in the
// database before its end is reported).
func (f *follower) poll(ctx context.Context) error {
	v, err := f.c.QueryWorkflow(ctx, f.wfID, "", QueryProgress, f.next)
	if err != nil {
		return err
	}
	var pr Progress
	if err := v.Get(&pr); err != nil {
		return err
	}
	var lines []pgstate.Line
	for {
		batch, err := f.pg.Lines(ctx, f.runID, f.after, 5000)
		if err != nil {
			return err
		}
		lines = append(lines, batch...)
		if len(batch) > 0 {
			f.after = batch[len(batch)-1].Seq
		}
		if len(batch) < 5000 {
			break
		}
	}
	f.idle = len(pr.Events) == 0 && len(lines) == 0
	if pa, ok := f.obs.(plan.Pauser); ok && pr.Paused != f.paused {
		f.paused = pr.Paused
		if pr.Paused {
			pa.Paused(true)
		}
	}
	// Lines go to their steps' queues; each step's are shown after its
	// start and before its end, as a local run shows them.
	for _, l := range lines {
		if _, ok := f.byID[l.Step]; ok {
			f.pending[l.Step] = append(f.pending[l.Step], l)
		}
	}
	drain := func(i int) {
		id := f.nodes[i].ID
		for _, l := range f.pending[id] {
			f.line(i, l)
		}
		delete(f.pending, id)
	}
	for _, ev := range pr.Events {
		if ev.Step < 0 || ev.Step >= len(f.nodes) {
			continue
		}
		n := f.nodes[ev.Step]
		switch {
		case ev.Log != "":
			drain(ev.Step)
			at := ev.At
			if at.IsZero() {
				at = time.Now()
			}
			f.obs.Log(n, ev.Log, at)
		case ev.Finished:
			drain(ev.Step)
			f.obs.StepFinished(n, ev.Result.Plan(), ev.Started, ev.Ended)
		default:
			f.obs.StepStarted(n, ev.At)
			f.started[ev.Step] = true
			drain(ev.Step)
		}
	}
	// Lines of steps still running, in the order they were written.
	for _, l := range lines {
		if i, ok := f.byID[l.Step]; ok && f.started[i] && len(f.pending[l.Step]) > 0 {
			drain(i)
		}
	}
	f.next = pr.Next
	if pa, ok := f.obs.(plan.Pauser); ok && !pr.Paused && f.paused {
		f.paused = false
		pa.Paused(false)
	}
	for _, q := range pr.Questions {
		f.ask(ctx, q)
	}
	return nil
}

// line shows a line a worker sent: a log line, or a note.
func (f *follower) line(i int, l pgstate.Line) {
	n := f.nodes[i]
	switch l.Kind {
	case lineNote:
		if note, ok := decodeNote(l.Body); ok {
			f.obs.Note(n, note)
		}
	default:
		// A worker's line carries no time: it is heard now, a poll later.
		f.obs.Log(n, l.Body, time.Now())
	}
}

// ask reads the answer to a step's question on the terminal, once, and
// sends it to the workflow.
func (f *follower) ask(ctx context.Context, q Question) {
	if f.asked[q.ID] {
		return
	}
	f.asked[q.ID] = true
	if !f.rr.Terminal.Interactive() {
		f.rr.Warn(fmt.Sprintf("step %s waits for an answer, and this deploy has no terminal to ask: run gantry deploy again from a terminal to attach and answer it", q.Step))
		return
	}
	ctx = context.WithoutCancel(ctx) // the poll's ends before the answer comes
	go func() {
		a := Answer{ID: q.ID}
		text, err := f.rr.Terminal.Ask(q.Text)
		if err != nil {
			a.Err = err.Error()
		}
		a.Text = text
		if err := f.c.SignalWorkflow(ctx, f.wfID, "", SignalAnswer, a); err != nil {
			f.rr.Warn(fmt.Sprintf("the answer could not be sent to the run: %v", err))
		}
	}()
}
