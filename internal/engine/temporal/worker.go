package temporal

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/state/pgstate"
)

// Work serves steps of runs (gantry worker) until ctx ends: the shared
// queue's workflow tasks, first steps of components and stack-level steps
// while it has a free slot; the steps of the components it hosts on a
// queue of its own; their light steps on another, which takes no slot. A
// reaper process kills the processes of its running steps if it dies.
func (e *Engine) Work(ctx context.Context, o action.WorkerOptions) error {
	if o.Parallel < 1 {
		o.Parallel = 1
	}
	id := identity()
	c, err := e.dial(ctx, id)
	if err != nil {
		return err
	}
	defer c.Close()
	reaper, err := startReaper()
	if err != nil {
		return err
	}
	defer reaper.close()
	var b [4]byte
	_, _ = rand.Read(b[:])
	host := e.queue + "@" + id + "/" + hex.EncodeToString(b[:])
	a := &activities{e: e, o: o, c: c, name: id, host: host, light: host + "/light", slots: newSlots(o.Parallel),
		reaper: reaper, runs: map[string]*hostedRun{}}
	a.openRun = a.open
	supplier, err := worker.NewFixedSizeSlotSupplier(100)
	if err != nil {
		return err
	}
	shared, err := worker.NewCompositeTuner(worker.CompositeTunerOptions{
		WorkflowSlotSupplier:        supplier,
		ActivitySlotSupplier:        a.slots,
		LocalActivitySlotSupplier:   supplier,
		NexusSlotSupplier:           supplier,
		SessionActivitySlotSupplier: supplier,
	})
	if err != nil {
		return err
	}
	workers := []worker.Worker{
		worker.New(c, e.queue, worker.Options{
			Identity:                         id,
			Tuner:                            shared,
			MaxConcurrentActivityTaskPollers: 1,
			StickyScheduleToStartTimeout:     StickyTimeout,
			// Workflow tasks are polled by pollers of the shared queue
			// and of this worker's sticky one, the first of each kind
			// admitted whenever a workflow slot is free. The SDK's
			// default ("Mixed") pollers send every poll to the sticky
			// queue while their last answer there hinted at a backlog,
			// which only an empty sticky poll (up to a minute) clears: a
			// task moved to the shared queue when its sticky wait timed
			// out waited that long (2 in 230 runs of landscape_failover
			// at 4 copies at once). Do not go back to
			// MaxConcurrentWorkflowTaskPollers without that in mind.
			WorkflowTaskPollerBehavior: worker.NewPollerBehaviorAutoscaling(worker.PollerBehaviorAutoscalingOptions{
				InitialNumberOfPollers: 2, MaximumNumberOfPollers: 4,
			}),
			DisableEagerActivities: true,
			WorkerStopTimeout:      stopTimeout,
			// A large plan's first workflow task rebuilds it from its
			// skeleton: more than the default second on a busy machine.
			DeadlockDetectionTimeout: workflowTaskTimeout / 2,
		}),
		worker.New(c, a.host, worker.Options{Identity: id, MaxConcurrentActivityExecutionSize: 1000, DisableEagerActivities: true, WorkerStopTimeout: stopTimeout}),
		worker.New(c, a.light, worker.Options{Identity: id, MaxConcurrentActivityExecutionSize: 1000, DisableEagerActivities: true, WorkerStopTimeout: stopTimeout}),
	}
	workers[0].RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName})
	workers[0].RegisterActivityWithOptions(a.release, activity.RegisterOptions{Name: ActivityRelease})
	for _, w := range workers {
		w.RegisterActivityWithOptions(a.step, activity.RegisterOptions{Name: ActivityStep})
	}
	for i, w := range workers {
		if err := w.Start(); err != nil {
			for _, s := range workers[:i] {
				s.Stop()
			}
			return fmt.Errorf("start the worker on %s: %w", e.hostPort, err)
		}
	}
	if o.Ready != nil {
		o.Ready(id)
	}
	go a.sweep(ctx)
	<-ctx.Done()
	// Stopped: the running steps are stopped (their processes get the
	// grace period) and reported as lost with their worker, so that their
	// components start over elsewhere where they may.
	a.stopping.Store(true)
	for i := len(workers) - 1; i >= 0; i-- {
		workers[i].Stop()
	}
	a.closeAll()
	return nil
}

