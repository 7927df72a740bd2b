package action

import (
	"context"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/plan/resolve"
)

// Invoke runs a custom verb (backup, rotate, …) that a deployed component
// declares, with the parameters it was deployed with, and leaves the state
// unchanged.
type Invoke struct {
	Source
	Component, Verb string
	Terminal        Terminal
	Warn            func(manifest.Diagnostics)
	Display         Display
	// Interrupted hears of interrupts, as RunOptions.Interrupted.
	Interrupted func(second bool)
}

// Run carries out the verb.
func (a *Invoke) Run(ctx context.Context) (*Outcome, error) {
	const consequence = "nothing was run"
	st, err := Load(a.Source, consequence)
	if err != nil {
		return nil, err
	}
	// Inside a run of the same stack (gantry invoke from one of its
	// components) the outer run holds the lock and called the installation
	// handler; an invoke of another stack from there takes that stack's lock
	// like any other run.
	nested := insideRunOf(st.Location(), st.Res.Stack.Meta.Name)
	noState := func() error { return invalid(consequence, "no state at %s: deploy the stack first", st.Store) }
	if st.State == nil && (nested || st.Res.Stack.Meta.InstallationHandler == nil) {
		return nil, noState()
	}
	st.LockedFromState()
	r := &stackRun{st: st, pl: newPlanner(st, a.Warn, consequence), noState: noState, nested: nested, readOnly: true,
		lockParams: func() error { st.LockedFromState(); return nil },
		opts:       build.Options{Verb: a.Verb, Invoke: a.Component},
		ro:         resolve.Options{Verbs: []string{a.Verb}, Handler: !nested}}
	b, err := r.pl.build(r.opts, r.ro)
	if err != nil {
		return nil, err
	}
	return r.carryOut(ctx, b, "gantry invoke", a.Display, execOptions{parallel: 1, term: a.Terminal, interrupted: a.Interrupted})
}
