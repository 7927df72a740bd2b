package build

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/stepvars"
	"github.com/gantry-dev/gantry/internal/plugin"
	"github.com/gantry-dev/gantry/internal/state"
)

// compPlan is a component as the builder prepares it.
type compPlan struct {
	info     *plan.Component
	c        *manifest.Component // nil when only the state knows it
	ref      *manifest.ComponentRef
	recorded *state.Component
	pos      manifest.Pos
	// evaluated is what evaluate worked out for it beforehand; nil when
	// the plan works it out when it comes to it.
	evaluated *evaluated
	// plugins and setup are the lists the verb carries out: the manifest's
	// (expanded when the verb runs) or, for an undeploy, those the state
	// recorded (expanded already). vanished are the recorded instances the
	// lists no longer have.
	plugins, setup, vanished []*plugin.Spec
	begin, end               string
	// skipWhy is skippedByDesign's answer, once skipKnown: the plan's
	// action and hub.provides ask it both.
	skipWhy   string
	skipKnown bool
	// skipMaybe: a tuning condition is not surely true (skipWhy, or a
	// link the run reads): the run may skip it (maySkipByDesign).
	skipMaybe bool
	steps     []string // the component's steps but its end, in order
}

// componentsPass adds each selected component's plan, in run order, with
// the orphans torn down before or after them.
func (b *builder) componentsPass() {
	if b.teardown == "before" {
		b.addOrphans()
	}
	// Three steps per selected component (its begin, its verb, its end; a
	// settled one has one, and lifecycle steps add more); orphans torn
	// down before are in the plan already.
	b.p.Reserve(3*len(b.selected), len(b.selected))
	located := b.locateAll(b.selected)
	b.located = located
	b.evaluate(located)
	for _, cp := range located {
		if cp = b.prepareLocated(cp); cp != nil {
			b.comps = append(b.comps, cp)
			b.byName[cp.info.Name] = cp
			b.addComponent(cp)
		}
	}
	if b.teardown == "after" {
		b.addOrphans()
	}
}

// addOrphans adds the teardown of the orphans, last deployed first.
func (b *builder) addOrphans() {
	for _, o := range reversed(b.orphans) {
		if cp := b.prepare(o, plan.VerbUndeploy, true); cp != nil {
			b.orphanPlans = append(b.orphanPlans, cp)
			b.byName[o] = cp
			b.addComponent(cp)
		}
	}
}

// recordedDir resolves a folder the state recorded: relative to the state's
// folder.
func (b *builder) recordedDir(dir string) string {
	if dir == "" || filepath.IsAbs(dir) {
		return dir
	}
	return filepath.Join(b.in.StateDir, filepath.FromSlash(dir))
}

// outsideNote says, of a component torn down from its record (no longer
// in the stack), that the folder it runs in lies outside the stack's
// folder (the state's): the state names it, and one edited or copied may name any
// folder, whose Makefile the teardown runs. "" for one inside.
func (b *builder) outsideNote(cp *compPlan) string {
	if !cp.info.FromState || cp.recorded == nil || cp.recorded.Dir == "" || b.in.StateDir == "" {
		return ""
	}
	rel, err := filepath.Rel(b.in.StateDir, cp.info.Dir)
	if err == nil && filepath.IsLocal(rel) {
		return ""
	}
	return "; torn down in " + cp.info.Dir + ", outside the state's folder, as the state records it"
}

// prepare works out what a component's steps share: its manifest or its
// record, its folder and its implementation. A missing implementation, an
// unknown plugin or a broken parameter is an error now, not half-way through
// the run.
func (b *builder) prepare(name, verb string, orphan bool) *compPlan {
	return b.prepareLocated(b.locate(name, verb, orphan))
}

// prepareLocated is prepare of a component located already.
func (b *builder) prepareLocated(cp *compPlan) *compPlan {
	info, name, verb := cp.info, cp.info.Name, cp.info.Verb
	b.p.Components[name] = info
	if verb == plan.VerbUndeploy && nothingToUndeploy(cp.recorded) {
		return cp // its begin skips it when the run comes to it
	}
	if verb == plan.VerbUndeploy && !b.recordsHere(cp) {
		return nil
	}
	if !b.implement(cp) {
		return nil
	}
	if info.Plugins && verb == plan.VerbDeploy {
		cp.vanished = plugin.Vanished(cp.recorded, cp.plugins, cp.setup)
	}
	if info.Plugins && b.opts.Invoke != "" {
		b.diags.Errorf(cp.pos, "", "component %s is made of plugin lists, whose plugins have the actions deploy and delete only: it has no verb %q", name, verb)
		return nil
	}
	if cp.c != nil {
		for _, r := range cp.c.Requires {
			if CloudOmitted(b.f.Clouds, r) {
				info.DroppedRequires = append(info.DroppedRequires, r)
			}
		}
	}
	if verb == plan.VerbDeploy && cp.c != nil {
		b.checkDependsDeployed(cp)
		b.checkRequirements(cp)
		b.checkParameters(cp)
		b.checkOutputValues(cp)
		b.checkTemplates(cp)
	}
	return cp
}