// stopTimeout is how long a stopped worker gives its running steps to stop
// their processes and report it.
var stopTimeout = component.StopGrace() + 5*time.Second

// errStopped is the error type of a step whose worker was stopped while it
// ran: the workflow takes it as the worker's death.
const errStopped = "WorkerStopped"

// activities are a worker's activities and what they share: the runs it
// has rebuilt, its slots, its reaper.
type activities struct {
	e           *Engine
	o           action.WorkerOptions
	c           client.Client
	name        string
	host, light string
	slots       *slots
	reaper      *reaper
	// openRun rebuilds a run on this worker (open; tests replace it).
	openRun func(ctx context.Context, in StepInput) (*action.WorkerRun, error)

	mu   sync.Mutex
	runs map[string]*hostedRun
	// stopping says the worker is being stopped.
	stopping atomic.Bool
}

// hostedRun is a run as this worker knows it: rebuilt once, with the data
// its steps here handed each other.
type hostedRun struct {
	openMu sync.Mutex // held while the run is rebuilt
	run    *action.WorkerRun
	err    error // why it cannot be rebuilt from this checkout, for good

	mu   sync.Mutex
	data map[string]any // Result.Data of the steps run here, by dataKey
	// hosted are the components this worker hosts, and for which attempt
	// (plus one); active counts their steps running now.
	hosted   map[string]int
	active   map[string]int
	lines    *shipper
	lastUsed time.Time
	steps    int // running here now
}

// run is the run a step belongs to, rebuilt from its bundle the first time.
func (a *activities) run(ctx context.Context, in StepInput) (*hostedRun, error) {
	key := in.Stack + "\x00" + in.RunID
	a.mu.Lock()
	hr := a.runs[key]
	if hr == nil {
		hr = &hostedRun{data: map[string]any{}, hosted: map[string]int{}, active: map[string]int{}}
		a.runs[key] = hr
	}
	hr.steps++
	hr.lastUsed = time.Now()
	a.mu.Unlock()
	wr, err := a.rebuilt(ctx, hr, in)
	if err == nil && wr.Bundle.Fingerprint != in.Fingerprint {
		return hr, fmt.Errorf("the run's fingerprint is %s, the step's %s: the run was started again with another plan", wr.Bundle.Fingerprint, in.Fingerprint)
	}
	return hr, err
}

// rebuilt is the run rebuilt on this worker, by the first step that needs
// it. A run this checkout cannot rebuild fails every later step at once;
// one that could not be rebuilt for a while — the step interrupted, the
// database away longer than a step waits — is rebuilt by the next step.
func (a *activities) rebuilt(ctx context.Context, hr *hostedRun, in StepInput) (*action.WorkerRun, error) {
	hr.openMu.Lock()
	defer hr.openMu.Unlock()
	if hr.run != nil || hr.err != nil {
		return hr.run, hr.err
	}
	wr, err := a.openRun(ctx, in)
	var ce *checkoutError
	switch {
	case err == nil:
		hr.run = wr
	case errors.As(err, &ce) && ctx.Err() == nil:
		hr.err = ce.err
		return nil, ce.err
	}
	return wr, err
}

// checkoutError is a run that this worker's checkout cannot rebuild: no
// later step can either.
type checkoutError struct{ err error }

func (e *checkoutError) Error() string { return e.err.Error() }
func (e *checkoutError) Unwrap() error { return e.err }

// done marks a step of the run as over.
func (a *activities) done(hr *hostedRun) {
	a.mu.Lock()
	hr.steps--
	hr.lastUsed = time.Now()
	a.mu.Unlock()
}

