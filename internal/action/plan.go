package action

import (
	"context"
	"fmt"

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
	const consequence = "nothing was run"
	st, err := Load(a.Source, consequence)
	if err != nil {
		return nil, err
	}
	pl := newPlanner(st, a.Warn, consequence)
	if a.Verb == plan.VerbUndeploy {
		if st.State == nil && st.Res.Stack.Meta.InstallationHandler == nil {
			return nil, &Nothing{Reason: fmt.Sprintf("nothing to undeploy: no state at %s", st.Store)}
		}
		st.LockedFromState()
	} else if err := st.LockParams(a.Terminal, false, pl.warnOnce, consequence); err != nil {
		return nil, err
	}
	b, err := pl.build(build.Options{Verb: a.Verb, Selection: a.Selection, Resume: a.Resume, Force: a.Force,
		EnvironmentLater: st.Res.Stack.Meta.InstallationHandler != nil},
		resolve.Options{Verbs: []string{a.Verb}, Resume: a.Resume, Handler: true})
	if err != nil {
		return nil, err
	}
	if h := b.facts.Handler; h != nil {
		stack := st.Res.Stack.Meta.Name
		return build.Shown(b.plan, build.HandlerPlan(stack, a.Verb, h, build.HandlerPrepare, b.masker.Text),
			build.HandlerPlan(stack, a.Verb, h, build.HandlerFinalize, b.masker.Text)), nil
	}
	return b.plan, nil
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
func (a *Validate) Run(ctx context.Context) (*Validated, error) {
	const consequence = "the stack is not valid"
	st, err := Load(a.Source, consequence)
	if err != nil {
		return nil, err
	}
	pl := newPlanner(st, a.Warn, consequence)
	if err := st.LockParams(Terminal{}, true, pl.warnOnce, consequence); err != nil {
		return nil, err
	}
	if _, err := pl.build(build.Options{Verb: plan.VerbDeploy}, resolve.Options{Verbs: []string{plan.VerbDeploy}, Handler: true}); err != nil {
		return nil, err
	}
	return &Validated{Stack: st.Res.Stack.Meta.Name, Components: len(st.Res.Components), Parameters: len(st.Res.Stack.Parameters)}, nil
}