// checkDependsDeployed warns of a component the run deploys while one it
// depends on is left out of the run (-c, -o) and is not deployed: what
// depends says it needs first is not there. (An undeploy refuses the mirror
// image.)
func (b *builder) checkDependsDeployed(cp *compPlan) {
	for _, d := range cp.info.Depends {
		if !b.outsideRun(d) {
			continue
		}
		status := "never deployed"
		if b.in.Before != nil {
			if rec := b.in.Before.Components[d]; rec != nil && rec.Status != "" {
				if rec.Status == state.StatusDeployed {
					continue
				}
				status = "recorded " + rec.Status
			}
		}
		b.diags.Warnf(cp.pos, "", "component %s depends on %s, which this run leaves out and which is %s: deploy %s first, or include it in this run", cp.info.Name, d, status, d)
	}
}

// locate finds a component: its stack entry and manifest, or when the stack
// no longer lists it, its record; its folder and template chain.
func (b *builder) locate(name, verb string, orphan bool) *compPlan {
	info := &plan.Component{Name: name, Verb: verb, Order: b.g.Position(name), Orphan: orphan,
		ReadOnly: b.opts.Invoke != "", Resume: b.opts.Resume && !orphan, FingerprintReads: b.f.Reads[name]}
	cp := &compPlan{info: info}
	if b.in.Before != nil {
		cp.recorded = b.in.Before.Components[name]
	}
	dir := ""
	if ref := b.stackRef(name); ref != nil {
		cp.ref, cp.pos = ref, ref.Pos
		cp.c = b.res.Component(name)
		dir = ref.Source.Dir
		info.After = b.g.Dependencies(name)
		info.Depends = ref.Depends
		info.Up = ref.Up
		if verb == plan.VerbDeploy {
			info.EntryLifecycle = entryLifecycleDigest(ref)
		}
	} else if cp.recorded != nil {
		info.FromState = true
		dir = b.recordedDir(cp.recorded.Dir)
		info.After, info.Order = cp.recorded.Depends, cp.recorded.Order
	}
	info.Dir = b.f.Abs(dir)
	info.Templates = []string{info.Dir}
	if dirs := b.res.TemplateDirs[name]; len(dirs) > 0 {
		info.Templates = make([]string, len(dirs))
		for i, d := range dirs {
			info.Templates[i] = b.f.Abs(d)
		}
	}
	return cp
}

// implement decides how the component carries out its verb (DESIGN 4.5):
// its plugin lists, nothing (lifecycle.bare: allow), or what its folder
// holds — a Makefile or script, or *.tf files for the terraform plugin.
func (b *builder) implement(cp *compPlan) bool {
	info, rec := cp.info, cp.recorded
	usesPlugins := cp.c != nil && (len(cp.c.Plugins) > 0 || len(cp.c.SetupPlugins) > 0) ||
		cp.c == nil && rec != nil && (len(rec.Plugins) > 0 || len(rec.SetupPlugins) > 0)
	switch {
	case usesPlugins:
		b.versions(cp)
		b.lists(cp)
		return true
	case cp.c != nil && cp.c.Lifecycle.Bare == manifest.EmptyAllow:
		return true
	}
	impl, err := b.f.implementation(info.Dir, info.Verb)
	if err != nil {
		b.diags.Errorf(cp.pos, "", "component %s: %v", info.Name, err)
		return false
	}
	switch {
	case impl.Kind == component.ImplMake || impl.Kind == component.ImplScript:
		info.Implementation = impl.Args
		b.versions(cp)
	case probedLists[impl.Kind].list != nil && plugin.IsListBuiltin(impl.Kind):
		// A folder of *.tf files is a terraform module, one holding a
		// kustomization a kubernetes deployment: the plugin of the same
		// name applies it in place.
		b.versions(cp)
		b.lists(cp)
		// An undeploy deletes what the state recorded; otherwise the
		// plugin is the component's only one.
		if info.Lists != plan.ListsRecorded {
			cp.plugins, cp.setup = probedLists[impl.Kind].list(), nil
			info.Plugins, info.Lists = true, probedLists[impl.Kind].lists
		}
	default:
		b.diags.Errorf(cp.pos, "", "component %s: found %s, which needs the %s plugin; this gantry does not include it", info.Name, filepath.Base(impl.File), impl.Kind)
		return false
	}
	return true
}