// open rebuilds a run from its bundle and this worker's checkout.
func (a *activities) open(ctx context.Context, in StepInput) (*action.WorkerRun, error) {
	location := a.o.State
	if location == "" || action.StateIdentity(location, in.Stack) != action.StateIdentity(in.State, in.Stack) {
		location = in.State
	}
	s, err := state.Open(ctx, location, in.Stack)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	pg, ok := s.(*pgstate.Store)
	if !ok {
		return nil, fmt.Errorf("the run's state %s is not a PostgreSQL database", s)
	}
	data, err := pg.Bundle(ctx, in.RunID)
	if err != nil {
		return nil, a.refused(err)
	}
	dir := a.o.Dir
	if dir == "" {
		dir = "."
	}
	start := time.Now()
	wr, err := action.OpenWorkerRun(ctx, data, dir, location)
	if err != nil {
		return nil, &checkoutError{err}
	}
	lines, err := state.Open(ctx, location, in.Stack)
	if err != nil {
		_ = wr.Close()
		return nil, err
	}
	slog.Debug("run rebuilt on this worker", "run", in.RunID, "stack", in.Stack, "steps", len(wr.Plan.Nodes), "took", time.Since(start).Round(time.Millisecond))
	a.mu.Lock()
	hr := a.runs[in.Stack+"\x00"+in.RunID]
	a.mu.Unlock()
	hr.lines = newShipper(lines.(*pgstate.Store), in.RunID)
	return wr, nil
}

// sweep forgets runs no step has used for a while: their leases ended,
// their workflows are over.
func (a *activities) sweep(ctx context.Context) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		a.mu.Lock()
		var old []*hostedRun
		for k, hr := range a.runs {
			if hr.steps == 0 && time.Since(hr.lastUsed) > 10*time.Minute {
				old = append(old, hr)
				delete(a.runs, k)
			}
		}
		a.mu.Unlock()
		for _, hr := range old {
			hr.close()
		}
	}
}

func (a *activities) closeAll() {
	a.mu.Lock()
	runs := a.runs
	a.runs = map[string]*hostedRun{}
	a.mu.Unlock()
	for _, hr := range runs {
		hr.close()
	}
}

func (hr *hostedRun) close() {
	if hr.run != nil {
		if err := hr.run.Close(); err != nil {
			slog.Warn("a run's state could not be written at its end on this worker", "err", err)
		}
	}
	if hr.lines != nil {
		hr.lines.close()
	}
}

// release gives a run's lock back at its end, and forgets the run.
func (a *activities) release(ctx context.Context, in ReleaseInput) error {
	location := a.o.State
	if location == "" || action.StateIdentity(location, in.Stack) != action.StateIdentity(in.State, in.Stack) {
		location = in.State
	}
	s, err := state.Open(ctx, location, in.Stack)
	if err != nil {
		return err
	}
	defer s.Close()
	pg, ok := s.(*pgstate.Store)
	if !ok {
		return fmt.Errorf("the run's state %s is not a PostgreSQL database", s)
	}
	if err := pg.ReleaseWorkflow(ctx, in.RunID); err != nil {
		if pgstate.Refused(err) {
			// No retry mends it: the workflow ends now, and says why.
			return sdktemporal.NewNonRetryableApplicationError(a.refused(err).Error(), errRefused, nil)
		}
		return err
	}
	return nil
}

// errRefused is the error type of a release the database refused.
const errRefused = "StateRefused"

// refused adds to an error of the database refusing this worker how to
// give it credentials.
func (a *activities) refused(err error) error {
	if !pgstate.Refused(err) {
		return err
	}
	how := "start it with -s postgres://USER@HOST:PORT/DATABASE (or GANTRY_STATE) naming the run's database, with PGPASSWORD or ~/.pgpass for the password"
	if a.o.State != "" {
		how = "its -s/GANTRY_STATE (which it uses for the run's database) must hold credentials the database takes, or give them in PGPASSWORD or ~/.pgpass"
	}
	return fmt.Errorf("%w; this worker has no credentials the run's database takes: %s (docs/temporal.md)", err, how)
}

// errNotMine is a step sent to a worker that does not know its run's data:
// it lost them (it was restarted).
var errNotMine = errors.New("this worker does not hold the data of the component's earlier steps (it was restarted?)")
