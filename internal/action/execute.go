package action

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/engine"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/steps"
	"github.com/gantry-dev/gantry/internal/procstat"
	"github.com/gantry-dev/gantry/internal/report"
	"github.com/gantry-dev/gantry/internal/secret"
	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/ui"
	"github.com/gantry-dev/gantry/internal/workspace"
)

// Display shows a run as it goes. Start is called before the run's first
// step and returns the observer that shows it (behind the masking of
// secrets); Finish is called once the run has ended and its records are
// written.
type Display interface {
	Start(r *Started) plan.Observer
	Finish(o *Outcome)
}

// Started is a run about to start.
type Started struct {
	// Plan is the run's plans as one (build.Shown).
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
	// Plan is the run's plans as one (build.Shown).
	Plan   *plan.Plan
	RunID  string
	LogDir string
	RunLog *ui.RunLog
	// Heard are the run's logs and events as its report keeps them, heard
	// while they were written (and its parameters, once writeReport kept
	// them); nil (or a nil part) when they must be read from LogDir (a
	// large run, or a file that could not be written).
	Heard *report.Heard
	// Status is StatusOK, StatusFailed or StatusInterrupted.
	Status     string
	Duration   time.Duration
	Components []ui.ComponentRun
	// Engine is what the executor reported, for all the run's plans.
	Engine *engine.Outcome
	// Halt is the critical step whose failure stopped the run, nil when
	// none did; NothingRan says no component's step started.
	Halt       *plan.Node
	haltReason string
	haltLabel  string
	NothingRan bool
	// Undone are the mandatory components the run did not do, each with
	// why: skipped because an optional component they wait for failed
	// ("y: x failed"). They fail a run that nothing else failed.
	Undone []string
	// Event is the run_finished event of the JSON stream.
	Event ui.Event
}

// HaltReason is why the step that stopped the run failed, its secrets
// masked.
func (o *Outcome) HaltReason() string { return o.haltReason }

// HaltLabel names the step that stopped the run as its lines did: by its
// label with its values expanded when it said one, its secrets masked.
func (o *Outcome) HaltLabel() string { return o.haltLabel }

// newRunID returns a sortable, unique run id: UTC time and a random suffix.
func newRunID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// execOptions tune the execution of a plan.
type execOptions struct {
	parallel    int
	force       bool
	yes         bool
	term        Terminal
	interrupted func(second bool)
}

// record is a run as it is kept: its folder next to the state (the plan, a
// log per group, the events, the summary), the tracker of its groups, and its
// display. A run executes one plan, or three one after the other — the
// installation handler's prepare, the stack's plan, the handler's finalize —
// all in one record, one event stream and one display.
type record struct {
	runID      string
	shown      *plan.Plan
	runLog     *ui.RunLog
	heard      *report.LogCollector
	heardEv    *report.EventCollector
	planModel  *report.PlanModel
	eventsFile *os.File
	fileEvents *ui.Events
	tracker    *ui.Tracker
	observers  ui.Multi
	display    Display
	masker     *secret.Masker
	// openMasker and openKnown are the masker and how many secrets it
	// knew when the run's folder was opened: one learned later was not
	// masked in the lines written before (close masks them again).
	openMasker *secret.Masker
	openKnown  int
	start      time.Time
	plans      []*plan.Plan
	engine     *engine.Outcome
	// planSaved is closed when the plan being saved is written.
	planSaved chan struct{}
	// lock is the state's lock the run holds (nil: none, or a nested run);
	// stopped is why the run stopped its steps when it was not an
	// interrupt (another run took the lock).
	lock    state.Lock
	stopped error
}