// probedLists are the implementations a probe finds that a built-in plugin
// carries out, and the plugin list that stands for them.
var probedLists = map[string]struct {
	list  func() []*plugin.Spec
	lists string
}{
	component.ImplTerraform:  {TerraformList, plan.ListsTerraform},
	component.ImplKubernetes: {KubernetesList, plan.ListsKubernetes},
	component.ImplHelm:       {HelmList, plan.ListsHelm},
}

// ProbedList is the plugin list that stands for an implementation a probe
// found (nil when a plugin list does not carry it out), and the lists
// value naming it.
func ProbedList(kind string) ([]*plugin.Spec, string) {
	p, ok := probedLists[kind]
	if !ok {
		return nil, ""
	}
	return p.list(), p.lists
}

// ListOf is the plugin list a lists value names for a probed
// implementation; nil for the others.
func ListOf(lists string) []*plugin.Spec {
	for _, p := range probedLists {
		if p.lists == lists {
			return p.list()
		}
	}
	return nil
}

// HelmList is the plugin list of a folder holding a chart or a values file
// for one: the helm plugin deploys it, its settings read as the Hub reads
// them.
func HelmList() []*plugin.Spec {
	return []*plugin.Spec{{Name: "helm", Key: "helm"}}
}

// TerraformList is the plugin list of a folder of *.tf files: the terraform
// plugin applies the module in place.
func TerraformList() []*plugin.Spec {
	return []*plugin.Spec{{Name: "terraform", Key: "terraform", Config: map[string]any{"dir": "."}}}
}

// ReasonNeverRan is why an undeploy skips a component that failed before
// its implementation started: nothing of it exists.
const ReasonNeverRan = "never ran: nothing to undeploy"

// nothingToUndeploy reports a record that leaves an undeploy nothing to do.
func nothingToUndeploy(rec *state.Component) bool {
	return rec == nil || rec.Status == state.StatusUndeployed || rec.Status == state.StatusSkipped || NeverRan(rec)
}

// recordsHere checks, before the undeploy of a component the state records
// as deployed, that the records of its own the stack keeps beside the state
// are in the stack's folder: without them its delete finds nothing to
// delete, and the state would forget a component deployed from another
// folder (a clone sharing a database state, another stack in a folder of
// the same name). Refused, unless --force and -c name it: forgetting is
// asked for one component at a time, never by a --force given for its
// usual meaning (go on after a failure), which would empty a state other
// folders deploy from.
func (b *builder) recordsHere(cp *compPlan) bool {
	name := cp.info.Name
	what, gone := b.f.RecordsGone[name]
	if !gone {
		return true
	}
	pos := b.posOf(cp)
	if b.opts.Force && slices.Contains(b.opts.Selection.Components, name) {
		b.diags.Warnf(pos, "", "component %s: none of %s is in %s: --force -c %s forgets it, deleting nothing", name, what, b.res.Dir, name)
		return true
	}
	b.diags.Errorf(pos, "", "component %s: gantry's state records it as %s, but none of %s is in %s, so its undeploy would delete nothing and the state would forget it: "+
		"was it deployed from another folder (a clone sharing a database state, or another landscape in a folder of the same name)? undeploy it there; "+
		"were its records deleted (sow delete, or by hand) with what it deployed? gantry undeploy --force -c %s forgets it, deleting nothing", name, cp.recorded.Status, what, b.res.Dir, name)
	return false
}

// recordsGoneRedeploy makes a deploy run a component the state records as
// deployed again, --resume included, when none of the records of its own
// the stack keeps beside the state is there (sow deleted it, or it was
// deployed from another folder): the fingerprint alone would call it
// unchanged.
func (b *builder) recordsGoneRedeploy(cp *compPlan) {
	info := cp.info
	what, gone := b.f.RecordsGone[info.Name]
	if !gone || info.Verb != plan.VerbDeploy || info.Orphan || info.ReadOnly || cp.recorded == nil || cp.recorded.Status != state.StatusDeployed {
		return
	}
	info.ForceReplace = true
	b.diags.Warnf(b.posOf(cp), "", "component %s: gantry's state records it as deployed, but none of %s is in %s (deleted by sow, or deployed from another folder?): a deploy runs it again, --resume included", info.Name, what, b.res.Dir)
}

// posOf is where messages about a component point: its stack entry, or
// the stack for one only the state knows.
func (b *builder) posOf(cp *compPlan) manifest.Pos {
	if cp.pos.File == "" {
		return b.res.Stack.Pos
	}
	return cp.pos
}

// NeverRan reports a record of a component that failed before its
// implementation started (the in-flight mark sets Started).
func NeverRan(c *state.Component) bool {
	return c.Started.IsZero() && c.Status != state.StatusDeployed
}

