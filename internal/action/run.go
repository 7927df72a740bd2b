package action

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	osuser "os/user"
	"path/filepath"
	"time"

	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/plan/resolve"
	"github.com/gantry-dev/gantry/internal/plan/steps"
	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/workspace"
)

// RunOptions are the options of a deploy or an undeploy.
type RunOptions struct {
	Source
	Selection build.Selection
	// Parallel is the most steps at once; 0 takes lifecycle.parallel, else 1.
	Parallel int
	// Resume skips components deployed with an unchanged fingerprint.
	Resume bool
	// Yes approves every gate; Force goes on with independent components
	// after a mandatory one failed (and lets spec versions jump).
	Yes, Force bool
	// KeepTFVars keeps TF_VAR_* variables in components' environment.
	KeepTFVars bool
	// Interrupted hears of the first interrupt (Ctrl-C, a closed terminal,
	// SIGTERM) and of the second (second true), which kills what still runs
	// at once.
	Interrupted func(second bool)
	Terminal    Terminal
	// Warn hears warnings about the input, each once.
	Warn    func(manifest.Diagnostics)
	Display Display
	// Engine runs the plan elsewhere (temporal://host:port/namespace,
	// docs/temporal.md); "" runs it here.
	Engine string
}

// Deploy deploys a stack: every component in dependency order, in parallel
// where it can, with the lifecycle the stack asks for.
type Deploy struct{ RunOptions }

// Run carries out the deploy.
func (d *Deploy) Run(ctx context.Context) (*Outcome, error) {
	return runStack(ctx, plan.VerbDeploy, &d.RunOptions)
}

// Undeploy tears a stack down in reverse order, from what the state recorded.
type Undeploy struct{ RunOptions }

// Run carries out the undeploy.
func (u *Undeploy) Run(ctx context.Context) (*Outcome, error) {
	return runStack(ctx, plan.VerbUndeploy, &u.RunOptions)
}

// Nothing is the outcome of a run with nothing to do; Reason says why.
type Nothing struct{ Reason string }

func (n *Nothing) Error() string { return n.Reason }

// runStack loads the stack, locks its parameters and builds the plan — all
// of it only reading: invalid input ends here, with nothing run and nothing
// written, not even the lock file. Then it takes the state's lock, builds the
// plan again if the state changed meanwhile or a killed run left processes
// to wait for, and executes the plan.
func runStack(ctx context.Context, verb string, o *RunOptions) (*Outcome, error) {
	const consequence = "nothing was run"
	if o.Parallel < 0 {
		return nil, invalid(consequence, "--parallel %d: expected a positive number", o.Parallel)
	}
	eng, err := OpenEngine(o.Engine)
	if err != nil {
		return nil, err
	}
	src := o.Source
	src.HandlerLater = true
	// Invalid input of a deploy is reported with everything validate
	// finds in it, whichever phase stopped the deploy.
	invalidDeploy := func(err error) error {
		return allProblems(ctx, o.Source, verb, o.Selection, err, consequence)
	}
	st, err := Load(src, consequence)
	if err != nil {
		return nil, invalidDeploy(err)
	}
	// Without a state there is nothing to undeploy — unless the installation
	// handler's prepare fetches it.
	if verb == plan.VerbUndeploy && st.State == nil && st.Res.Stack.Meta.InstallationHandler == nil {
		return nil, &Nothing{Reason: fmt.Sprintf("nothing to undeploy: no state at %s", st.Store)}
	}
	r := &stackRun{st: st, pl: newPlanner(st, o.Warn, consequence), keepTFVars: o.KeepTFVars}
	if st.Res.Stack.Meta.InstallationHandler != nil && isLandscape(src) {
		// A landscape's records of what is deployed (sow's export/ and
		// state/ folders) are part of the stack: the handler's prepare may
		// bring them, so the landscape is read again after it.
		r.reload = func() error {
			src.HandlerLater, src.HandlerCalled = false, true
			res, diags := elaborateSource(&src, false)
			if err := diagsError(diags, consequence); err != nil {
				return err
			}
			g, gdiags := build.BuildGraph(res)
			if err := diagsError(gdiags, consequence); err != nil {
				return err
			}
			st.Res, st.Graph = res, g
			return r.lockParams()
		}
	}
	r.lockParams = func() error {
		if verb == plan.VerbUndeploy {
			st.LockedFromState()
			return nil
		}
		return st.LockParams(o.Terminal, false, r.pl.warnOnce, consequence)
	}
	r.noState = func() error {
		if verb == plan.VerbUndeploy {
			return &Nothing{Reason: fmt.Sprintf("nothing to undeploy: no state at %s", st.Store)}
		}
		return nil
	}
	if err := r.lockParams(); err != nil {
		return nil, invalidDeploy(err)
	}
	r.opts = build.Options{Verb: verb, Selection: o.Selection, Resume: o.Resume, Force: o.Force, Run: true,
		EnvironmentLater: st.Res.Stack.Meta.InstallationHandler != nil}
	if verb == plan.VerbDeploy && !IsElaborated(o.Manifest) {
		// Next to the manifest the stack was read from, as the runtime
		// tells components (GANTRY_ELABORATE): for a landscape given by its
		// folder that is its acre.yaml, inside it, not beside the folder.
		r.opts.WriteElaborate = absPath(st.Res.Stack.File + elaborate.Suffix)
		if eng == nil {
			// Encoded while the plan is built, on the processor the start
			// of a run leaves idle; its step writes it.
			r.elaborated = steps.PrepareElaborated(st.Res, workspace.For(st.AbsStatePath()), r.opts.WriteElaborate)
		}
	}
	r.ro = resolve.Options{Verbs: []string{verb}, Resume: o.Resume, Handler: true}
	b, err := r.pl.build(r.opts, r.ro)
	if err != nil {
		return nil, invalidDeploy(err)
	}
	parallel := o.Parallel
	if parallel == 0 {
		parallel = st.Res.Stack.Lifecycle.Parallel
	}
	if eng != nil {
		return r.carryOutRemote(ctx, b, "gantry "+verb, o, eng, max(parallel, 1))
	}
	return r.carryOut(ctx, b, "gantry "+verb, o.Display, execOptions{parallel: parallel, force: o.Force, yes: o.Yes, term: o.Terminal, interrupted: o.Interrupted})
}

