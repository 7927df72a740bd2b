package action

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/plan/resolve"
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
	Terminal   Terminal
	// Warn hears warnings about the input, each once.
	Warn    func(manifest.Diagnostics)
	Display Display
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
	st, err := Load(o.Source, consequence)
	if err != nil {
		return nil, err
	}
	if verb == plan.VerbUndeploy && st.State == nil {
		return nil, &Nothing{Reason: fmt.Sprintf("nothing to undeploy: no state at %s", st.StatePath)}
	}
	r := &stackRun{st: st, pl: newPlanner(st, o.Warn, consequence)}
	r.lockParams = func() error {
		if verb == plan.VerbUndeploy {
			st.LockedFromState()
			return nil
		}
		return st.LockParams(o.Terminal, false, r.pl.warnOnce, consequence)
	}
	r.noState = func() error {
		if verb == plan.VerbUndeploy {
			return &Nothing{Reason: fmt.Sprintf("nothing to undeploy: no state at %s", st.StatePath)}
		}
		return nil
	}
	if err := r.lockParams(); err != nil {
		return nil, err
	}
	r.opts = build.Options{Verb: verb, Selection: o.Selection, Resume: o.Resume, Force: o.Force, Run: true,
		EnvironmentLater: st.Res.Stack.Meta.InstallationHandler != nil}
	if verb == plan.VerbDeploy && !IsElaborated(o.Manifest) {
		r.opts.WriteElaborate = absPath(o.Manifest + elaborate.Suffix)
	}
	r.ro = resolve.Options{Verbs: []string{verb}, Resume: o.Resume, Handler: true}
	b, err := r.pl.build(r.opts, r.ro)
	if err != nil {
		return nil, err
	}
	runID := newRunID()
	b, release, err := r.locked(b, runID, "gantry "+verb)
	if err != nil {
		return nil, err
	}
	defer release()
	parallel := o.Parallel
	if parallel == 0 {
		parallel = st.Res.Stack.Lifecycle.Parallel
	}
	rt := runtime(st, b, runID, o.KeepTFVars)
	return execute(ctx, st, b, rt, runOptions{parallel: parallel, force: o.Force, yes: o.Yes, term: o.Terminal, display: o.Display})
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
}

// locked takes the state's lock for a run (a *LockedError when another run
// holds it), reads the state as it is under the lock — another run may have
// changed it — and builds the plan again when it changed or a killed run left
// processes, which the plan's first step then waits for. The function it
// returns releases the lock.
func (r *stackRun) locked(b *built, runID, command string) (*built, func(), error) {
	st := r.st
	held, err := acquire(st, runID, command)
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
	registry := workspace.For(st.AbsStatePath()).Registry(st.AbsStatePath())
	left, err := leftovers(registry)
	if err != nil {
		return fail(err)
	}
	slog.Debug("state locked", "state", st.StatePath, "run", runID, "changed", changed, "leftovers", left)
	if changed || left {
		// Parameters are locked again only when the state they came from
		// changed: a deploy would ask the person at the terminal again.
		if changed {
			if err := r.lockParams(); err != nil {
				return fail(err)
			}
		}
		r.ro.Registry = registry
		if st.State != nil {
			r.ro.LastRun = st.State.LastRun
		}
		if b, err = r.pl.build(r.opts, r.ro); err != nil {
			return fail(err)
		}
	}
	return b, func() { held.Release() }, nil
}

// acquire takes the state's lock for a run.
func acquire(st *Stack, runID, command string) (*state.Lock, error) {
	host, _ := os.Hostname()
	held, err := state.Acquire(st.StatePath, state.Holder{Host: host, PID: os.Getpid(), RunID: runID, Command: command, Since: time.Now().UTC()})
	if le, ok := err.(*state.LockedError); ok {
		return nil, &LockedError{LockedError: le, StatePath: st.StatePath}
	}
	return held, err
}

// leftovers reports whether a killed run left processes that still live,
// unless this is a run inside a run of the same stack (gantry invoke from a
// component), whose processes are the outer run's.
func leftovers(registry string) (bool, error) {
	left, err := component.Leftovers(registry)
	return len(left) > 0, err
}

func absPath(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