// addComponent adds a component's plan: begin, the injection points of
// seed 001 around the verb, and end, which settles the component whatever
// its steps did. A failure skips the rest of the component (its group).
func (b *builder) addComponent(cp *compPlan) {
	info, name := cp.info, cp.info.Name
	// An orphan a deploy tears down is reported, not holding the deploy
	// back; a component an undeploy tears down from its record alone (the
	// stack no longer lists it) is as mandatory as any: the components it
	// depends on wait for it, and a run that left it and them in place has
	// failed.
	critical := IsMandatory(b.res.Stack, name) && (cp.c != nil && !info.Orphan || b.undeploy)
	add := func(n *plan.Node) *plan.Node {
		n.Component, n.Group, n.Critical = name, name, critical
		b.p.Add(n)
		if n.Kind != plan.KindEnd {
			cp.steps = append(cp.steps, n.ID)
		}
		return n
	}
	lc := &manifest.ComponentLifecycle{}
	if cp.c != nil && !info.ReadOnly {
		if e := cp.evaluated; e != nil && e.lifecycle != nil {
			lc = e.lifecycle // no copy of the large struct
		} else {
			l := EffectiveLifecycle(cp.c, cp.ref)
			lc = &l
		}
		info.ForceReplace = lc.ForceReplace != nil && *lc.ForceReplace
		if idem := lc.Idempotent; idem != nil {
			info.Idempotent = *idem
		} else if idem := b.res.Stack.Lifecycle.Idempotent; idem != nil {
			info.Idempotent = *idem
		}
		info.FingerprintExclude = FingerprintExclude(lc, info.Dir, b.in.StateFiles)
	}
	b.recordsGoneRedeploy(cp)
	info.Action, info.Reason = b.predictAction(cp)
	verbLimits := b.verbLimits(lc)
	if info.Settled {
		b.addSettled(cp, lc, add)
		return
	}
	cp.begin = name + "/begin"
	// begin takes a slot like any step: with --parallel 1 components then
	// prepare and run strictly one after the other, as in the Hub CLI.
	add(&plan.Node{ID: cp.begin, Kind: plan.KindBegin, Label: name + ": prepare", Hidden: true, Spec: plan.Begin{Component: name}})
	seq := b.sequence(cp.begin)
	then := seq.then
	// The variables of seed 001 check the injected steps' templates: most
	// components have none, and making them for each cost 13 ms of a plan
	// of 10,000 components.
	var vars map[string]any
	varsFor := func() map[string]any {
		if vars == nil && cp.c != nil {
			vars = stepvars.For(b.res, b.in.Locked, cp.c, b.stepModel())
		}
		return vars
	}
	known := b.knownNames(cp.c)
	points := deployPoints
	if info.Verb == plan.VerbUndeploy {
		points = teardownPoints
	}
	for _, point := range points {
		switch point {
		case verbPoint:
			then(b.verbSteps(cp, add, verbLimits))
		case readyPoint:
			if len(lc.ReadyConditions) > 0 {
				b.checkConditions(lc.ReadyConditions, "lifecycle.readyConditions", cp.c, known)
				n := add(&plan.Node{ID: name + "/ready", Kind: plan.KindReady, Label: readyLabel(lc.ReadyConditions),
					Inputs: []string{cp.begin}, Spec: plan.Ready{Component: name, Conditions: readyConditions(lc.ReadyConditions)}})
				then([]string{n.ID}, []string{n.ID})
			}
		default:
			for i, st := range pointSteps(lc, point) {
				field := "lifecycle." + point + ".steps"
				b.validateStep(&st, info.Dir, cp.c, manifest.ItemPath(field, i), varsFor(), known)
				n := add(&plan.Node{ID: stepID(name, point, i), Kind: plan.Kind(st.Type), Label: stepLabel(&st), Point: point,
					Inputs: []string{cp.begin}, Spec: plan.Injected{Component: name, Point: point, Step: stepSpec(&st), Dir: info.Dir}})
				then([]string{n.ID}, []string{n.ID})
			}
		}
	}
	cp.end = name + "/end"
	end := add(&plan.Node{ID: cp.end, Kind: plan.KindEnd, Label: name + ": done", Hidden: true, Light: true, Always: true,
		Inputs: append([]string(nil), cp.steps...), Spec: plan.End{Component: name}})
	b.connectAll(seq.last, []string{end.ID}, plan.OnComplete)
	// A run that never set up (its installation handler's prepare failed)
	// records nothing of the components it did not run.
	if b.setup != "" {
		b.connect(b.setup, end.ID, plan.OnSuccess)
	}
}