// stackRun is a run being prepared: a deploy, an undeploy or a custom verb.
type stackRun struct {
	st   *Stack
	pl   *planner
	opts build.Options
	ro   resolve.Options
	// lockParams (re)locks the parameters: a deploy's from the environment,
	// the params files, the state and prompts; the others' as the state
	// recorded them.
	lockParams func() error
	// noState says what a state gone under the lock means (nil: nothing
	// wrong, a deploy starts afresh).
	noState func() error
	// nested is a run inside a run of the same stack (gantry invoke from a
	// component): the outer run holds the lock and called the handler.
	nested bool
	// readOnly runs leave the state alone (custom verbs); keepTFVars keeps
	// TF_VAR_* variables in components' environment.
	readOnly, keepTFVars bool
	// rebuild builds the plan again under the lock whatever changed: the
	// installation handler's prepare ran since it was built.
	rebuild bool
	// reload loads the stack again before that build (a sow landscape,
	// whose records prepare may have brought); nil for other stacks.
	reload func() error
	// held is the state's lock the run holds (locked), nil before it or
	// for a nested run.
	held state.Lock
	// elaborated is the elaborated file the run writes, worked out ahead;
	// nil when it writes none (or runs elsewhere).
	elaborated *steps.Elaborated
}

// carryOut runs a prepared run. With an installation handler, its prepare
// comes first — before the state's lock is taken and the state read again,
// so that prepare may fetch the state or put tools in place (seed 002:
// "before any call to sow") — and its finalize last, whatever happened after
// a successful prepare: a failed or interrupted run, a held lock, input that
// became invalid. Between them, under the lock, the stack's plan is built
// from the world as prepare left it and executed. All of it is one run: one
// record, one display, one event stream.
func (r *stackRun) carryOut(ctx context.Context, b *built, command string, display Display, o execOptions) (*Outcome, error) {
	var keeper outputKeeper
	defer keeper.close()
	// Started now, as the input is valid, ahead of the lock and the
	// leftovers; again under the lock if the plan built then is the first
	// to run anything.
	ctx = keeper.start(ctx, r, b)
	ctx, stopCatching := catchInterrupts(ctx, o.interrupted)
	defer stopCatching()
	st := r.st
	runID := newRunID()
	ws := workspace.For(st.AbsStatePath())
	h := b.facts.Handler
	var rec *record
	var prepare, finalize *plan.Plan
	finish := func() {}
	if h != nil {
		prepare = build.HandlerPlan(st.Res.Stack.Meta.Name, r.opts.Verb, h, build.HandlerPrepare, b.masker.Text)
		finalize = build.HandlerPlan(st.Res.Stack.Meta.Name, r.opts.Verb, h, build.HandlerFinalize, b.masker.Text)
		var err error
		if rec, err = openRecord(ws, runID, runTag(st), build.Shown(b.plan, prepare, finalize), b.masker, display); err != nil {
			return nil, err
		}
		if err := rec.execute(ctx, prepare, handlerRuntime(st, b, prepare), execOptions{parallel: 1, term: o.term}); err != nil {
			rec.close(err)
			return nil, err
		}
		if rec.failed() {
			// Nothing else runs, and finalize is not called.
			return rec.close(nil), nil
		}
		finish = func() {
			_ = rec.execute(ctx, finalize, handlerRuntime(st, b, finalize), execOptions{parallel: 1, term: o.term})
		}
		r.rebuild = true
		r.opts.EnvironmentLater = false
	}
	relocked, release, err := r.locked(ctx, b, runID, command)
	if err != nil {
		if rec != nil {
			finish()
			rec.close(err)
		}
		return nil, err
	}
	defer release()
	b = relocked
	ctx, stopWatching := stopWhenTaken(ctx, r.held)
	defer stopWatching()
	ctx = keeper.start(ctx, r, b)
	rt := runtime(st, b, runID, r.keepTFVars)
	rt.Elaborated = r.elaborated
	if err := rt.PluginDataRefusals(); err != nil {
		// Before the run's record: a workspace to mend, like input.
		err = &InvalidError{Err: fmt.Errorf("%w\nnothing was run", err), Consequence: "nothing was run"}
		if rec != nil {
			finish()
			rec.close(err)
		}
		return nil, err
	}
	if rec == nil {
		if rec, err = openRecord(ws, runID, runTag(st), b.plan, b.masker, display); err != nil {
			return nil, err
		}
	} else {
		rec.masker = b.masker
		if err := rec.reshow(build.Shown(b.plan, prepare, finalize)); err != nil {
			finish()
			rec.close(err)
			return nil, err
		}
	}
	rec.lock = r.held
	runErr := rec.executeStack(ctx, st, b, rt, r.readOnly, o)
	finish()
	out := rec.close(runErr)
	writeReport(st, b, out)
	return out, runErr
}

