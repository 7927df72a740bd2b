package action

import (
	"context"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/plan/resolve"
	"github.com/gantry-dev/gantry/internal/workspace"
)

// Invoke runs a custom verb (backup, rotate, …) that a deployed component
// declares, with the parameters it was deployed with, and leaves the state
// unchanged.
type Invoke struct {
	Source
	Component, Verb string
	// Nested is set inside a run of the same stack (gantry invoke from a
	// component): the outer run holds the lock and called the installation
	// handler.
	Nested   bool
	Terminal Terminal
	Warn     func(manifest.Diagnostics)
	Display  Display
}

// Run carries out the verb.
func (a *Invoke) Run(ctx context.Context) (*Outcome, error) {
	const consequence = "nothing was run"
	st, err := Load(a.Source, consequence)
	if err != nil {
		return nil, err
	}
	if st.State == nil {
		return nil, invalid(consequence, "no state at %s: deploy the stack first", st.StatePath)
	}
	st.LockedFromState()
	pl := newPlanner(st, a.Warn, consequence)
	opts := build.Options{Verb: a.Verb, Invoke: a.Component}
	ro := resolve.Options{Verbs: []string{a.Verb}, Handler: !a.Nested}
	b, err := pl.build(opts, ro)
	if err != nil {
		return nil, err
	}
	runID := newRunID()
	if !a.Nested {
		held, err := acquire(st, runID, "gantry invoke")
		if err != nil {
			return nil, err
		}
		defer held.Release()
		// The state as it is under the lock: another run may have changed it.
		changed, err := st.readState()
		if err != nil {
			return nil, err
		}
		if st.State == nil {
			return nil, invalid(consequence, "no state at %s: deploy the stack first", st.StatePath)
		}
		registry := workspace.For(st.AbsStatePath()).Registry(st.AbsStatePath())
		left, err := leftovers(registry)
		if err != nil {
			return nil, err
		}
		if changed || left {
			st.LockedFromState()
			ro.Registry, ro.LastRun = registry, st.State.LastRun
			if b, err = pl.build(opts, ro); err != nil {
				return nil, err
			}
		}
	}
	rt := runtime(st, b, runID, false)
	return execute(ctx, st, b, rt, runOptions{parallel: 1, readOnly: true, term: a.Terminal, display: a.Display})
}