// addSettled adds the plan of a component --resume will find unchanged
// (plan.Component.Settled): one light step, which registers what it
// provides and settles it unchanged, in place of its begin, its lifecycle
// steps, its verb and its end. Its injected steps are still checked: a
// stack is as valid whatever its state.
func (b *builder) addSettled(cp *compPlan, lc *manifest.ComponentLifecycle, add func(*plan.Node) *plan.Node) {
	info, name := cp.info, cp.info.Name
	var vars map[string]any
	var known func(string) bool
	for _, point := range deployPoints {
		for i, st := range pointSteps(lc, point) {
			if vars == nil {
				vars, known = stepvars.For(b.res, b.in.Locked, cp.c, b.stepModel()), b.knownNames(cp.c)
			}
			b.validateStep(&st, info.Dir, cp.c, manifest.ItemPath("lifecycle."+point+".steps", i), vars, known)
		}
	}
	if lc != nil && len(lc.ReadyConditions) > 0 {
		b.checkConditions(lc.ReadyConditions, "lifecycle.readyConditions", cp.c, b.knownNames(cp.c))
	}
	n := add(&plan.Node{ID: name + "/" + info.Verb, Kind: plan.KindComponent, Label: info.Verb + " " + name, Verb: info.Verb,
		Action: info.Action, Reason: info.Reason, Hidden: true, Light: true, Spec: plan.Unchanged{Component: name, Verb: info.Verb}})
	cp.begin, cp.end = n.ID, n.ID
	// It comes after the run's set-up like every component: through the
	// components of its After in the plan (edgesPass), or when none is,
	// by an edge of its own — not one for each of 10,000 components.
	if b.setup != "" && !slices.ContainsFunc(info.After, func(d string) bool { return b.byName[d] != nil }) {
		b.connect(b.setup, n.ID, plan.OnSuccess)
	}
}

// verbSteps adds the steps of the component's verb and returns the first
// and last of them. A script, Makefile or bare component has one step; one
// made of plugin lists has a step that prepares the lists, a step per entry
// and a step that records what they produced.
func (b *builder) verbSteps(cp *compPlan, add func(*plan.Node) *plan.Node, limits *plan.Limits) (first, last []string) {
	info, name := cp.info, cp.info.Name
	id := name + "/" + info.Verb
	verbLimits := limits
	if info.Plugins {
		// The verb of plugin lists only prepares them; the entries do the
		// work, each within the component's limits.
		verbLimits = nil
	}
	verb := add(&plan.Node{ID: id, Kind: plan.KindComponent, Label: info.Verb + " " + name, Verb: info.Verb,
		Action: info.Action, Reason: info.Reason, Hidden: info.Plugins, Inputs: []string{cp.begin},
		Spec: plan.Verb{Component: name, Verb: info.Verb, Limits: verbLimits}})
	if !info.Plugins {
		if info.Verb == plan.VerbDeploy {
			b.outputsReader(cp) // none: fromObject outputs are an error
		}
		return []string{verb.ID}, []string{verb.ID}
	}
	seq := b.sequence(verb.ID)
	then := seq.then
	var entries []string
	el := &entryLists{b: b, cp: cp, add: add, verbID: verb.ID, added: &entries, limits: limits}
	switch info.Verb {
	case plan.VerbDeploy:
		el.reader = b.outputsReader(cp)
		then(el.sequence(plan.ListSetup, cp.setup, plugin.ActionPrepare, nil, false, ""))
		then(el.sequence(plan.ListPlugins, cp.plugins, plugin.ActionDeploy, nil, false, ""))
		then(el.outputsStep())
		// Instances that left the lists are deleted after the deployment
		// (seed 002), the last recorded first.
		for i := len(cp.vanished) - 1; i >= 0; i-- {
			then(el.step(plan.ListVanished, cp.vanished[i], plugin.ActionDelete, []int{i}, ""))
		}
	case plan.VerbUndeploy:
		then(el.sequence(plan.ListPlugins, cp.plugins, plugin.ActionDelete, nil, true, ""))
		then(el.sequence(plan.ListSetup, cp.setup, plugin.ActionCleanup, nil, true, ""))
	}
	record := add(&plan.Node{ID: id + "/record", Kind: plan.KindRecord, Label: name + ": record " + info.Verb, Hidden: true,
		Inputs: append([]string{cp.begin, verb.ID}, entries...), Spec: plan.Record{Component: name, Verb: info.Verb}})
	then([]string{record.ID}, []string{record.ID})
	return []string{verb.ID}, seq.last
}

// chain adds steps one after the other: each part (one step, or the
// branches of a plugin list) waits for every last step of the part before.
type chain struct {
	b    *builder
	last []string
}

func (b *builder) sequence(first string) *chain { return &chain{b: b, last: []string{first}} }

// then appends a part given by its first and last steps; an empty part
// (an entry that does nothing for the action) changes nothing.
func (c *chain) then(first, last []string) {
	if len(first) == 0 {
		return
	}
	c.b.connectAll(c.last, first, plan.OnSuccess)
	c.last = last
}

