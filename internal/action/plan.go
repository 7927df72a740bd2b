package action

import (
	"context"
	"errors"
	"fmt"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/plan/resolve"
)

// Plan builds the plan a deploy or an undeploy would run, and runs nothing:
// it takes no lock and writes nothing.
type Plan struct {
	Source
	// Verb is deploy or undeploy.
	Verb      string
	Selection build.Selection
	Resume    bool
	Force     bool
	Terminal  Terminal
	Warn      func(manifest.Diagnostics)
}

// Run builds the plan. A stack with nothing to undeploy is a *Nothing.
func (a *Plan) Run(ctx context.Context) (*plan.Plan, error) {
	p, _, _, err := a.build(ctx)
	if err != nil {
		// Every problem validate finds, whichever phase stopped the plan.
		err = allProblems(ctx, a.Source, a.Verb, a.Selection, err, "nothing was run")
	}
	return p, err
}

// build loads the stack, locks its parameters and builds the plan: the
// plan shown, the stack and what it was built with.
func (a *Plan) build(ctx context.Context) (*plan.Plan, *Stack, *built, error) {
	const consequence = "nothing was run"
	st, err := Load(a.Source, consequence)
	if err != nil {
		return nil, nil, nil, err
	}
	if a.Warn != nil {
		// A run going on: what its components are doing is not in the
		// state yet, which the plan reads.
		if note, live := RunNote(ctx, st.Store, st.State); live {
			a.Warn(warningDiag(note + "; this plan shows them as recorded before they ran: plan again when that run ends"))
		}
	}
	pl := newPlanner(st, a.Warn, consequence)
	if a.Verb == plan.VerbUndeploy {
		if st.State == nil && st.Res.Stack.Meta.InstallationHandler == nil {
			return nil, nil, nil, &Nothing{Reason: fmt.Sprintf("nothing to undeploy: no state at %s", st.Store)}
		}
		st.LockedFromState()
	} else if err := st.LockParams(a.Terminal, false, pl.warnOnce, consequence); err != nil {
		return nil, nil, nil, err
	}
	// The processes a killed run left: the run will wait for them first,
	// so the plan shows that wait (read without the lock: a plan changes
	// nothing, and the run reads them again under it). A live run's are
	// not leftovers.
	var left []component.Leftover
	if !st.registriesInUse() {
		if left, err = st.leftovers(); err != nil {
			return nil, nil, nil, err
		}
	}
	ro := resolve.Options{Verbs: []string{a.Verb}, Resume: a.Resume, Handler: true, Leftovers: left}
	if st.State != nil {
		ro.LastRun = st.State.LastRun
	}
	b, err := pl.build(build.Options{Verb: a.Verb, Selection: a.Selection, Resume: a.Resume, Force: a.Force,
		EnvironmentLater: st.Res.Stack.Meta.InstallationHandler != nil}, ro)
	if err != nil {
		return nil, nil, nil, err
	}
	if a.Warn != nil {
		// What the run would refuse before it starts, said now (the
		// plan itself is sound).
		if err := runtime(st, b, "", false).PluginDataRefusals(); err != nil {
			a.Warn(warningDiag(fmt.Sprintf("a local %s from here will be refused: %v", a.Verb, err)))
		}
	}
	if h := b.facts.Handler; h != nil {
		stack := st.Res.Stack.Meta.Name
		return build.Shown(b.plan, build.HandlerPlan(stack, a.Verb, h, build.HandlerPrepare, b.masker.Text),
			build.HandlerPlan(stack, a.Verb, h, build.HandlerFinalize, b.masker.Text)), st, b, nil
	}
	return b.plan, st, b, nil
}

// Validate checks everything a deploy checks before it runs anything, and
// reports every problem at once: the manifests, the graph, the parameters,
// the implementations, requirements and lifecycle steps. Parameters that
// get their value from the environment at deploy time are warnings when
// they have none here.
type Validate struct {
	Source
	Warn func(manifest.Diagnostics)
}

// Validated is a stack found valid.
type Validated struct {
	Stack                  string
	Components, Parameters int
}

// Run validates the stack.
//
// Every problem of every class is reported at once: validate goes on past
// broken manifests (without the components they leave out) to the graph,
// past a cycle to the parameters, and builds the plan (implementations,
// requirements, component parameters) when the stack's own files are sound
// (broken component manifests left out), the graph has no cycle and the
// parameters could be locked.
func (a *Validate) Run(ctx context.Context) (*Validated, error) {
	const consequence = "the stack is not valid"
	st, diags, err := load(a.Source, true)
	if err != nil && diags.HasErrors() {
		// The state could not be read: say so with the rest.
		diags.Errorf(manifest.Pos{File: a.Source.StatePath}, "", "%v", err)
		return nil, &InvalidError{Diags: diags, Consequence: consequence}
	}
	if err != nil {
		return nil, err
	}
	if st == nil {
		return nil, &InvalidError{Diags: diags, Consequence: consequence}
	}
	var warned manifest.Diagnostics
	collect := func(err error) error {
		var ie *InvalidError
		if errors.As(err, &ie) && ie.Err == nil {
			diags = append(diags, ie.Diags...)
			return nil
		}
		return err
	}
	pl := newPlanner(st, func(ds manifest.Diagnostics) { warned = append(warned, ds...) }, consequence)
	if err := collect(st.LockParams(Terminal{}, true, pl.warnOnce, consequence)); err != nil {
		return nil, err
	}
	// The plan needs a graph without cycles and the parameters locked. Of
	// a partial stack (components whose manifests are broken left out) it
	// reports what the components left have wrong in themselves: a name or
	// a capability they miss may be one a component left out declares
	// (elaborate.Result.Partial), so those wait until the manifests are
	// sound. Errors in the stack's own files leave no plan to speak of.
	if (st.elaborated || st.Res.Partial) && !st.graphBroken && st.Locked != nil {
		if _, err := pl.build(build.Options{Verb: plan.VerbDeploy}, resolve.Options{Verbs: []string{plan.VerbDeploy}, Handler: true}); collect(err) != nil {
			return nil, err
		}
	}
	if diags.HasErrors() {
		return nil, &InvalidError{Diags: append(diags, warned...), Consequence: consequence}
	}
	if a.Warn != nil {
		a.Warn(append(diags, warned...))
	}
	return &Validated{Stack: st.Res.Stack.Meta.Name, Components: len(st.Res.Components), Parameters: len(st.Res.Stack.Parameters)}, nil
}
