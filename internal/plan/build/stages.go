package build

import (
	"encoding/json"
	"strings"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plugin"
	"github.com/gantry-dev/gantry/internal/state"
)

// StagesKey names the stages of one action of a staged plugin's instance
// (the kubernetes plugin): the component's folder, the action, the entry as
// the list gives it and the resources the state recorded for it — what the
// plugin plans the stages from.
type StagesKey struct{ Dir, Action, Entry, Recorded string }

// StagesFact is the stages of an instance's action, or why its inputs could
// not be planned (invalid input).
type StagesFact struct {
	Stages []plugin.Stage
	Err    string
	// Claim is what a deploy of the instance claims that no other
	// component of the stack may (plugin.Claimer); "" for none.
	Claim string
	// Reads are the files outside the component's folder that planning
	// the instance read (plugin.StagesRequest.Read), absolute.
	Reads []string
	// Refs are the ${component:output} references the instance's inputs
	// hold (each once), as the plugin checked them
	// (plugin.StagesRequest.Unknown): the builder checks that their
	// values can be known when the component runs. Deploys only.
	Refs []params.Part
}

// StagesKeyOf is the key of an instance's stages for an action.
func StagesKeyOf(dir, action string, s *plugin.Spec, rec *state.PluginInstance) StagesKey {
	entry, _ := json.Marshal(struct {
		Name, Key, Path string
		Args            []string
		Config          any
	}{s.Name, s.Key, s.Path, s.Args, s.Config})
	var recorded []byte
	if rec != nil {
		recorded, _ = json.Marshal(rec.Resources)
	}
	return StagesKey{Dir: dir, Action: action, Entry: string(entry), Recorded: string(recorded)}
}

// EntryCheckKey is the key of what the plan found wrong with a deploy of a
// list entry of the component in folder dir (Facts.EntryErrs).
func EntryCheckKey(dir string, s *plugin.Spec) StagesKey {
	return StagesKeyOf(dir, "check", s, nil)
}

// RecordedInstance is what the state recorded of a component's instance
// with the key, nil when it has none.
func RecordedInstance(rec *state.Component, key string) *state.PluginInstance {
	if rec == nil || key == "" {
		return nil
	}
	var find func(list []state.PluginInstance) *state.PluginInstance
	find = func(list []state.PluginInstance) *state.PluginInstance {
		for i := range list {
			if list[i].Key == key {
				return &list[i]
			}
			if p := find(list[i].Children); p != nil {
				return p
			}
		}
		return nil
	}
	if p := find(rec.Plugins); p != nil {
		return p
	}
	return find(rec.SetupPlugins)
}

// KubernetesList is the plugin list of a folder holding a kustomization:
// the kubernetes plugin applies what it builds.
func KubernetesList() []*plugin.Spec {
	return []*plugin.Spec{{Name: "kubernetes", Key: "kubernetes", Config: map[string]any{"kustomize": "."}}}
}