// connectAll connects every step of from to every step of to.
func (b *builder) connectAll(from, to []string, kind plan.EdgeKind) {
	for _, x := range from {
		for _, y := range to {
			b.connect(x, y, kind)
		}
	}
}

// entryLists turns a component's plugin lists into steps: their order and
// nesting become edges (pinned keeps its order both ways, unpinned follows
// the action, parallel runs its children at once), so the executor runs
// them as it runs every step, within --parallel.
type entryLists struct {
	b      *builder
	cp     *compPlan
	add    func(*plan.Node) *plan.Node
	verbID string
	added  *[]string
	// limits are the component's timeout and retries, for each entry that
	// runs a plugin.
	limits *plan.Limits
	// reader is the deploy's instance that reads the component's object
	// outputs after the list (nil: none to read); readerStep its first
	// stage, once added.
	reader     *plugin.Spec
	readerStep readerStep
}

// sequence adds a list in order, or backwards, and returns its first and
// last steps.
func (el *entryLists) sequence(list string, specs []*plugin.Spec, action string, index []int, reverse bool, lane string) (first, last []string) {
	for k := range specs {
		i := k
		if reverse {
			i = len(specs) - 1 - k
		}
		f, l := el.entry(list, specs[i], action, appendIndex(index, i), lane)
		if len(f) == 0 {
			continue
		}
		el.b.connectAll(last, f, plan.OnSuccess)
		if first == nil {
			first = f
		}
		last = l
	}
	return first, last
}

// entry adds one entry: a control plugin's children, or a step.
func (el *entryLists) entry(list string, s *plugin.Spec, action string, index []int, lane string) (first, last []string) {
	switch s.Name {
	case "pinned":
		return el.sequence(list, s.Children, action, index, false, lane)
	case "unpinned":
		return el.sequence(list, s.Children, action, index, plugin.Reverses(action), lane)
	case "parallel":
		names := plugin.ChildNames(s.Children)
		for j, child := range s.Children {
			l := names[j]
			if lane != "" {
				l = lane + "/" + l
			}
			f, la := el.entry(list, child, action, appendIndex(index, j), l)
			first, last = append(first, f...), append(last, la...)
		}
		return first, last
	}
	return el.step(list, s, action, index, lane)
}

// step adds the step of one entry, or the steps of its stages for a staged
// plugin (kubernetes); http and tcp waits have nothing to do but on deploy.
func (el *entryLists) step(list string, s *plugin.Spec, action string, index []int, lane string) (first, last []string) {
	b, cp := el.b, el.cp
	source := b.pluginSource(cp, s.Name)
	if source == plan.SourceBuiltin && (s.Name == "http" || s.Name == "tcp") && action != plugin.ActionDeploy {
		return nil, nil
	}
	name := cp.info.Name
	id := el.verbID + "/" + list + "/" + joinIndex(index)
	label := action + " " + s.Title()
	if list == plan.ListVanished {
		id = el.verbID + "/" + list + "/" + s.InstanceName()
		label += ": no longer in the plugin list"
	}
	if _, staged := plugin.IsStaged(s.Name); staged && source == plan.SourceBuiltin {
		return el.stages(list, s, action, index, lane, id, label)
	}
	if p, ok := plugin.Lookup(s.Name); ok && source == plan.SourceBuiltin {
		if e := b.f.EntryErrs[EntryCheckKey(cp.info.Dir, s)]; e != "" && action == plugin.ActionDeploy {
			for _, line := range strings.Split(e, "\n") {
				b.diags.Errorf(cp.entryPos(s), "", "component %s: plugin %s: %s", name, s.Title(), line)
			}
			return nil, nil
		}
		if pl, ok := p.(plugin.Planned); ok {
			does, err := pl.PlanEntry(action, s)
			if err != nil {
				pos, field := cp.pos, ""
				var pe *plugin.PositionedError
				if errors.As(err, &pe) && pe.Pos.File != "" {
					pos, field = pe.Pos, pe.Field
				}
				b.diags.Errorf(pos, field, "component %s: %v", name, err)
				return nil, nil
			}
			if !does {
				return nil, nil
			}
		}
		if l, ok := p.(plugin.Labeled); ok {
			label = l.EntryLabel(action, s)
		}
	}
	if s.Label != "" {
		label = s.Label
	}
	spec := plan.Entry{Component: name, Action: action, List: list, Index: index, Plugin: s.Name, Key: s.Key,
		Args: b.maskAll(s.Args), Source: source, OnFail: s.OnFail}
	if spec.Kind() == plan.KindPlugin {
		spec.Limits = el.limits
	}
	n := el.add(&plan.Node{ID: id, Kind: spec.Kind(), Label: b.in.Mask(label), Listed: true, Quiet: s.Hidden, Lane: lane,
		Inputs: []string{cp.begin, el.verbID}, Spec: spec})
	*el.added = append(*el.added, n.ID)
	return []string{n.ID}, []string{n.ID}
}

