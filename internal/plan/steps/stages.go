package steps

import (
	"context"
	"fmt"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/plugin"
	"github.com/gantry-dev/gantry/internal/state"
)

// stageRun carries out one stage of a staged plugin's instance (the
// kubernetes plugin's CRDs, hooks, weight groups). The instance's first
// stage prepares it; the others read what it handed on (their third
// input). The resources the plugin creates are recorded in the state as it
// says, before it creates them.
func (rt *Runtime) stageRun(ctx context.Context, env plan.Env, n *plan.Node, info *plan.Component, b *begun, s plan.Entry, spec *plugin.Spec) plan.Result {
	staged, ok := plugin.IsStaged(spec.Name)
	if !ok {
		return plan.Fail(fmt.Errorf("plugin %s: not built into this gantry", spec.Name))
	}
	var prepared any
	first := len(n.Inputs) <= 2 // prepare: the stages after it take what it made
	if !first {
		prepared = env.Result(n.Inputs[2]).Data
	}
	exp := rt.pluginParams(info, b)
	call := &plugin.Call{
		Action: s.Action, Entry: spec, Instance: rt.instance(ctx, env, info, exp), Dir: info.Dir, Env: rt.processEnv(info, exp),
		Stdout: env.Stream(), Stderr: env.Stream(),
		Expand:   expandMasked(exp, rt.Masker),
		Recorded: build.RecordedInstance(rt.recorded(info.Name), spec.Key),
		// Never nil from a plan: an action whose only stage is its first
		// has no other stage to run, and prepare must know it.
		Stages: append([]string{}, s.Stages...),
		Keep: func(resources []state.Resource, cluster string) error {
			if info.ReadOnly || rt.Recorder == nil {
				return nil
			}
			found := false
			ver := rt.Recorder.UpdateComponent(info.Name, func(c *state.Component) {
				found = plugin.SetResources(c, spec.Key, resources, cluster)
			})
			if !found {
				return fmt.Errorf("internal error: the state records no instance %q of %s", spec.Key, info.Name)
			}
			if err := rt.Recorder.Wait(ver); err != nil {
				return fmt.Errorf("record the resources of %s in the state: %w", spec.InstanceName(), err)
			}
			return nil
		},
	}
	if rt.Recorder != nil {
		call.Others = func() map[string][]state.Resource {
			var out map[string][]state.Resource
			rt.Recorder.View(func(st *state.State) { out = plugin.OtherResources(st, info.Name, spec.Key) })
			return out
		}
		if !info.ReadOnly {
			call.ForgetIfHeld = plugin.ForgetIfHeldIn(rt.Recorder, info.Name, spec.Key, spec.InstanceName())
		}
	}
	if s.Action == plugin.ActionDeploy && rt.Plan != nil && first {
		// Prepare keeps it for the stages after it (the prune).
		call.Planned = rt.plannedDeploys(info.Name, spec.Key)
		call.Staying = rt.staying
	}
	if s.Action == plugin.ActionDelete && rt.Plan != nil && first {
		// An orphan's teardown in a deploy (a component renamed) leaves
		// what a component of the run applies later, as a prune does.
		call.Planned = rt.plannedDeploys(info.Name, spec.Key)
	}
	var reported *produced
	if s.Stage == plugin.StageOutputs {
		outs, err := objectOutputs(rt.Res.Component(info.Name), exp.Resolver())
		if err != nil {
			return plan.Fail(err)
		}
		reported = &produced{direct: map[string]string{}}
		call.Outputs, call.Report = outs, rt.reportTo(reported)
	}
	out, err := staged.RunStage(ctx, call, plugin.Stage{ID: s.Stage, Objects: s.Objects}, prepared)
	if err != nil {
		return failure(ctx, fmt.Errorf("%s %s: %w", spec.Name, spec.InstanceName(), err))
	}
	if reported != nil {
		// The record step takes the outputs from here; no stage reads
		// what the outputs stage returns.
		return plan.OkWith(reported)
	}
	return plan.OkWith(out)
}

// objectOutputs are a component's outputs read from objects (fromObject),
// their kinds, names and namespaces expanded over the component's
// parameters.
func objectOutputs(c *manifest.Component, r params.Resolver) ([]plugin.ObjectOutput, error) {
	if c == nil {
		return nil, nil
	}
	var out []plugin.ObjectOutput
	for _, o := range c.Outputs {
		ref := o.FromObject
		if ref == nil {
			continue
		}
		var fields [3]string
		for i, v := range []string{ref.Kind, ref.Name, ref.Namespace} {
			e, err := params.Expand(v, r)
			if err != nil {
				return nil, fmt.Errorf("output %s: fromObject: %w", o.Name, err)
			}
			fields[i] = e
		}
		out = append(out, plugin.ObjectOutput{Name: o.Name, Kind: fields[0], Object: fields[1], Namespace: fields[2], Path: ref.Path})
	}
	return out, nil
}

// plannedDeploys are, by component, the stages of the run's plan that
// deploy staged plugin instances other than the instance with the key of
// component (Call.Planned). The plan's nodes are walked once per run, not
// once per instance: a stack of 1,000 kubernetes components has tens of
// thousands of them.
func (rt *Runtime) plannedDeploys(component, key string) map[string][]plugin.Stage {
	rt.plannedOnce.Do(func() {
		rt.planned = map[string]map[string][]plugin.Stage{}
		for _, n := range rt.Plan.Nodes {
			e, ok := entryOf(n)
			if !ok || e.Stage == "" || e.Action != plugin.ActionDeploy || len(e.Objects) == 0 {
				continue
			}
			byKey := rt.planned[e.Component]
			if byKey == nil {
				byKey = map[string][]plugin.Stage{}
				rt.planned[e.Component] = byKey
			}
			byKey[e.Key] = append(byKey[e.Key], plugin.Stage{ID: e.Stage, Objects: e.Objects})
		}
	})
	out := make(map[string][]plugin.Stage, len(rt.planned))
	for c, byKey := range rt.planned {
		for k, stages := range byKey {
			if c != component || k != key {
				out[c] = append(out[c], stages...)
			}
		}
	}
	return out
}

// staying are the components of the stack's manifest the run does not
// undeploy (Call.Staying).
func (rt *Runtime) staying() []string {
	gone := map[string]bool{}
	for _, n := range rt.Plan.Nodes {
		if e, ok := entryOf(n); ok && e.Action == plugin.ActionDelete {
			gone[e.Component] = true
		}
	}
	var out []string
	for _, c := range rt.Res.Components {
		if c != nil && !gone[c.Meta.Name] {
			out = append(out, c.Meta.Name)
		}
	}
	return out
}

// entryOf is the plugin-list entry a node runs, if it runs one (a plan
// read back from JSON holds pointers).
func entryOf(n *plan.Node) (plan.Entry, bool) {
	switch s := n.Spec.(type) {
	case plan.Entry:
		return s, true
	case *plan.Entry:
		return *s, true
	}
	return plan.Entry{}, false
}