// openRecord starts a run's records and its display. tag says whose run
// it is (run.json).
func openRecord(ws workspace.Workspace, runID string, tag ui.RunTag, shown *plan.Plan, masker *secret.Masker, display Display) (*record, error) {
	// A run attached to again (its client died) finds its folder, and
	// appends to the logs there.
	_, statErr := os.Stat(ws.RunDir(runID))
	fresh := errors.Is(statErr, fs.ErrNotExist)
	runLog, err := ui.NewRunLog(ws.RunDir(runID))
	if err != nil {
		return nil, err
	}
	if err := ui.WriteRunTag(runLog.Dir(), tag); err != nil {
		_ = runLog.Close()
		return nil, fmt.Errorf("start the run's folder: %w", err)
	}
	r := &record{runID: runID, shown: shown, runLog: runLog, display: display, masker: masker, start: time.Now(),
		openMasker: masker, openKnown: masker.Known(),
		engine: &engine.Outcome{Results: map[string]plan.Result{}, Started: map[string]time.Time{}, Ended: map[string]time.Time{}}}
	if fresh && len(shown.Components) <= autoReportMax {
		// The report written when the run ends takes its logs from here:
		// they are all the files will hold.
		r.heard = report.NewLogCollector()
		runLog.Tap(r.heard)
		// And the part its plan makes is worked out while it runs.
		r.planModel = report.PreparePlan(shown)
	}
	if err := r.savePlan(); err != nil {
		_ = runLog.Close()
		return nil, err
	}
	r.eventsFile, err = os.OpenFile(filepath.Join(runLog.Dir(), "events.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		r.waitPlan()
		_ = runLog.Close()
		return nil, err
	}
	r.tracker = ui.NewTracker(shown)
	r.fileEvents = ui.NewEvents(r.eventsFile, runID)
	if r.heard != nil {
		// And its facts from the events, which it need not read back.
		r.heardEv = report.NewEventCollector()
		r.fileEvents.Tap(r.heardEv)
	}
	r.observers = ui.Multi{r.tracker, runLog, r.fileEvents}
	started := ui.Event{Event: "run_started", Stack: shown.Stack, Verb: shown.Verb, Components: ui.Components(r.tracker.Components()), LogDir: eventDir(runLog.Dir())}
	r.fileEvents.Emit(started)
	if display != nil {
		if d := display.Start(&Started{Plan: shown, Tracker: r.tracker, RunID: runID, LogDir: runLog.Dir(), Event: started}); d != nil {
			r.observers = append(r.observers, d)
		}
	}
	return r, nil
}

// savePlan writes the run's plans, as one, in its folder, for audit. The
// file is opened here, so that a folder that cannot be written stops the run
// before it starts, and encoded in the background while the run goes on
// (at 10,000 components encoding took a quarter of a second, an eighth of
// a --resume); waitPlan waits for it.
func (r *record) savePlan() error {
	r.waitPlan()
	f, err := os.OpenFile(filepath.Join(r.runLog.Dir(), "plan.json"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("save the plan: %w", err)
	}
	done := make(chan struct{})
	r.planSaved = done
	go func(p *plan.Plan) {
		defer close(done)
		bw := bufio.NewWriterSize(f, 1<<16)
		err := p.EncodeJSON(bw, false)
		if err == nil {
			err = bw.Flush()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			slog.Warn("the run's plan could not be saved in its folder", "file", f.Name(), "err", err)
		}
	}(r.shown)
	return nil
}

// waitPlan waits until the plan saved last is written.
func (r *record) waitPlan() {
	if r.planSaved != nil {
		<-r.planSaved
		r.planSaved = nil
	}
}

// reshow replaces the plans the run shows and saves: the stack's plan is
// built again under the lock, after the installation handler's prepare.
func (r *record) reshow(shown *plan.Plan) error {
	r.shown = shown
	r.tracker.Add(shown)
	if r.planModel != nil {
		r.planModel = report.PreparePlan(shown)
	}
	return r.savePlan()
}

// execute runs a plan with the one executor. A cancelled ctx (an interrupt,
// catchInterrupts) stops it: running steps stop, their process groups with
// them, and the rest is skipped but what records the outcome.
func (r *record) execute(ctx context.Context, p *plan.Plan, b engine.Binder, o execOptions) error {
	r.plans = append(r.plans, p)
	events := ui.NewAsync(ui.Masked{Masker: r.masker, Next: r.observers})
	start := time.Now()
	eo, err := engine.Run(ctx, p, b, engine.Options{
		Parallel:    o.parallel,
		Force:       o.force,
		Observer:    events,
		RunID:       r.runID,
		Interactive: o.term.Interactive(),
		Yes:         o.yes,
		Ask:         r.ask(o.term),
	})
	events.Close()
	if err != nil {
		return err
	}
	slog.Debug("plan executed", "run", r.runID, "steps", len(p.Nodes), "failed", eo.Failed, "cancelled", eo.Cancelled, "took", time.Since(start).Round(time.Millisecond))
	if len(r.engine.Results) == 0 {
		// The first plan of the run (most runs have one): its maps are the
		// run's, not copied entry by entry.
		r.engine.Results, r.engine.Started, r.engine.Ended = eo.Results, eo.Started, eo.Ended
	} else {
		for id, res := range eo.Results {
			r.engine.Results[id] = res
			r.engine.Started[id], r.engine.Ended[id] = eo.Started[id], eo.Ended[id]
		}
	}
	r.engine.Failed = r.engine.Failed || eo.Failed
	r.engine.Cancelled = r.engine.Cancelled || eo.Cancelled
	if r.engine.HaltedBy == "" {
		r.engine.HaltedBy = eo.HaltedBy
	}
	return nil
}

// failed reports whether a plan executed so far failed or was interrupted.
// ask is the terminal's Ask with the question's secrets masked: a gate's
// message may hold a value (its label expanded), and the terminal's copy of
// the question does not go through the display's masker.
func (r *record) ask(t Terminal) func(string) (string, error) {
	if t.Ask == nil {
		return nil
	}
	return func(q string) (string, error) { return t.Ask(r.masker.Text(q)) }
}

func (r *record) failed() bool { return r.engine.Failed || r.engine.Cancelled }

// UndoneReason says why a run failed that nothing the summary marks as a
// failure of the run failed: mandatory components skipped because an
// optional one they wait for failed. "" for any other run.
func (o *Outcome) UndoneReason() string {
	if len(o.Undone) == 0 || o.Engine == nil || o.Engine.Failed || o.Engine.Cancelled || o.Plan == nil {
		return ""
	}
	return fmt.Sprintf("mandatory components were skipped because an optional one they wait for failed, so the %s did not do them: %s",
		o.Plan.Verb, strings.Join(o.Undone, "; "))
}

// close ends the run's records: the run_finished event, the summary, the
// display's end. err is the error that ended the run before or after its
// plan (a registry held by another run, the state not written): such a run
// is recorded failed, not ok, whatever its steps did.
func (r *record) close(err error) *Outcome {
	r.waitPlan()
	logErr := r.runLog.Close()
	var errReason string
	if err != nil {
		// What ended the run is its reason where nothing else says it,
		// and why the groups it kept from starting did not start: they
		// are not left waiting in the summary and the events.
		errReason, _, _ = strings.Cut(r.masker.Text(err.Error()), "\n")
		r.tracker.NotStarted("not started: " + errReason)
	}
	out := &Outcome{Plan: r.shown, RunID: r.runID, LogDir: r.runLog.Dir(), RunLog: r.runLog, Status: StatusOK, Duration: time.Since(r.start),
		Components: r.tracker.Components(), Engine: r.engine}
	if logErr == nil && r.heard != nil {
		// What was heard is what the files hold.
		out.Heard = &report.Heard{Logs: r.heard, Plan: r.planModel}
	}
	switch {
	case r.engine.Cancelled && r.stopped == nil:
		out.Status = StatusInterrupted
	case r.engine.Failed || err != nil:
		out.Status = StatusFailed
	}
	out.Undone = mandatorySkipped(r.plans, r.engine)
	for i, u := range out.Undone {
		// A skip's reason may name a step by its expanded label.
		out.Undone[i] = r.masker.Text(u)
	}
	if len(out.Undone) > 0 && out.Status == StatusOK {
		out.Status = StatusFailed
	}
	out.Halt, out.NothingRan = halt(r.plans, r.engine)
	if out.Halt != nil {
		res := r.engine.Results[out.Halt.ID]
		out.haltReason = r.masker.Text(res.Reason)
		out.haltLabel = out.Halt.Label
		if res.Label != "" {
			out.haltLabel = r.masker.Text(res.Label)
		}
	}
	// The scheduler names the step that stopped new work as it said its
	// label: values expanded, which may be secrets.
	r.engine.HaltedBy = r.masker.Text(r.engine.HaltedBy)
	out.Event = ui.Event{Event: "run_finished", Stack: r.shown.Stack, Verb: r.shown.Verb, Status: out.Status, DurationMS: durationMS(out.Duration),
		Components: ui.Components(out.Components), LogDir: eventDir(r.runLog.Dir()), Reason: out.UndoneReason()}
	if out.Event.Reason == "" {
		out.Event.Reason = errReason
	}
	r.fileEvents.Emit(out.Event)
	r.fileEvents.Flush()
	closeErr := r.eventsFile.Close()
	if out.Heard != nil && r.fileEvents.Err() == nil && closeErr == nil {
		out.Heard.Events = r.heardEv
	}
	if r.masker != r.openMasker || r.masker.Known() != r.openKnown {
		// The run learned a secret after lines were written: the folder
		// is masked again before anything reads it (the display's last
		// lines, gantry logs, gantry report).
		if err := ui.RemaskRunFolder(r.runLog.Dir(), r.masker.Text); err != nil {
			slog.Warn("the run's folder could not be masked again with the secrets it learned", "run", r.runID, "err", err)
		} else if out.Heard != nil {
			// The report reads them from the folder: what the run heard
			// was cut to the report's line length before it could be
			// masked again, which leaves the start of a secret cut there.
			out.Heard.Logs, out.Heard.Events = nil, nil
		}
	}
	// The run folder's summary is written while the display prints its own:
	// each formats a row per component (10,000 in a large stack).
	written := make(chan struct{})
	go func() {
		defer close(written)
		if f, err := os.OpenFile(filepath.Join(r.runLog.Dir(), "summary.txt"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600); err == nil {
			ui.WriteSummary(f, out.Components, out.Duration)
			f.Close()
		}
	}()
	if r.display != nil {
		r.display.Finish(out)
	}
	<-written
	return out
}

// executeStack runs the stack's plan: with the process registry (a killed
// run's leftovers carried over) unless it is a run inside a run of the same
// stack, and the state recorder unless the run is read-only. An error
// writing the state is returned once the run has ended.
func (r *record) executeStack(ctx context.Context, st *Stack, b *built, rt *steps.Runtime, readOnly bool, o execOptions) error {
	// A run inside a run of the same stack (gantry invoke from a component)
	// is part of the outer run, whose registry and lock cover it.
	if !insideRunOf(rt.StateLocation, st.Res.Stack.Meta.Name) {
		primary, mirror := st.registryPath(), st.stateRegistry()
		registry, err := openRegistry(primary, rt.Masker.Text, b.facts.Leftovers)
		var busy *component.RegistryBusyError
		if err != nil && mirror != "" && !errors.As(err, &busy) {
			// The manifest's folder cannot be written (an elaborated file
			// in a read-only place): the state's registry stands alone.
			slog.Warn("the run's processes are noted beside the state only", "registry", primary, "err", err)
			registry, err = openRegistry(mirror, rt.Masker.Text, b.facts.Leftovers)
			mirror = ""
		}
		if err != nil {
			return err
		}
		defer registry.Close()
		if p := mirror; p != "" {
			err := os.MkdirAll(filepath.Dir(p), 0o700)
			if err == nil {
				err = registry.Mirror(p)
			}
			if err != nil {
				if errors.As(err, &busy) {
					return err
				}
				// The state's folder cannot be written: the manifest's
				// registry stands alone, as it does for a database.
				slog.Warn("the run's processes are noted beside the manifest only", "registry", p, "err", err)
			}
		}
		ctx = component.WithRegistry(ctx, registry)
	}
	if !readOnly {
		// The recorder changes its state while steps read the state as the
		// run found it (rt.Before, unlocked): it gets a copy of its own.
		// Its writes wait for a state database that is away until a
		// second interrupt (the stop-now context), and tell of the first.
		w, err := st.Store.Writer(state.WithInterrupt(component.StopNow(ctx), ctx.Done()))
		if err != nil {
			return fmt.Errorf("record the run in the state %s: %w", st.Store, err)
		}
		// A state the store holds as gantry wrote it is continued, not
		// written whole again before the first component; the recorder
		// copies a record of the state the steps read before it changes it.
		if st.State != nil {
			rt.Recorder = state.RecordOver(w, st.State, st.recorderBase())
		} else {
			rt.Recorder = state.Record(w, state.New(st.Res.Stack.Meta.Name))
		}
	}
	var binder engine.Binder = rt
	if component.HasKeeper(ctx) {
		binder = loggedOutput{rt, r.runLog}
	}
	err := r.execute(ctx, b.plan, binder, o)
	if cause := context.Cause(ctx); errors.Is(cause, state.ErrLockTaken) {
		r.stopped = cause
	}
	taken := r.stopped
	if taken == nil && r.lock != nil && errors.Is(r.lock.Why(), state.ErrLockTaken) {
		taken = r.lock.Why()
	}
	if rt.Recorder != nil {
		if werr := rt.Recorder.Close(); werr != nil && err == nil {
			err = fmt.Errorf("the state could not be written: %w%s", werr, unwrittenNote(rt.Recorder.Unwritten(), taken))
		}
	}
	if err == nil && r.stopped != nil {
		err = fmt.Errorf("%w: this run stopped its running steps and started nothing more", r.stopped)
	}
	return err
}

// stopWhenTaken cancels ctx, with state.ErrLockTaken as its cause, when
// another run takes the lock held (a database session that ended, and a run
// that took the lock before this one took it back): the running steps stop
// as at an interrupt and nothing more starts, since what they did would go
// on beside that run's work on the same components, recorded nowhere. A
// lock lost with the database away for good leaves them running: no other
// run can have it. The function it returns stops watching.
func stopWhenTaken(ctx context.Context, held state.Lock) (context.Context, func()) {
	if held == nil || held.Lost() == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		select {
		case <-held.Lost():
			if why := held.Why(); errors.Is(why, state.ErrLockTaken) {
				slog.Warn("the state's lock was taken from this run: stopping its steps", "why", why)
				cancel(why)
			}
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		cancel(nil)
	}
}

// unwrittenNote says what a state that could not all be written lacks:
// the last changes of the components named, which it holds as they were
// before — one that was running as incomplete, as after a kill, which the
// next run takes up. When the lock was taken from the run (taken: why),
// the state is another run's: nothing of this run's will be taken up.
func unwrittenNote(names []string, taken error) string {
	if len(names) == 0 {
		return ""
	}
	const shown = 10
	list := strings.Join(names[:min(len(names), shown)], ", ")
	if len(names) > shown {
		list += fmt.Sprintf(" and %d more", len(names)-shown)
	}
	if taken != nil {
		return fmt.Sprintf("\nthis run lost the state's lock (%v): its last changes to %s are not recorded, and what its stopped steps did before they stopped may have overlapped another run's work; look at them before the next deploy", taken, list)
	}
	return fmt.Sprintf("\nthe state lacks this run's last changes to %s: it holds them as written before (a component that was running is incomplete, as after a kill); the next run takes them up", list)
}

// loggedOutput binds the steps of a run whose processes' output the
// keeper holds: each step's processes are told their component's run log,
// where the keeper says what became of their output if gantry is killed.
type loggedOutput struct {
	engine.Binder
	runLog *ui.RunLog
}

// Runner is the step's runner, with its run log in its context.
func (l loggedOutput) Runner(n *plan.Node) (plan.Runner, error) {
	r, err := l.Binder.Runner(n)
	if err != nil || r == nil {
		return r, err
	}
	// The log's path is made only if a process starts.
	log := &component.OutputLog{Dir: l.runLog.Dir(), Name: ui.Group(n)}
	return plan.RunnerFunc(func(ctx context.Context, env plan.Env) plan.Result {
		return r.Run(component.WithOutputLog(ctx, log), env)
	}), nil
}

// outputKeeper is the run's output keeper (component.Keeper), once started.
type outputKeeper struct{ k *component.Keeper }

// start starts the keeper of a run whose processes run here, once its plan
// b runs anything (a step, or an installation handler's prepare), and
// returns the context its processes run under. A nested run's output is
// the outer run's, whose keeper holds it. The keeper starts without being
// waited for (a process that starts before it did waits for it), and
// only once: invalid input, a run with nothing to do, start none.
func (o *outputKeeper) start(ctx context.Context, r *stackRun, b *built) context.Context {
	if o.k != nil || r.nested || len(b.plan.Nodes) == 0 && b.facts.Handler == nil {
		return ctx
	}
	o.k = component.StartKeeper()
	return component.WithKeeper(ctx, o.k)
}

// close ends the keeper, if one started, when the run is over.
func (o *outputKeeper) close() { o.k.Close() }

// openRegistry starts noting the run's process groups, carrying over the
// leftovers of a killed run that its plan waits for.
func openRegistry(path string, mask func(string) string, lo *plan.Leftovers) (*component.Registry, error) {
	var carry []component.Leftover
	if lo != nil {
		for _, l := range lo.Processes {
			carry = append(carry, component.Leftover{PID: l.PID, Dir: l.Dir, Args: l.Command, Boot: l.Boot, Started: l.Started})
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	// Command lines may hold secrets: the registry notes them masked.
	return component.OpenRegistry(path, mask, carry...)
}

// halt finds the critical step whose failure stopped the run, and whether a
// step of any component started.
func halt(plans []*plan.Plan, eo *engine.Outcome) (*plan.Node, bool) {
	var stopper *plan.Node
	nothing := true
	for _, p := range plans {
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
	}
	return stopper, nothing
}

// mandatorySkipped are the mandatory components that did not run because
// a component they wait for failed: an optional one, whose failure is a
// warning and does not stop the run. Each is not deployed (or undeployed)
// as the run meant it to be, so the run did not do its work and has failed,
// as the state then says and the Hub CLI's exit code does; one --resume
// found unchanged had nothing to do. Each comes with why: "y: x failed".
func mandatorySkipped(plans []*plan.Plan, eo *engine.Outcome) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range plans {
		for _, n := range p.Nodes {
			if !n.Critical || n.Component == "" || n.Kind == plan.KindEnd || seen[n.Component] {
				continue
			}
			if c := p.Components[n.Component]; c != nil && c.Action == "unchanged" {
				continue
			}
			if r, ok := eo.Results[n.ID]; ok && r.Status == plan.Skipped && r.Cause == plan.CauseUpstream {
				seen[n.Component] = true
				out = append(out, n.Component+": "+r.Reason)
			}
		}
	}
	return out
}

// runTag says the run is of the stack with this state, by this process,
// and, for a run inside a run of the same stack (gantry invoke from a
// component), which run that is: "the latest run" of gantry logs and
// report is the outer one.
func runTag(st *Stack) ui.RunTag {
	host, _ := os.Hostname()
	tag := ui.RunTag{State: filepath.Base(st.AbsStatePath()), PID: os.Getpid(), Host: host, Boot: procstat.BootID(), Started: procstat.Self().Start}
	if insideRunOf(st.Location(), st.Res.Stack.Meta.Name) {
		tag.Parent = os.Getenv("GANTRY_RUN_ID")
	}
	return tag
}

// eventDir is the run folder as the events give it (docs/events.md): relative
// to the working directory when it is below it, as the display shows it,
// else absolute.
func eventDir(dir string) string {
	wd, err := os.Getwd()
	if err != nil {
		return dir
	}
	if rel, err := filepath.Rel(wd, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return rel
	}
	return dir
}

func durationMS(d time.Duration) *int64 { v := d.Milliseconds(); return &v }

// insideRunOf reports whether this process runs inside a run of the stack
// named stack on the state at location — gantry invoke, or a gantry deploy
// of the same stack, from one of its components — whose registry and lock
// cover it. GANTRY_STATE alone does not say so: a team sets it to the
// database's URL in every shell.
func insideRunOf(location, stack string) bool {
	return os.Getenv("GANTRY_RUN_ID") != "" && os.Getenv("HUB_STACK_NAME") == stack && sameState(os.Getenv("GANTRY_STATE"), location)
}

// sameState reports whether two state locations are one: the same text,
// or the same file however its path is spelt (a stack reached through a
// symbolic link: the run gives GANTRY_STATE the path it was given, a
// component's relative -s resolves from the folder it runs in).
func sameState(a, b string) bool {
	if a == b {
		return true
	}
	a, b = strings.TrimPrefix(a, "file://"), strings.TrimPrefix(b, "file://")
	if a == "" || b == "" || strings.Contains(a, "://") || strings.Contains(b, "://") {
		return a == b
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	// Not written yet: the same folder, links resolved, and name.
	da, errA := filepath.EvalSymlinks(filepath.Dir(a))
	db, errB := filepath.EvalSymlinks(filepath.Dir(b))
	return errA == nil && errB == nil && da == db && filepath.Base(a) == filepath.Base(b)
}
