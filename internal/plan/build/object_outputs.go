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

// outputsReader picks the instance that reads a deploy's object outputs:
// the last built-in staged instance (kubernetes, helm) of the component's
// list, in list order, so that it reads after the component's objects are
// deployed. nil when the list has none; the component's outputs then
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

// outputsStage is the stage the reader adds after its last: it reads the
// component's object outputs.
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
