package plan

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/dag"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plugin"
	"github.com/gantry-dev/gantry/internal/state"
)

// Verbs.
const (
	VerbDeploy   = "deploy"
	VerbUndeploy = "undeploy"
)

// Selection narrows a run to some components (DESIGN 4.7).
type Selection struct {
	Components []string // -c a,b
	WithDeps   bool     // -a: add dependencies (deploy) or dependents (undeploy)
	Offset     string   // -o: start at this component
	Limit      string   // -l: stop after this component
}

// BuildOptions say what plan to build.
type BuildOptions struct {
	Verb      string
	Selection Selection
	Resume    bool
	// Force lets a spec version jump more than one step.
	Force bool
}

// IsMandatory applies seed 000: every component is mandatory unless listed in
// lifecycle.optional; when lifecycle.mandatory is given, everything else is
// optional.
func IsMandatory(s *manifest.Stack, comp string) bool {
	if len(s.Lifecycle.Mandatory) > 0 {
		return containsName(s.Lifecycle.Mandatory, comp)
	}
	return !containsName(s.Lifecycle.Optional, comp)
}

func containsName(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Build builds the plan of a deploy or undeploy (DESIGN section 5): the
// pre-flight group, the component plans in graph order (reversed for
// undeploy) with their lifecycle steps, orphans torn down before or after
// them as teardown_orphans says, and the post-flight (post-teardown) group.
func Build(rt *Runtime, opts BuildOptions) (*Plan, manifest.Diagnostics) {
	var diags manifest.Diagnostics
	if opts.Verb == "" {
		opts.Verb = VerbDeploy
	}
	undeploy := opts.Verb == VerbUndeploy
	order := rt.Graph.Order
	orphans := Orphans(rt)
	if undeploy {
		order = reversed(teardownOrder(rt, orphans))
	}
	selected, ok := SelectOrder(rt.Graph, order, opts.Verb, opts.Selection, &diags)
	if !ok {
		return nil, diags
	}
	if undeploy {
		checkDependents(rt, selected, &diags)
	}
	p := New(rt.Res.Stack.Meta.Name, opts.Verb)
	model := modelOf(rt)
	l := &rt.Res.Stack.Lifecycle
	pre := addFlight(p, rt, "pre-flight", l.PreFlight, standardPreFlight(rt, selected, opts.Verb), model, &diags)

	runs := map[string]*compRun{}
	selectedSet := map[string]bool{}
	for _, n := range selected {
		selectedSet[n] = true
	}
	addRun := func(name string, o BuildOptions, orphan bool) *compRun {
		cr := newCompRun(rt, name, o, selectedSet, &diags)
		if cr == nil {
			return nil
		}
		cr.orphan = orphan
		runs[name] = cr
		addComponent(p, rt, cr, model, &diags)
		return cr
	}
	var orphanRuns []*compRun
	teardownOrphans := !undeploy && len(opts.Selection.Components) == 0 && opts.Selection.Offset == "" && opts.Selection.Limit == ""
	if teardownOrphans && l.TeardownOrphans == "before" {
		for _, o := range reversed(orphans) {
			if cr := addRun(o, BuildOptions{Verb: VerbUndeploy}, true); cr != nil {
				orphanRuns = append(orphanRuns, cr)
			}
		}
	}
	var compRuns []*compRun
	for _, name := range selected {
		if cr := addRun(name, opts, false); cr != nil {
			compRuns = append(compRuns, cr)
		}
	}
	if teardownOrphans && l.TeardownOrphans == "after" {
		for _, o := range reversed(orphans) {
			if cr := addRun(o, BuildOptions{Verb: VerbUndeploy}, true); cr != nil {
				orphanRuns = append(orphanRuns, cr)
			}
		}
	}
	// Orphans this plan leaves alone are listed, with the command that
	// removes them (DESIGN 5: gantry plan always lists them).
	if !undeploy && (!teardownOrphans || l.TeardownOrphans == "" || l.TeardownOrphans == "none") {
		p.Orphans = orphans
	}
	if diags.HasErrors() {
		return nil, diags
	}
	// Edges between the selected components: deploy follows the graph,
	// undeploy runs it backwards.
	inPlan := map[string]bool{}
	for _, cr := range compRuns {
		inPlan[cr.name] = true
	}
	for _, cr := range compRuns {
		b := cr.name
		for _, a := range selectedDependencies(rt, b, inPlan, undeploy) {
			if runs[a] == nil || runs[a].orphan && !undeploy {
				continue
			}
			if undeploy {
				p.Connect(b+"/end", a+"/begin", OnSuccess)
			} else {
				p.Connect(a+"/end", b+"/begin", OnSuccess)
			}
		}
	}
	// Orphans are torn down one after the other, in reverse deploy order;
	// before the components or after them. Their failures are reported, but
	// do not hold the components back.
	for i := 1; i < len(orphanRuns); i++ {
		p.Connect(orphanRuns[i-1].name+"/end", orphanRuns[i].name+"/begin", OnComplete)
	}
	if len(orphanRuns) > 0 {
		first, last := orphanRuns[0].name+"/begin", orphanRuns[len(orphanRuns)-1].name+"/end"
		if l.TeardownOrphans == "before" {
			for _, cr := range compRuns {
				p.Connect(last, cr.name+"/begin", OnComplete)
			}
		} else {
			for _, cr := range compRuns {
				p.Connect(cr.name+"/end", first, OnComplete)
			}
		}
	}
	all := append(append([]*compRun(nil), compRuns...), orphanRuns...)
	if pre != "" {
		for _, cr := range all {
			p.Connect(pre, cr.name+"/begin", OnSuccess)
		}
	}
	postName, postGroup, postStd := "post-flight", l.PostFlight, standardPostFlight(rt)
	if undeploy {
		postName, postGroup, postStd = "post-teardown", l.PostTeardown, standardPostTeardown(rt, selected)
	}
	if first := addFlightAfter(p, rt, postName, postGroup, postStd, model, &diags, all, pre); first != "" {
		_ = first
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return p, diags
}

// dependenciesOf returns the components b depends on: from the graph when b is
// in the stack, and for undeploy also what the state recorded, since the
// components were deployed by that graph.
func dependenciesOf(rt *Runtime, b string, undeploy bool) []string {
	var deps []string
	if rt.Graph.DAG.Has(b) {
		deps = rt.Graph.Dependencies(b)
	}
	if (undeploy || !rt.Graph.DAG.Has(b)) && rt.Before != nil {
		if c, ok := rt.Before.Components[b]; ok {
			for _, d := range c.Depends {
				deps = appendNew(deps, d)
			}
		}
	}
	return deps
}

// selectedDependencies returns, for a component, the selected components it
// must wait for: its dependencies, and through the ones that are not
// selected, theirs — so that -c a,c keeps a before c when a → b → c.
func selectedDependencies(rt *Runtime, b string, selected map[string]bool, undeploy bool) []string {
	var out []string
	seen := map[string]bool{b: true}
	var walk func(n string)
	walk = func(n string) {
		for _, d := range dependenciesOf(rt, n, undeploy) {
			if seen[d] {
				continue
			}
			seen[d] = true
			if selected[d] {
				out = append(out, d)
			} else {
				walk(d)
			}
		}
	}
	walk(b)
	return out
}

// teardownOrder is the deploy order of everything an undeploy may touch: the
// stack's components and the orphans, ordered by the graph and by the
// dependencies the state recorded. Undeploy runs it backwards.
func teardownOrder(rt *Runtime, orphans []string) []string {
	g := dag.New()
	for _, n := range rt.Graph.Order {
		g.AddNode(n)
	}
	for _, n := range orphans {
		g.AddNode(n)
	}
	for _, n := range g.Nodes() {
		for _, d := range dependenciesOf(rt, n, true) {
			if g.Has(d) {
				g.AddEdge(d, n)
			}
		}
	}
	order, err := g.TopoOrder()
	if err != nil {
		// The recorded dependencies and the new manifest disagree in a loop:
		// the recorded deploy order is what was really done.
		return append(append([]string(nil), orphans...), rt.Graph.Order...)
	}
	return order
}

func reversed(l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[len(l)-1-i] = s
	}
	return out
}

// Orphans are components recorded in the state, not undeployed, that the
// stack no longer lists, in their recorded deploy order.
func Orphans(rt *Runtime) []string {
	if rt.Before == nil {
		return nil
	}
	var out []string
	for _, name := range rt.Before.ComponentOrder() {
		c := rt.Before.Components[name]
		if rt.Graph.DAG.Has(name) || c.Status == state.StatusUndeployed || c.Status == state.StatusSkipped {
			continue
		}
		out = append(out, name)
	}
	return out
}

// SelectOrder applies -c, -a, -o and -l to a run order.
func SelectOrder(g *Graph, order []string, verb string, sel Selection, diags *manifest.Diagnostics) ([]string, bool) {
	known := map[string]bool{}
	for _, n := range order {
		known[n] = true
	}
	check := func(flag, name string) bool {
		if known[name] {
			return true
		}
		msg := fmt.Sprintf("%s %s: no component %q in the stack", flag, name, name)
		if s := manifest.Suggest(name, order); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		diags.Errorf(manifest.Pos{}, "", "%s", msg)
		return false
	}
	ok := true
	want := map[string]bool{}
	if len(sel.Components) > 0 {
		for _, c := range sel.Components {
			if check("-c", c) {
				want[c] = true
			} else {
				ok = false
			}
		}
		if sel.WithDeps {
			for c := range want {
				var more []string
				if g.DAG.Has(c) {
					if verb == VerbUndeploy {
						more = g.DAG.Reachable(c)
					} else {
						more = g.DAG.Ancestors(c)
					}
				}
				for _, m := range more {
					want[m] = true
				}
			}
		}
	}
	for _, f := range []struct{ flag, name string }{{"-o", sel.Offset}, {"-l", sel.Limit}} {
		if f.name != "" && !check(f.flag, f.name) {
			ok = false
		}
	}
	if !ok {
		return nil, false
	}
	var out []string
	started := sel.Offset == ""
	for _, n := range order {
		if n == sel.Offset {
			started = true
		}
		if started && (len(want) == 0 || want[n]) {
			out = append(out, n)
		}
		if n == sel.Limit {
			break
		}
	}
	if len(out) == 0 && (sel.Offset != "" || sel.Limit != "") {
		diags.Errorf(manifest.Pos{}, "", "the selection is empty: -o %s comes after -l %s in the %s order", sel.Offset, sel.Limit, verb)
		return nil, false
	}
	return out, true
}

// checkDependents refuses to undeploy a component that a deployed component
// outside the selection still depends on.
func checkDependents(rt *Runtime, selected []string, diags *manifest.Diagnostics) {
	in := map[string]bool{}
	for _, s := range selected {
		in[s] = true
	}
	deployed := func(n string) bool {
		if rt.Before == nil {
			return false
		}
		c, ok := rt.Before.Components[n]
		return ok && (c.Status == state.StatusDeployed || c.Status == state.StatusIncomplete || c.Status == state.StatusFailed)
	}
	for _, s := range selected {
		var blocking []string
		seen := map[string]bool{}
		var dependents []string
		if rt.Graph.DAG.Has(s) {
			dependents = rt.Graph.DAG.Successors(s)
		}
		// A component still in the stack depends on what its manifest says
		// now (an orphan's teardown may come before its redeploy, as with
		// teardown_orphans: before); one that left it, on what it recorded.
		if rt.Before != nil {
			for name, c := range rt.Before.Components {
				if !rt.Graph.DAG.Has(name) && containsName(c.Depends, s) {
					dependents = append(dependents, name)
				}
			}
		}
		for _, d := range dependents {
			if !in[d] && !seen[d] && deployed(d) {
				seen[d] = true
				blocking = append(blocking, d)
			}
		}
		sort.Strings(blocking)
		if len(blocking) > 0 {
			diags.Errorf(manifest.Pos{}, "", "cannot undeploy %s: %s still depend%s on it; select %s too or add -a to undeploy what depends on it",
				s, strings.Join(blocking, ", "), map[bool]string{true: "s", false: ""}[len(blocking) == 1], map[bool]string{true: "it", false: "them"}[len(blocking) == 1])
		}
	}
}

// newCompRun prepares a component for the run: its manifest or its record,
// its directory and its implementation (a missing one is an error now, not
// half-way through the run).
func newCompRun(rt *Runtime, name string, opts BuildOptions, selectedSet map[string]bool, diags *manifest.Diagnostics) *compRun {
	cr := &compRun{rt: rt, name: name, verb: opts.Verb, resume: opts.Resume, order: rt.Graph.Position(name)}
	if rt.Before != nil {
		cr.recorded = rt.Before.Components[name]
	}
	if ref := stackRef(rt, name); ref != nil {
		cr.c = rt.Res.Component(name)
		cr.dir = ref.Source.Dir
		cr.deps = rt.Graph.Dependencies(name)
		cr.depends = ref.Depends
	} else if cr.recorded != nil {
		cr.dir, cr.deps, cr.order = rt.RecordedDir(cr.recorded.Dir), cr.recorded.Depends, cr.recorded.Order
	}
	cr.dir = absPath(cr.dir)
	pos := manifest.Pos{}
	if ref := stackRef(rt, name); ref != nil {
		pos = ref.Pos
	}
	if opts.Verb == VerbUndeploy && (cr.recorded == nil || cr.recorded.Status == state.StatusUndeployed || cr.recorded.Status == state.StatusSkipped || neverRan(cr.recorded)) {
		return cr // skipped at run time: nothing to undeploy
	}
	usesPlugins := cr.c != nil && (len(cr.c.Plugins) > 0 || len(cr.c.SetupPlugins) > 0) ||
		cr.c == nil && cr.recorded != nil && (len(cr.recorded.Plugins) > 0 || len(cr.recorded.SetupPlugins) > 0)
	switch {
	case usesPlugins:
		preparePlugins(rt, cr, opts.Force, pos, diags)
	case cr.c != nil && cr.c.Lifecycle.Bare == manifest.EmptyAllow:
		return cr
	default:
		impl, err := rt.probe(cr.dir, opts.Verb)
		if err != nil {
			diags.Errorf(pos, "", "component %s: %v", name, err)
			return nil
		}
		switch {
		case impl.Kind == component.ImplMake || impl.Kind == component.ImplScript:
			cr.impl = impl
			preparePlugins(rt, cr, opts.Force, pos, diags)
			cr.plugins, cr.setup = nil, nil
		case impl.Kind == component.ImplTerraform && plugin.IsBuiltin("terraform"):
			// A folder of *.tf files is a terraform module: the terraform
			// plugin applies it in place.
			preparePlugins(rt, cr, opts.Force, pos, diags)
			if !cr.expanded {
				cr.plugins = []*plugin.Spec{{Name: "terraform", Key: "terraform", Config: map[string]any{"dir": "."}}}
			}
		default:
			diags.Errorf(pos, "", "component %s: found %s, which needs the %s plugin; this gantry does not include it", name, filepath.Base(impl.File), impl.Kind)
			return nil
		}
	}
	if opts.Verb == VerbDeploy && cr.c != nil {
		checkStaticRequirements(rt, cr, pos, diags)
		checkParameters(rt, cr, selectedSet, diags)
	}
	return cr
}

// checkParameters expands the component's parameters with the outputs known
// now, so that a mistake (an unknown name, a broken expression, an empty
// value) is reported before anything runs. Values that wait for outputs of
// components that have not run are fine here; the run expands them again.
func checkParameters(rt *Runtime, cr *compRun, selected map[string]bool, diags *manifest.Diagnostics) {
	_, ds := params.ExpandComponent(params.ComponentInput{Locked: rt.Locked, Component: cr.c, Depends: cr.depends, Outputs: plannedOutputs(rt, selected), Provides: rt.Provides.String()})
	*diags = append(*diags, ds.Errors()...)
}

// plannedOutputs is the outputs index as a plan sees it: outputs of
// components that will run are not known yet, whatever the state says.
func plannedOutputs(rt *Runtime, selected map[string]bool) *params.OutputIndex {
	if rt.planned != nil {
		return rt.planned
	}
	var st *state.State
	if rt.Before != nil {
		st = rt.Before.Clone()
		for name := range selected {
			delete(st.Components, name)
		}
	}
	rt.planned = NewOutputIndex(rt.Res, rt.Graph, st)
	return rt.planned
}

func stackRef(rt *Runtime, name string) *manifest.ComponentRef {
	rt.refsOnce.Do(func() {
		rt.refs = make(map[string]int, len(rt.Res.Stack.Components))
		for i := range rt.Res.Stack.Components {
			if _, dup := rt.refs[rt.Res.Stack.Components[i].Name]; !dup {
				rt.refs[rt.Res.Stack.Components[i].Name] = i
			}
		}
	})
	if i, ok := rt.refs[name]; ok {
		return &rt.Res.Stack.Components[i]
	}
	return nil
}

// checkStaticRequirements refuses, before anything runs, a requirement that
// nothing can satisfy: no component of the stack provides it, the environment
// does not (its tool is not on PATH), the state does not, and it is not tuned
// optional.
func checkStaticRequirements(rt *Runtime, cr *compRun, pos manifest.Pos, diags *manifest.Diagnostics) {
	for _, req := range cr.c.Requires {
		if rt.Provides.Has(req) || isOptionalRequirement(rt.Res.Stack, req, cr.name) {
			continue
		}
		provided := containsName(rt.Res.Stack.Provides, req)
		for _, other := range rt.Res.Components {
			if other.Meta.Name != cr.name && containsName(other.Provides, req) {
				provided = true
			}
		}
		if provided {
			continue
		}
		hint := "no component provides it"
		if IsEnvironmentCapability(req) {
			hint = fmt.Sprintf("no component provides it and its tool (%s) is not on PATH", strings.Join(environmentTools[req], ", "))
		}
		diags.Errorf(pos, "", "component %s requires %s: %s; add a component that provides it, or make it optional with lifecycle.requires.optional: [%s:%s]", cr.name, req, hint, req, cr.name)
	}
}

// addComponent adds a component's plan: begin, then the injection points of
// seed 001 around the verb, then end; every step has the failure path to the
// component's failed step.
func addComponent(p *Plan, rt *Runtime, cr *compRun, model map[string]any, diags *manifest.Diagnostics) {
	critical := IsMandatory(rt.Res.Stack, cr.name) && cr.c != nil && !cr.orphan
	group := cr.name
	var begin Runner = beginDeploy{cr}
	if cr.verb == VerbUndeploy || cr.readOnly {
		begin = beginRecorded{cr}
	}
	action, reason := predictAction(cr)
	// begin takes a slot like any step: with --parallel 1 components then
	// prepare and run strictly one after the other, as in the Hub CLI.
	steps := []*Node{{ID: cr.name + "/begin", Kind: "begin", Label: cr.name + ": prepare", Hidden: true, Runner: inGroup{cr, begin}}}
	points := deployPoints
	if cr.verb == VerbUndeploy {
		points = teardownPoints
	}
	var lc manifest.ComponentLifecycle
	if cr.c != nil && !cr.readOnly {
		lc = EffectiveLifecycle(cr.c, stackRef(rt, cr.name))
		cr.forceReplace = lc.ForceReplace != nil && *lc.ForceReplace
	}
	var vars map[string]any
	if cr.c != nil {
		vars = stepVars(rt, cr.c, model)
	}
	known := knownNames(rt, cr.c)
	for _, point := range points {
		switch point {
		case verbPoint:
			n := &Node{ID: cr.name + "/" + cr.verb, Kind: "component", Label: cr.verb + " " + cr.name, Verb: cr.verb, Action: action, Reason: reason, Runner: inGroup{cr, verbStep{cr}}}
			// Recorded plugin arguments are expanded: they may hold secrets.
			if len(cr.setup) > 0 {
				n.Details = append(n.Details, rt.Masker.Text("setup plugins: "+strings.Join(describeSpecs(cr.setup), ", ")))
			}
			if len(cr.plugins) > 0 {
				n.Details = append(n.Details, rt.Masker.Text("plugins: "+strings.Join(describeSpecs(cr.plugins), ", ")))
			}
			steps = append(steps, n)
		case readyPoint:
			if len(lc.ReadyConditions) > 0 {
				steps = append(steps, &Node{ID: cr.name + "/ready", Kind: "ready", Label: readyLabel(lc.ReadyConditions),
					Runner: inGroup{cr, readyStep{rt: rt, cr: cr, conds: lc.ReadyConditions}}})
			}
		default:
			for i, st := range pointSteps(&lc, point) {
				field := "lifecycle." + point + ".steps"
				validateStep(rt, &st, cr.dir, false, manifest.ItemPath(field, i), vars, known, diags)
				label := st.Label
				if label == "" {
					label = st.Describe()
				}
				steps = append(steps, &Node{ID: stepID(cr.name, point, i), Kind: string(st.Type), Label: label, Point: point,
					Runner: inGroup{cr, injected{rt: rt, cr: cr, step: st, dir: cr.dir, vars: vars}}})
			}
		}
	}
	steps = append(steps, &Node{ID: cr.name + "/end", Kind: "end", Label: cr.name + ": done", Hidden: true, Light: true, Runner: inGroup{cr, endStep{cr}}})
	for _, n := range steps {
		n.Component, n.Group, n.Critical = cr.name, group, critical
		p.Add(n)
	}
	failed := p.Add(&Node{ID: cr.name + "/failed", Kind: "failed", Label: cr.name + ": failed", Component: cr.name, Group: group,
		Hidden: true, Light: true, Always: true, Runner: failedStep{cr}})
	for i, n := range steps {
		if i > 0 {
			p.Connect(steps[i-1].ID, n.ID, OnSuccess)
		}
		p.Connect(n.ID, failed.ID, OnFailure)
	}
}

// knownNames tells whether a ${name} in a component's steps can resolve: a
// parameter of the component or the stack, an output some component declares,
// or an implicit parameter.
func knownNames(rt *Runtime, c *manifest.Component) func(string) bool {
	rt.namesOnce.Do(func() {
		names := map[string]bool{"hub.deploymentId": true, "hub.stackName": true, "hub.componentName": true, "hub.provides": true}
		for _, p := range rt.Res.Stack.Parameters {
			names[p.Name] = true
		}
		for _, other := range rt.Res.Components {
			if other == nil {
				continue
			}
			for _, o := range other.Outputs {
				names[o.Name] = true
			}
		}
		rt.stackNames = names
	})
	var own map[string]bool
	if c != nil {
		own = make(map[string]bool, len(c.Parameters))
		for _, p := range c.Parameters {
			own[p.Name] = true
		}
	}
	return func(n string) bool { return rt.stackNames[n] || own[n] }
}

// predictAction says what the run will do to a component, for the plan.
func predictAction(cr *compRun) (string, string) {
	rec := cr.recorded
	switch {
	case cr.readOnly:
		return cr.verb, ""
	case cr.orphan:
		return "teardown-orphan", "in the state, no longer in the stack"
	case cr.verb == VerbUndeploy:
		if rec == nil || rec.Status == state.StatusUndeployed || rec.Status == state.StatusSkipped {
			return "skip", "not deployed"
		}
		return VerbUndeploy, ""
	case rec != nil && rec.Status == state.StatusDeployed:
		if cr.resume && predictUnchanged(cr) {
			return "unchanged", ""
		}
		return "redeploy", ""
	}
	return VerbDeploy, ""
}

// predictUnchanged computes the component's fingerprint with the outputs the
// state knows; the run computes it again with the outputs it produces.
func predictUnchanged(cr *compRun) bool {
	if cr.forceReplace || cr.c == nil {
		return false
	}
	rt := cr.rt
	exp, diags := params.ExpandComponent(params.ComponentInput{Locked: rt.Locked, Component: cr.c, Depends: cr.depends, Outputs: rt.Outputs, Provides: rt.Provides.String()})
	if diags.HasErrors() {
		return false
	}
	fp, err := rt.fingerprint(cr, exp)
	return err == nil && fp == cr.recorded.Fingerprint
}

// beginRecorded prepares an undeploy, or a custom verb, from what the state
// recorded of the component.
type beginRecorded struct{ cr *compRun }

func (b beginRecorded) Run(ctx context.Context, env Env) Result {
	cr, rt := b.cr, b.cr.rt
	rec := cr.recorded
	if rec == nil || rec.Status == state.StatusUndeployed || rec.Status == state.StatusSkipped {
		return Skip("not deployed", true)
	}
	if neverRan(rec) && !cr.readOnly {
		// It failed before its implementation started: nothing exists to
		// tear down, and an orphan's record can go.
		if cr.orphan {
			rt.Recorder.RemoveComponent(cr.name)
		} else {
			rt.Recorder.UpdateComponent(cr.name, func(c *state.Component) {
				c.Status, c.Reason, c.LastRun = state.StatusUndeployed, "never ran", rt.RunID
			})
		}
		return Skip("never ran: nothing to undeploy", true)
	}
	values := make([]*params.Value, len(rec.Parameters))
	for i, p := range rec.Parameters {
		values[i] = &params.Value{Name: p.Name, Value: p.Value, Env: p.Env, Secret: manifest.LooksSecret(p.Name)}
		if values[i].Secret {
			rt.Masker.Add(p.Value)
		}
	}
	cr.mu.Lock()
	cr.exp = params.Recorded(cr.name, values, rt.Outputs, rt.Locked)
	cr.mu.Unlock()
	return Ok()
}

// neverRan reports a record of a component that failed before its
// implementation started (the in-flight mark sets Started).
func neverRan(c *state.Component) bool {
	return c.Started.IsZero() && c.Status != state.StatusDeployed
}

// BuildInvoke builds the plan of a custom verb (backup, …) on one deployed
// component, with the parameters the state recorded for it. It never changes
// the state.
func BuildInvoke(rt *Runtime, comp, verb string) (*Plan, manifest.Diagnostics) {
	var diags manifest.Diagnostics
	if !rt.Graph.DAG.Has(comp) {
		msg := fmt.Sprintf("no component %q in the stack", comp)
		if s := manifest.Suggest(comp, rt.Graph.Order); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		diags.Errorf(manifest.Pos{}, "", "%s", msg)
		return nil, diags
	}
	c := rt.Res.Component(comp)
	if !containsName(c.Lifecycle.Verbs, verb) && !containsName(rt.Res.Stack.Lifecycle.Verbs, verb) {
		diags.Errorf(c.Lifecycle.Pos, "lifecycle.verbs", "component %s does not declare the verb %q; list it in lifecycle.verbs of the component or the stack", comp, verb)
		return nil, diags
	}
	cr := newCompRun(rt, comp, BuildOptions{Verb: verb}, nil, &diags)
	if cr == nil {
		return nil, diags
	}
	cr.readOnly = true
	if cr.recorded == nil || cr.recorded.Status != state.StatusDeployed {
		diags.Errorf(manifest.Pos{}, "", "component %s is not deployed; invoke runs verbs on deployed components with the parameters they were deployed with", comp)
		return nil, diags
	}
	p := New(rt.Res.Stack.Meta.Name, verb)
	addComponent(p, rt, cr, modelOf(rt), &diags)
	return p, diags
}