// handlerRuntime is the world of the installation handler's plans.
func handlerRuntime(st *Stack, b *built, p *plan.Plan) *steps.Runtime {
	return &steps.Runtime{Plan: p, Res: st.Res, Masker: b.masker, OSEnv: os.Environ(), Now: time.Now}
}

// locked takes the state's lock for a run (a *LockedError when another run
// holds it), reads the state as it is under the lock — another run may have
// changed it — and builds the plan again when it changed or a killed run left
// processes, which the plan's first step then waits for. The function it
// returns releases the lock.
func (r *stackRun) locked(ctx context.Context, b *built, runID, command string) (*built, func(), error) {
	if r.nested {
		return b, func() {}, nil
	}
	st := r.st
	held, err := acquire(ctx, st, runID, command)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (*built, func(), error) {
		held.Release()
		return nil, nil, err
	}
	changed, err := st.readState()
	if err != nil {
		return fail(err)
	}
	if st.State == nil {
		if err := r.noState(); err != nil {
			return fail(err)
		}
	}
	// Read once, under the lock: the plan built again below waits for
	// what it found. A registry a live run holds is that run's, which
	// this one must neither take for leftovers nor replace (a run inside
	// it has none of its own).
	if !insideRunOf(st.Location(), st.Res.Stack.Meta.Name) {
		if err := st.checkRegistries(); err != nil {
			return fail(err)
		}
	}
	left, err := st.leftovers()
	if err != nil {
		return fail(err)
	}
	slog.Debug("state locked", "state", st.Store.String(), "run", runID, "changed", changed, "leftovers", len(left))
	if r.rebuild && r.reload != nil {
		if err := r.reload(); err != nil {
			return fail(err)
		}
		changed = false // the parameters were locked again with it
	}
	if changed || len(left) > 0 || r.rebuild {
		// Parameters are locked again only when the state they came from
		// changed: a deploy would ask the person at the terminal again.
		if changed {
			if err := r.lockParams(); err != nil {
				return fail(err)
			}
		}
		r.ro.Leftovers = left
		if st.State != nil {
			r.ro.LastRun = st.State.LastRun
		}
		if b, err = r.pl.build(r.opts, r.ro); err != nil {
			return fail(err)
		}
	}
	r.held = held
	return b, func() { held.Release() }, nil
}

// acquire takes the state's lock for a run, waiting for it as the source
// said (--lock-timeout).
func acquire(ctx context.Context, st *Stack, runID, command string) (state.Lock, error) {
	return lockStore(ctx, st.Store, runID, command, st.lockOpts)
}

// lockStore takes a store's lock for this process, as the run runID of
// command.
func lockStore(ctx context.Context, s state.Store, runID, command string, o state.LockOptions) (state.Lock, error) {
	for _, one := range listed(s) {
		if fs, ok := one.(*state.FileStore); ok {
			// Input to mend (exit 2), not a backend away: gantry makes
			// the state file and its lock, never the folders above them.
			if dir := filepath.Dir(fs.Path()); !dirExists(dir) {
				return nil, invalid("nothing was run", "state %s: its folder %s does not exist (gantry creates the state file, not its folder)", one, dir)
			}
		}
	}
	host, _ := os.Hostname()
	user := ""
	if u, err := osuser.Current(); err == nil {
		user = u.Username
	}
	held, err := s.Lock(ctx, state.Holder{Host: host, PID: os.Getpid(), RunID: runID, Command: command, User: user, Since: time.Now().UTC()}, o)
	if le, ok := err.(*state.LockedError); ok {
		return nil, &LockedError{LockedError: le, StatePath: s.String()}
	}
	if err != nil && ctx.Err() != nil {
		return nil, &InterruptedError{While: "waiting for the lock of the state " + s.String()}
	}
	if err != nil {
		return nil, fmt.Errorf("lock the state %s: %w", s, err)
	}
	return held, nil
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

// dirExists reports whether path is a folder.
func dirExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