func (b *builder) maskAll(l []string) []string {
	if len(l) == 0 {
		return nil
	}
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = b.in.Mask(s)
	}
	return out
}

func appendIndex(index []int, i int) []int {
	return append(append(make([]int, 0, len(index)+1), index...), i)
}

func joinIndex(index []int) string {
	parts := make([]string, len(index))
	for i, x := range index {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ".")
}

// stepID numbers the steps of an injection point.
func stepID(prefix, point string, i int) string {
	return prefix + "/" + point + "/" + strconv.Itoa(i)
}

func stepLabel(st *manifest.Step) string {
	if st.Label != "" {
		return st.Label
	}
	return st.Describe()
}

// stepSpec is an injected step as plan data.
func stepSpec(st *manifest.Step) plan.Step {
	return plan.Step{Type: string(st.Type), Label: st.Label, OnFail: st.OnFail, Args: st.Args, Plugin: st.Plugin, Action: st.Action,
		Arguments: st.Params, Message: st.Message, Seconds: st.Seconds, Logfile: st.Logfile, Limits: StepLimits(st)}
}

func readyLabel(conds []manifest.ReadyCondition) string {
	var parts []string
	for _, c := range conds {
		if c.PauseSeconds > 0 {
			parts = append(parts, fmt.Sprintf("pause %ds", c.PauseSeconds))
		}
		if c.DNS != "" {
			parts = append(parts, "dns "+c.DNS)
		}
		if c.URL != "" {
			parts = append(parts, c.URL)
		}
	}
	return "ready: " + strings.Join(parts, ", ")
}

func readyConditions(conds []manifest.ReadyCondition) []plan.ReadyCondition {
	out := make([]plan.ReadyCondition, len(conds))
	for i, c := range conds {
		out[i] = plan.ReadyCondition{URL: c.URL, DNS: c.DNS, Wait: c.WaitSeconds, Pause: c.PauseSeconds}
	}
	return out
}

// predictAction says what the run will do to a component, for the plan,
// and for a deploy how the component differs from its last deploy.
func (b *builder) predictAction(cp *compPlan) (string, string) {
	info, rec := cp.info, cp.recorded
	switch {
	case info.ReadOnly:
		return info.Verb, ""
	case info.Orphan:
		return "teardown-orphan", "in the state, no longer in the stack" + b.outsideNote(cp)
	case info.Verb == plan.VerbUndeploy:
		switch {
		case rec == nil || rec.Status == state.StatusUndeployed || rec.Status == state.StatusSkipped:
			return "skip", "not deployed"
		case NeverRan(rec):
			// As its begin says when the run comes to it.
			return "skip", ReasonNeverRan
		}
		if info.FromState {
			// Torn down as any component (docs/lifecycle.md), but not
			// one the manifest lists: say so, as a deploy's orphans do.
			return plan.VerbUndeploy, "in the state, no longer in the stack" + b.outsideNote(cp)
		}
		return plan.VerbUndeploy, strings.TrimPrefix(b.outsideNote(cp), "; ")
	}
	if why := b.skippedByDesign(cp); why != "" {
		// As its begin will say.
		info.SkippedByDesign = true
		return "skip", why
	}
	switch {
	case rec != nil && rec.Status == state.StatusDeployed:
		var reads runReads
		info.Change, reads = b.predictChange(cp)
		unchanged := info.Change != nil && info.Change.Status == plan.ChangeUnchanged
		switch {
		case info.Resume && unchanged && !info.ForceReplace:
			running := b.unsettledAfter(info)
			// Outputs its last deploy read of components it does not come
			// after (a name a Go template computed): one this run deploys
			// may change them before it begins, or after.
			var others []string
			for _, c := range reads.outputsOf {
				if !b.selectedSet[c] || slices.Contains(info.After, c) {
					continue
				}
				// One prepared before it is known settled or not; one
				// after it (no edge orders them) is not known yet.
				if dep := b.byName[c]; dep == nil || !dep.info.Settled {
					others = append(others, c)
				}
			}
			info.Settled = !reads.provides && len(running) == 0 && len(others) == 0
			if !info.Settled {
				// Unchanged with what is known now; the run looks again
				// once what it reads is there (and may redeploy it).
				return "unchanged", unsettledReason(running, others)
			}
			return "unchanged", ""
		case info.ForceReplace && info.Change != nil:
			return "redeploy", "force_replace; " + info.Change.String()
		case info.ForceReplace:
			return "redeploy", "force_replace"
		}
		return "redeploy", info.Change.String()
	}
	if info.Verb != plan.VerbDeploy {
		return plan.VerbDeploy, ""
	}
	info.Change = &plan.Change{Status: plan.ChangeNew}
	switch {
	case rec != nil && rec.Status == state.StatusUndeployed:
		// Deployed once: "new" would say it never was.
		return plan.VerbDeploy, "not deployed: undeployed by its last run"
	case rec != nil && rec.Status != "":
		return plan.VerbDeploy, "not deployed: its last run left it " + rec.Status
	}
	return plan.VerbDeploy, plan.ChangeNew
}

