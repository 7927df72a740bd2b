package plan

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/state"
)

// standardStep is a step gantry puts in a flight group itself (skipped with
// skip_standard_steps).
type standardStep struct {
	id, label string
	runner    Runner
}

// addFlight adds a flight group that runs before everything else: its standard
// steps, then the injected ones, one after another. It returns the id of the
// group's last step, "" when the group is empty.
func addFlight(p *Plan, rt *Runtime, name string, g *manifest.FlightGroup, std []standardStep, model map[string]any, diags *manifest.Diagnostics) string {
	ids := addFlightSteps(p, rt, name, g, std, model, diags)
	if len(ids) == 0 {
		return ""
	}
	return ids[len(ids)-1]
}

// addFlightAfter adds a flight group that runs once the given components have
// ended, whatever their outcome (and after the pre-flight group).
func addFlightAfter(p *Plan, rt *Runtime, name string, g *manifest.FlightGroup, std []standardStep, model map[string]any, diags *manifest.Diagnostics, after []*compRun, pre string) string {
	ids := addFlightSteps(p, rt, name, g, std, model, diags)
	if len(ids) == 0 {
		return ""
	}
	for _, cr := range after {
		p.Connect(cr.name+"/end", ids[0], OnComplete)
	}
	if pre != "" && len(after) == 0 {
		p.Connect(pre, ids[0], OnSuccess)
	}
	return ids[0]
}

func addFlightSteps(p *Plan, rt *Runtime, name string, g *manifest.FlightGroup, std []standardStep, model map[string]any, diags *manifest.Diagnostics) []string {
	var nodes []*Node
	if g == nil || !g.SkipStandardSteps {
		for _, s := range std {
			nodes = append(nodes, &Node{ID: name + "/standard/" + s.id, Kind: "standard", Label: s.label, Runner: s.runner})
		}
	}
	if g != nil {
		vars := stepVars(rt, nil, model)
		known := knownNames(rt, nil)
		dir := stackDir(rt)
		field := "lifecycle." + strings.ReplaceAll(name, "-", "_") + ".steps"
		for i, st := range g.Steps {
			validateStep(rt, &st, dir, true, manifest.ItemPath(field, i), vars, known, diags)
			label := st.Label
			if label == "" {
				label = st.Describe()
			}
			nodes = append(nodes, &Node{ID: stepID(name, "step", i), Kind: string(st.Type), Label: label,
				Runner: injected{rt: rt, step: st, dir: dir, vars: vars}})
		}
	}
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		n.Group, n.Critical = name, true
		p.Add(n)
		ids[i] = n.ID
		if i > 0 {
			p.Connect(ids[i-1], n.ID, OnSuccess)
		}
	}
	return ids
}

// standardPreFlight checks, before anything changes, that the tools the
// components' implementations need are on PATH.
func standardPreFlight(rt *Runtime, selected []string, verb string) []standardStep {
	tools := map[string]bool{}
	for _, name := range selected {
		ref := stackRef(rt, name)
		if ref == nil {
			continue
		}
		if impl, err := rt.probe(absPath(ref.Source.Dir), verb); err == nil && impl.Kind == component.ImplMake {
			tools["make"] = true
		}
	}
	if len(tools) == 0 {
		return nil
	}
	names := make([]string, 0, len(tools))
	for t := range tools {
		names = append(names, t)
	}
	sort.Strings(names)
	return []standardStep{{id: "tools", label: "check tools: " + strings.Join(names, ", "), runner: RunnerFunc(func(ctx context.Context, env Env) Result {
		var missing []string
		for _, t := range names {
			if _, err := exec.LookPath(t); err != nil {
				missing = append(missing, t)
			}
		}
		if len(missing) > 0 {
			return Fail(fmt.Errorf("not on PATH: %s", strings.Join(missing, ", ")))
		}
		return Ok()
	})}}
}

// standardPostFlight waits for the stack's ready conditions.
func standardPostFlight(rt *Runtime) []standardStep {
	conds := rt.Res.Stack.Lifecycle.ReadyConditions
	if len(conds) == 0 {
		return nil
	}
	return []standardStep{{id: "ready", label: readyLabel(conds), runner: readyStep{rt: rt, conds: conds}}}
}

// standardPostTeardown removes the generated files of the components that are
// now undeployed (deleting .gantry/gen is always safe).
func standardPostTeardown(rt *Runtime, selected []string) []standardStep {
	if len(selected) == 0 {
		return nil
	}
	return []standardStep{{id: "clean", label: "remove generated files of undeployed components", runner: RunnerFunc(func(ctx context.Context, env Env) Result {
		if rt.Recorder == nil {
			return Ok()
		}
		var done []string
		rt.Recorder.View(func(s *state.State) {
			for _, name := range selected {
				if c, ok := s.Components[name]; ok && c.Status == state.StatusUndeployed {
					done = append(done, name)
				}
			}
		})
		for _, name := range done {
			if err := os.RemoveAll(rt.Dirs.GenDir(name)); err != nil {
				return Fail(err)
			}
		}
		return Ok()
	})}}
}
