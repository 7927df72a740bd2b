package build

import (
	"strings"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plugin"
)

// objectOutputs are a component's outputs read from objects in the cluster
// (fromObject).
func objectOutputs(c *manifest.Component) []manifest.Output {
	if c == nil {
		return nil
	}
	var out []manifest.Output
	for _, o := range c.Outputs {
		if o.FromObject != nil {
			out = append(out, o)
		}
	}
	return out
}

// outputsReader picks the instance that reads a deploy's object outputs,
// with the cluster connection its prepare stage opened: the last built-in
// staged instance (kubernetes, helm) of the component's list, in list
// order. nil when the list has none; the component's outputs then
// cannot be read, which is an error.
func (b *builder) outputsReader(cp *compPlan) *plugin.Spec {
	if len(objectOutputs(cp.c)) == 0 {
		return nil
	}
	var last *plugin.Spec
	var walk func(specs []*plugin.Spec)
	walk = func(specs []*plugin.Spec) {
		for _, s := range specs {
			if s.IsControl() {
				walk(s.Children)
				continue
			}
			if _, ok := plugin.IsStaged(s.Name); ok && b.pluginSource(cp, s.Name) == plan.SourceBuiltin {
				last = s
			}
		}
	}
	if cp.info.Plugins {
		walk(cp.plugins)
	}
	if last == nil {
		for i, o := range cp.c.Outputs {
			if o.FromObject == nil {
				continue
			}
			b.diags.Errorf(o.FromObject.Pos, manifest.ItemPath("outputs", i)+".fromObject",
				"component %s: output %s reads %s/%s from the cluster, but nothing in the component deploys to a cluster: fromObject needs a kubernetes or helm plugin in its plugins list, or a chart or kustomization in its folder",
				cp.info.Name, o.Name, o.FromObject.Kind, o.FromObject.Name)
		}
	}
	return last
}

// readerStep is what the outputs stage takes from the reader's first
// stage.
type readerStep struct {
	// id is the instance's step id prefix; prepare its first stage, whose
	// result the outputs stage reads.
	id, prepare string
	spec        plan.Entry
	lane, label string
}

// outputsStep adds the stage that reads the component's object outputs,
// after every entry of the deploy's list (all branches of a parallel): the
// objects it reads may come from any of them. It runs as a stage of the
// reader, with what the reader's prepare stage read.
func (el *entryLists) outputsStep() (first, last []string) {
	rs := el.readerStep
	if rs.prepare == "" {
		return nil, nil
	}
	b, cp := el.b, el.cp
	st := b.outputsStage(cp)
	spec := rs.spec
	spec.Stage, spec.Objects, spec.Stages = st.ID, st.Objects, nil
	n := el.add(&plan.Node{ID: rs.id + "/" + st.ID, Kind: spec.Kind(), Label: b.in.Mask(rs.label + ": " + st.Label), Listed: true,
		Lane: rs.lane, Inputs: []string{cp.begin, el.verbID, rs.prepare}, Spec: spec})
	*el.added = append(*el.added, n.ID)
	return []string{n.ID}, []string{n.ID}
}

// outputsStage is the stage that reads the component's object outputs.
func (b *builder) outputsStage(cp *compPlan) plugin.Stage {
	outs := objectOutputs(cp.c)
	names := make([]string, len(outs))
	objects := make([]string, 0, len(outs))
	seen := map[string]bool{}
	for i, o := range outs {
		names[i] = o.Name
		ref := o.FromObject.Kind + "/" + o.FromObject.Name
		if o.FromObject.Namespace != "" {
			ref = o.FromObject.Namespace + "/" + ref
		}
		if !seen[ref] {
			seen[ref] = true
			objects = append(objects, b.in.Mask(ref))
		}
	}
	return plugin.Stage{ID: plugin.StageOutputs, Label: "read outputs " + strings.Join(names, ", ") + " from the cluster", Objects: objects}
}
