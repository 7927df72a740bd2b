package action

import (
	"context"
	"slices"

	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/report"
)

// Report builds the plan as Run does and the model of its page (gantry
// plan --output html): what would run and why, with the parameters each
// component would get — a deploy's expanded over the outputs the state
// knows (the others pending), an undeploy's as the state recorded them —
// secrets masked.
func (a *Plan) Report(ctx context.Context) (*report.Model, error) {
	p, st, b, err := a.build(ctx)
	if err != nil {
		return nil, err
	}
	return report.FromPlan(p, planParams(st, b, p)), nil
}

// planParams are the parameters of a plan's components, before it runs.
func planParams(st *Stack, b *built, p *plan.Plan) *report.Params {
	mask := b.masker.Text
	out := &report.Params{Stack: []report.Param{}, Components: map[string][]report.Param{}}
	if st.Locked != nil {
		for _, v := range st.Locked.Values() {
			out.Stack = append(out.Stack, report.NewParam(v.Name, v.Component, v.Value, spreadSource(st, v.Name, v.Component, v.Source), v.Env, v.Secret, mask))
		}
	}
	var outputs *params.OutputIndex
	// hub.provides as the run gives it (prepare's runtime): asked in deploy
	// order, the rule moves forward a component at a time.
	provides := build.NewHubProvides(st.Res, st.Graph.Order, st.State, build.InitialProvides(st.Res, nil, foundEnvironment(b)), p.SomeComponents, func(n string) bool {
		info := p.Components[n]
		return info != nil && info.Verb == plan.VerbDeploy
	})
	names := make([]string, 0, len(p.Components))
	for name, info := range p.Components {
		names = append(names, name)
		if info.SkippedByDesign {
			provides.Provided(name, nil)
		}
	}
	slices.SortFunc(names, func(x, y string) int { return p.Components[x].Order - p.Components[y].Order })
	for _, name := range names {
		info := p.Components[name]
		c := st.Res.Component(name)
		if p.Verb != plan.VerbDeploy || c == nil || st.Locked == nil {
			out.Components[name] = recordedParams(st, name, mask)
			continue
		}
		if outputs == nil {
			outputs = build.NewOutputIndex(st.Res, st.Graph, st.State)
		}
		exp, diags := params.ExpandComponent(params.ComponentInput{Locked: st.Locked, Component: c, Depends: info.Depends,
			Outputs: outputs, Provides: provides.For(name)})
		if exp == nil || diags.HasErrors() {
			continue // the plan would not have been built
		}
		ps := make([]report.Param, len(exp.Values))
		for i, v := range exp.Values {
			value := v.Value
			if v.Pending != "" {
				value = "(pending output of " + v.Pending + ")"
			}
			ps[i] = report.NewParam(v.Name, "", value, spreadSource(st, v.Name, name, v.Source), v.Env, v.Secret, mask)
		}
		out.Components[name] = ps
	}
	return out
}

// recordedParams are a component's parameters as the state recorded them
// (what an undeploy uses), secrets masked.
func recordedParams(st *Stack, name string, mask func(string) string) []report.Param {
	if st.State == nil || st.State.Components[name] == nil {
		return nil
	}
	rec := st.State.Components[name].Parameters
	ps := make([]report.Param, len(rec))
	for i, v := range rec {
		ps[i] = report.NewParam(v.Name, "", v.Value, "state", v.Env, v.Secret, mask)
	}
	return ps
}
