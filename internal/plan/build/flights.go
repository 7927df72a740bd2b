package build

import (
	"sort"
	"strings"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/stepvars"
)

// preFlightPass adds the pre-flight group: its standard steps (the tools the
// implementations need are on PATH), then the injected ones, one after
// another, before everything else.
func (b *builder) preFlightPass() {
	var std []*plan.Node
	if tools := b.tools(); len(tools) > 0 {
		std = append(std, &plan.Node{ID: "pre-flight/standard/tools", Kind: plan.KindStandard, Label: "check tools: " + strings.Join(tools, ", "), Spec: plan.Tools{Tools: tools}})
	}
	ids := b.flight(groupPreFlight, b.res.Stack.Lifecycle.PreFlight, std)
	if len(ids) > 0 {
		b.preFlightLast = ids[len(ids)-1]
	}
}

// tools are the tools the implementations of the selected components and
// of the orphans the run tears down need. A component the stack no longer
// lists runs in the folder its record names.
func (b *builder) tools() []string {
	set := map[string]bool{}
	need := func(name, verb string) {
		dir := ""
		if ref := b.stackRef(name); ref != nil {
			dir = ref.Source.Dir
		} else if b.in.Before != nil && b.in.Before.Components[name] != nil {
			dir = b.recordedDir(b.in.Before.Components[name].Dir)
		} else {
			return
		}
		if r, ok := b.f.Implementations[ImplKey{b.f.Abs(dir), verb}]; ok && r.Impl != nil && r.Impl.Kind == component.ImplMake {
			set["make"] = true
		}
	}
	for _, name := range b.selected {
		need(name, b.verb)
	}
	if b.teardown != "" {
		for _, name := range b.orphans {
			need(name, plan.VerbUndeploy)
		}
	}
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// postFlightPass adds the post-flight group (post-teardown for an undeploy)
// once every component has ended, whatever its outcome: the stack's ready
// conditions after a deploy, the removal of generated files after an
// undeploy, then the injected steps.
func (b *builder) postFlightPass() {
	l := &b.res.Stack.Lifecycle
	name, group := b.postGroup()
	var std []*plan.Node
	if b.undeploy {
		if len(b.selected) > 0 {
			std = append(std, &plan.Node{ID: name + "/standard/clean", Kind: plan.KindStandard, Label: "remove generated files of undeployed components",
				Spec: plan.Clean{Components: append([]string(nil), b.selected...)}})
		}
	} else if conds := l.ReadyConditions; len(conds) > 0 {
		std = append(std, &plan.Node{ID: name + "/standard/ready", Kind: plan.KindReady, Label: readyLabel(conds),
			Spec: plan.Ready{Conditions: readyConditions(conds)}})
	}
	ids := b.flight(name, group, std)
	if len(ids) == 0 {
		return
	}
	all := append(append([]*compPlan(nil), b.comps...), b.orphanPlans...)
	for _, cp := range all {
		b.connect(cp.end, ids[0], plan.OnComplete)
	}
	if b.preFlightLast != "" && len(all) == 0 {
		b.connect(b.preFlightLast, ids[0], plan.OnSuccess)
	}
}

// postGroup is the flight group after the components: post-flight, or
// post-teardown for an undeploy.
func (b *builder) postGroup() (string, *manifest.FlightGroup) {
	if b.undeploy {
		return groupPostTeardown, b.res.Stack.Lifecycle.PostTeardown
	}
	return groupPostFlight, b.res.Stack.Lifecycle.PostFlight
}

// checkPostFlight checks what the post-flight group runs, when a pass
// before it stopped the build: its mistakes are said with the others',
// not once those are mended.
func (b *builder) checkPostFlight() {
	name, group := b.postGroup()
	b.checkFlight(name, group)
}

// checkFlight checks a flight group's injected steps and, after a deploy,
// the stack's ready conditions, once.
func (b *builder) checkFlight(name string, g *manifest.FlightGroup) {
	if b.flightsChecked[name] {
		return
	}
	b.flightsChecked[name] = true
	if name == groupPostFlight && (g == nil || !g.SkipStandardSteps) {
		b.checkReadyConditions(b.res.Stack.Lifecycle.ReadyConditions)
	}
	if name == groupPostFlight && !b.undeploy {
		b.checkStackOutputs()
	}
	if g == nil {
		return
	}
	vars := stepvars.For(b.res, b.in.Locked, nil, b.stepModel())
	known := b.knownNames(nil)
	dir := b.stackDir()
	field := "lifecycle." + strings.ReplaceAll(name, "-", "_") + ".steps"
	for i, st := range g.Steps {
		b.validateStep(&st, dir, nil, manifest.ItemPath(field, i), vars, known)
	}
}

// flight adds a flight group's standard steps (unless skip_standard_steps)
// and injected steps, one after another, and returns their ids.
func (b *builder) flight(name string, g *manifest.FlightGroup, std []*plan.Node) []string {
	b.checkFlight(name, g)
	var nodes []*plan.Node
	if g == nil || !g.SkipStandardSteps {
		nodes = append(nodes, std...)
	}
	if g != nil {
		dir := b.stackDir()
		for i, st := range g.Steps {
			nodes = append(nodes, &plan.Node{ID: stepID(name, "step", i), Kind: plan.Kind(st.Type), Label: stepLabel(&st),
				Spec: plan.Injected{Point: name, Step: stepSpec(&st), Dir: dir}})
		}
	}
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		n.Group, n.Critical = name, true
		b.p.Add(n)
		ids[i] = n.ID
		if i > 0 {
			b.connect(ids[i-1], n.ID, plan.OnSuccess)
		}
	}
	return ids
}

// edgesPass orders the components: deploy follows the graph, undeploy runs
// it backwards; orphans go one after the other before or after the
// components, their failures reported but not holding the components back;
// everything waits for the pre-flight group.
func (b *builder) edgesPass() {
	inPlan := map[string]bool{}
	for _, cp := range b.comps {
		inPlan[cp.info.Name] = true
	}
	deps := newSelectedDeps(b.g, b.in.Before, inPlan, b.undeploy)
	for _, cp := range b.comps {
		for _, a := range deps.of(cp.info.Name) {
			dep := b.byName[a]
			if dep == nil || dep.info.Orphan && !b.undeploy {
				continue
			}
			if b.undeploy {
				b.connect(cp.end, dep.begin, plan.OnSuccess)
			} else {
				b.connect(dep.end, cp.begin, plan.OnSuccess)
			}
		}
	}
	for i := 1; i < len(b.orphanPlans); i++ {
		b.connect(b.orphanPlans[i-1].end, b.orphanPlans[i].begin, plan.OnComplete)
	}
	if n := len(b.orphanPlans); n > 0 {
		first, last := b.orphanPlans[0].begin, b.orphanPlans[n-1].end
		for _, cp := range b.comps {
			if b.teardown == "before" {
				b.connect(last, cp.begin, plan.OnComplete)
			} else {
				b.connect(cp.end, first, plan.OnComplete)
			}
		}
	}
	if b.preFlightLast != "" {
		for _, cp := range append(append([]*compPlan(nil), b.comps...), b.orphanPlans...) {
			b.connect(b.preFlightLast, cp.begin, plan.OnSuccess)
		}
	}
}