// predictChange computes the component's fingerprint with the outputs the
// state knows, and when it differs from the recorded one, what changed;
// the run computes it again with the outputs it produces. nil when it
// cannot tell (the folder cannot be read, a parameter does not expand).
// reads says what its values read that the run may change before it
// begins.
func (b *builder) predictChange(cp *compPlan) (change *plan.Change, reads runReads) {
	info := cp.info
	if cp.c == nil {
		return nil, runReads{}
	}
	if e := cp.evaluated; e != nil && e.predicted {
		return e.change, e.reads
	}
	change, reads, _ = b.changeOf(cp, b.in.Locked, b.hubProvidesFor(info.Name), info.FingerprintExclude)
	return change, reads
}

// runReads are what a component's values read that a run may change
// before it begins: hub.provides (provides), and the outputs of other
// components its last deploy read (outputsOf, the fingerprint has those
// of the components it comes after).
type runReads struct {
	provides  bool
	outputsOf []string
}

// changeOf is predictChange with the locked parameters, hub.provides and
// the fingerprint's exclusions given; expandFailed says the parameters did
// not expand.
func (b *builder) changeOf(cp *compPlan, locked *params.Locked, provides string, exclude []string) (change *plan.Change, reads runReads, expandFailed bool) {
	info := cp.info
	exp, diags := b.expand(cp, locked, b.outputs, provides)
	if diags.HasErrors() {
		return nil, runReads{}, true
	}
	dir := b.f.DirSums[component.DirKey(info.Dir, exclude, info.FingerprintReads)]
	if dir == nil || dir.Sum == "" {
		return nil, runReads{}, false
	}
	upstream := make(map[string]map[string]string, len(info.After))
	for _, d := range info.After {
		upstream[d] = b.outputs.Values(d)
	}
	var changed []plan.ChangeDetail
	if in := cp.recorded.Inputs; in != nil {
		// Before ReadsProvides is asked: reading hub.provides again marks
		// the expansion as reading it.
		changed, reads.outputsOf = ReadChanges(locked.DeploymentID, in.Reads, exp)
	}
	reads.provides = exp.ReadsProvides()
	if component.Fingerprint(info.Verb, dir.Sum, info.EntryLifecycle, exp, upstream) == cp.recorded.Fingerprint && len(changed) == 0 {
		return &plan.Change{Status: plan.ChangeUnchanged}, reads, false
	}
	now := Inputs(info.Verb, locked.DeploymentID, info.EntryLifecycle, dir, upstream)
	details := append(Changes(cp.recorded, exp, now), changed...)
	return &plan.Change{Status: plan.ChangeChanged, Details: details}, reads, false
}

// outsideRun reports whether name is a component of the stack this run
// leaves out (-o, -c, -l): a value read from its outputs before it was ever
// deployed is never known (checkParameters).
func (b *builder) outsideRun(name string) bool {
	return !b.selectedSet[name] && b.res.Component(name) != nil
}

// unsettledAfter are the components of a component's After that are not
// settled: they run first, and the outputs it reads from them may be others
// than the state holds when it begins. Components are prepared in run
// order, so those of After are prepared already.
func (b *builder) unsettledAfter(info *plan.Component) []string {
	var running []string
	for _, d := range info.After {
		if dep := b.byName[d]; dep != nil && !dep.info.Settled {
			running = append(running, d)
		}
	}
	return running
}

// unsettledReason says why an unchanged component of a resumed run is
// looked at again when it runs: what it comes after runs first, or it reads
// hub.provides, which the run may change.
func unsettledReason(running, others []string) string {
	switch {
	case len(running) > 0:
		return "so far: looked at again after " + strings.Join(running, ", ") + " ran, whose outputs may change it"
	case len(others) > 0:
		return "so far: looked at again when it runs, as it read outputs of " + strings.Join(others, ", ") + ", which this run deploys"
	}
	return "so far: looked at again when it runs, as it reads hub.provides"
}

// pluginSource is where a plugin of the component's lists comes from.
func (b *builder) pluginSource(cp *compPlan, name string) string {
	if src, ok := b.f.Plugins[PluginKey{cp.info.Dir, name}]; ok {
		return src.Source
	}
	return ""
}