// stages adds one step per stage of a staged plugin's instance, one after
// the other: the first prepares the instance and hands what it read to the
// others.
func (el *entryLists) stages(list string, s *plugin.Spec, action string, index []int, lane, id, label string) (first, last []string) {
	b, cp := el.b, el.cp
	name := cp.info.Name
	fact, ok := b.f.Stages[StagesKeyOf(cp.info.Dir, action, s, RecordedInstance(cp.recorded, s.Key))]
	switch {
	case !ok:
		b.diags.Errorf(cp.pos, "", "%s", missing("the stages of %s of %s in %s", action, s.Title(), name))
		return nil, nil
	case fact.Err != "":
		// The plugin reports every problem of the inputs, one a line:
		// each is an error of its own, with the lines of an expression's
		// caret ("  | ") that follow it.
		at := cp.entryPos(s)
		var problems []string
		for _, e := range strings.Split(fact.Err, "\n") {
			switch {
			case strings.HasPrefix(e, "  | ") && len(problems) > 0:
				problems[len(problems)-1] += "\n" + e
			case strings.TrimSpace(e) != "":
				problems = append(problems, strings.TrimSpace(e))
			}
		}
		for _, e := range problems {
			b.diags.Errorf(at, "", "component %s: plugin %s: %s", name, s.Title(), e)
		}
		return nil, nil
	}
	if action == plugin.ActionDeploy {
		b.checkInstanceRefs(cp, s, fact.Refs)
	}
	if action == plugin.ActionPrepare && len(fact.Stages) == 0 {
		// Said once, on prepare: cleanup has nothing to undo.
		b.diags.Warnf(cp.entryPos(s), "", "component %s: setupPlugins: the %s plugin has nothing to do on prepare or cleanup, so this entry applies nothing; list it in plugins to deploy it", name, s.Name)
	}
	if fact.Claim != "" && action == plugin.ActionDeploy && list == plan.ListPlugins {
		b.claim(fact.Claim, name, cp.entryPos(s))
	}
	sts := fact.Stages
	reads := s == el.reader && action == plugin.ActionDeploy && list == plan.ListPlugins
	var prev, prepare string
	for i, st := range sts {
		// Objects are masked as labels are: the prune stage's are read
		// from the state, their names expanded (a secret parameter's
		// value among them).
		stepLabel := label + ": " + st.Label
		if s.Label != "" {
			stepLabel = s.Label + ": " + st.Label
		}
		inputs := []string{cp.begin, el.verbID}
		if i > 0 {
			inputs = append(inputs, prepare)
		}
		spec := plan.Entry{Component: name, Action: action, List: list, Index: index, Plugin: s.Name, Key: s.Key,
			Args: b.maskAll(s.Args), Source: plan.SourceBuiltin, OnFail: s.OnFail, Stage: st.ID, Objects: b.maskAll(st.Objects)}
		if i == 0 {
			for _, later := range sts[1:] {
				spec.Stages = append(spec.Stages, later.ID)
			}
			if reads {
				spec.Stages = append(spec.Stages, plugin.StageOutputs)
			}
		}
		n := el.add(&plan.Node{ID: id + "/" + st.ID, Kind: spec.Kind(), Label: b.in.Mask(stepLabel), Listed: true,
			Quiet: s.Hidden, Lane: lane, Inputs: inputs, Spec: spec})
		*el.added = append(*el.added, n.ID)
		if i == 0 {
			prepare, first = n.ID, []string{n.ID}
			if reads {
				el.readerStep = readerStep{id: id, prepare: n.ID, spec: spec, lane: lane, label: label}
			}
		} else {
			b.connect(prev, n.ID, plan.OnSuccess)
		}
		prev = n.ID
	}
	if prev == "" {
		return nil, nil
	}
	return first, []string{prev}
}

// claimed is a component that claims something, and where (StagesFact.Claim).
type claimed struct {
	component string
	pos       manifest.Pos
}

// claim notes that component claims what, at pos; a second component of
// the stack that claims the same is an error naming both.
func (b *builder) claim(what, component string, pos manifest.Pos) {
	if b.claims == nil {
		b.claims = map[string]claimed{}
	}
	first, dup := b.claims[what]
	if !dup {
		b.claims[what] = claimed{component, pos}
		return
	}
	if first.component == component {
		return
	}
	b.diags.Errorf(pos, "", "component %s: %s is deployed by component %s too (%s): two components cannot deploy one; give one of them another",
		component, what, first.component, first.pos)
}

// checkInstanceRefs refuses the ${component:output} references of a
// plugin instance's inputs (refs) whose values the component can never
// have when it runs: an output of a component this run leaves out and that
// was never deployed. (The graph orders the component after those whose
// outputs its manifests read (instanceRefs); a plain name may also come
// from a depends' printed outputs, which nothing can judge here.)
func (b *builder) checkInstanceRefs(cp *compPlan, s *plugin.Spec, refs []params.Part) {
	for _, r := range refs {
		if c := b.neverKnown(r, false); c != "" {
			b.diags.Errorf(cp.entryPos(s), "", "component %s: plugin %s: %q %s", cp.info.Name, s.Title(), "${"+r.Component+":"+r.Name+"}", neverKnownWhy(c))
		}
	}
}
