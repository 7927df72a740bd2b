package action

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"

	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/engine"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/steps"
	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/ui"
)

// Display shows a run as it goes. Start is called with the run before its
// first step and returns the observer that shows it (behind the masking of
// secrets); Finish is called once the run has ended and its records are
// written.
type Display interface {
	Start(r *Started) plan.Observer
	Finish(o *Outcome)
}

// Started is a run about to start.
type Started struct {
	Plan    *plan.Plan
	Tracker *ui.Tracker
	RunID   string
	LogDir  string
	// Event is the run_started event of the JSON stream.
	Event ui.Event
}

// Run statuses.
const (
	StatusOK          = "ok"
	StatusFailed      = "failed"
	StatusInterrupted = "interrupted"
)

// Outcome is what a run did.
type Outcome struct {
	Plan   *plan.Plan
	RunID  string
	LogDir string
	RunLog *ui.RunLog
	// Status is StatusOK, StatusFailed or StatusInterrupted.
	Status     string
	Duration   time.Duration
	Components []ui.ComponentRun
	Engine     *engine.Outcome
	// Halt is the critical step whose failure stopped the run, nil when
	// none did; NothingRan says no component's step started.
	Halt       *plan.Node
	NothingRan bool
	// Event is the run_finished event of the JSON stream.
	Event ui.Event
}

// HaltReason is why the step that stopped the run failed.
func (o *Outcome) HaltReason() string {
	if o.Halt == nil {
		return ""
	}
	return o.Engine.Results[o.Halt.ID].Reason
}

// newRunID returns a sortable, unique run id: UTC time and a random suffix.
func newRunID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// runOptions tune an execution.
type runOptions struct {
	parallel int
	force    bool
	yes      bool
	readOnly bool
	term     Terminal
	display  Display
}

// execute runs a plan with the one executor, and keeps the run's records: the
// process registry (leftovers of a killed run carried over), the state (unless
// the run is read-only), and the run's folder with the plan, a log per
// component, the events and the summary. Interrupts (SIGINT, SIGTERM) cancel
// the run: running steps stop, their process groups with them, and the rest
// is skipped but what records the outcome.
func execute(ctx context.Context, st *Stack, b *built, rt *steps.Runtime, o runOptions) (*Outcome, error) {
	p := b.plan
	// A run inside a run of the same stack (gantry invoke from a component)
	// is part of the outer run, whose registry and lock cover it.
	if os.Getenv("GANTRY_STATE") != rt.StatePath {
		registry, err := openRegistry(rt, b.facts.Leftovers)
		if err != nil {
			return nil, err
		}
		defer registry.Close()
		ctx = component.WithRegistry(ctx, registry)
	}
	if !o.readOnly {
		s := st.State
		if s == nil {
			s = state.New(st.Res.Stack.Meta.Name)
		}
		rt.Recorder = state.NewRecorder(rt.StatePath, s)
	}
	closeRecorder := func() error {
		if rt.Recorder == nil {
			return nil
		}
		return rt.Recorder.Close()
	}
	runLog, err := ui.NewRunLog(rt.Dirs.RunDir(rt.RunID))
	if err != nil {
		closeRecorder()
		return nil, err
	}
	if err := writePlanJSON(p, filepath.Join(runLog.Dir(), "plan.json")); err != nil {
		closeRecorder()
		return nil, err
	}
	eventsFile, err := os.OpenFile(filepath.Join(runLog.Dir(), "events.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		closeRecorder()
		return nil, err
	}
	defer eventsFile.Close()
	tracker := ui.NewTracker(p)
	fileEvents := ui.NewEvents(eventsFile, rt.RunID)
	observers := ui.Multi{tracker, runLog, fileEvents}
	started := ui.Event{Event: "run_started", Stack: p.Stack, Verb: p.Verb, Components: ui.Components(tracker.Components()), LogDir: runLog.Dir()}
	fileEvents.Emit(started)
	if o.display != nil {
		if d := o.display.Start(&Started{Plan: p, Tracker: tracker, RunID: rt.RunID, LogDir: runLog.Dir(), Event: started}); d != nil {
			observers = append(observers, d)
		}
	}
	start := time.Now()
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	events := ui.NewAsync(ui.Masked{Masker: rt.Masker, Next: observers})
	eo, runErr := engine.Run(ctx, p, rt, engine.Options{
		Parallel:    o.parallel,
		Force:       o.force,
		Observer:    events,
		RunID:       rt.RunID,
		Interactive: o.term.Interactive(),
		Yes:         o.yes,
		Input:       o.term.Input,
	})
	stop()
	events.Close()
	if eo != nil {
		slog.Debug("run ended", "run", rt.RunID, "failed", eo.Failed, "cancelled", eo.Cancelled, "took", time.Since(start).Round(time.Millisecond))
	}
	werr := closeRecorder()
	_ = runLog.Close()
	if runErr != nil {
		return nil, runErr
	}
	out := &Outcome{Plan: p, RunID: rt.RunID, LogDir: runLog.Dir(), RunLog: runLog, Status: StatusOK, Duration: time.Since(start),
		Components: tracker.Components(), Engine: eo}
	switch {
	case eo.Cancelled:
		out.Status = StatusInterrupted
	case eo.Failed:
		out.Status = StatusFailed
	}
	out.Halt, out.NothingRan = halt(p, eo)
	out.Event = ui.Event{Event: "run_finished", Stack: p.Stack, Verb: p.Verb, Status: out.Status, DurationMS: durationMS(out.Duration),
		Components: ui.Components(out.Components), LogDir: runLog.Dir()}
	fileEvents.Emit(out.Event)
	fileEvents.Flush()
	if f, err := os.OpenFile(filepath.Join(runLog.Dir(), "summary.txt"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600); err == nil {
		ui.WriteSummary(f, out.Components, ui.Style{})
		f.Close()
	}
	if o.display != nil {
		o.display.Finish(out)
	}
	if werr != nil {
		return out, fmt.Errorf("the state could not be written: %w", werr)
	}
	return out, nil
}

// openRegistry starts noting the run's process groups, carrying over the
// leftovers of a killed run that its plan waits for.
func openRegistry(rt *steps.Runtime, lo *plan.Leftovers) (*component.Registry, error) {
	var carry []component.Leftover
	if lo != nil {
		for _, l := range lo.Processes {
			carry = append(carry, component.Leftover{PID: l.PID, Dir: l.Dir, Args: l.Command})
		}
	}
	if err := os.MkdirAll(rt.Dirs.Root, 0o700); err != nil {
		return nil, err
	}
	return component.OpenRegistry(rt.Dirs.Registry(rt.StatePath), carry...)
}

// halt finds the critical step whose failure stopped the run, and whether a
// step of any component started before it.
func halt(p *plan.Plan, eo *engine.Outcome) (*plan.Node, bool) {
	var stopper *plan.Node
	nothing := true
	for _, n := range p.Nodes {
		r, ok := eo.Results[n.ID]
		if !ok {
			continue
		}
		if n.Component != "" && n.Kind != plan.KindEnd && r.Status != plan.Skipped {
			nothing = false
		}
		if stopper == nil && r.Status == plan.Failed && (n.Critical || r.Abort) {
			stopper = n
		}
	}
	return stopper, nothing
}

func durationMS(d time.Duration) *int64 { v := d.Milliseconds(); return &v }

// writePlanJSON saves the plan of a run in its folder, for audit.
func writePlanJSON(p *plan.Plan, path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("save the plan: %w", err)
	}
	defer f.Close()
	return p.WriteJSON(f)
}
