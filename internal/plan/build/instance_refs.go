package build

import (
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plugin"
)

// instanceReader reads what components' built-in staged plugin instances
// read from their files (the kubernetes plugin's manifests and
// kustomization, plugin.Referencing), for the graph: an output of another
// component they expand orders the component after it, as a parameter
// reading it does. Each folder is probed and each instance (folder and
// entry) read once: the components of a stack of thousands share a few
// folders, and a kustomize build takes milliseconds.
type instanceReader struct {
	probe func(dir string) string
	read  map[StagesKey][]params.Part
}

func newInstanceReader() *instanceReader {
	return &instanceReader{probe: implementationProbe(), read: map[StagesKey][]params.Part{}}
}

// refs are the references component c's instances read. The instances are
// those of its plugin list, or, without one, the kubernetes plugin a folder
// holding a kustomization stands for; not its setup plugins', which are not
// applied (a staged plugin has no prepare or cleanup step). dir is the
// component's folder, absolute.
func (ir *instanceReader) refs(c *manifest.Component, dir string) []params.Part {
	specs := plugin.Specs(c.Plugins)
	if len(specs) == 0 {
		if len(c.SetupPlugins) > 0 || c.Lifecycle.Bare == manifest.EmptyAllow || ir.probe(dir) != component.ImplKubernetes {
			return nil
		}
		specs = KubernetesList()
	}
	var out []params.Part
	var walk func(specs []*plugin.Spec)
	walk = func(specs []*plugin.Spec) {
		for _, s := range specs {
			if s.IsControl() {
				walk(s.Children)
				continue
			}
			staged, ok := plugin.IsStaged(s.Name)
			if !ok {
				continue
			}
			r, ok := staged.(plugin.Referencing)
			if !ok {
				continue
			}
			k := StagesKeyOf(dir, plugin.ActionDeploy, s, nil)
			read, done := ir.read[k]
			if !done {
				read = r.InputRefs(plugin.StagesRequest{Component: c.Meta.Name, Dir: dir, Entry: s,
					Action: plugin.ActionDeploy, Templates: c.Templates, Parameters: c.Parameters})
				ir.read[k] = read
			}
			out = append(out, read...)
		}
	}
	walk(specs)
	return out
}

// appendEntryTexts appends the strings of plugin entries' arguments and
// configs (their children's too), which are expanded when the entries run.
func appendEntryTexts(texts []string, specs []*plugin.Spec) []string {
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			texts = append(texts, x)
		case map[string]any:
			// In the order of the keys: an edge's reasons in the same
			// order every time.
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(x[k])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	for _, s := range specs {
		texts = append(texts, s.Args...)
		walk(s.Config)
		texts = appendEntryTexts(texts, s.Children)
	}
	return texts
}

// implementationProbe probes folders for how they deploy, each once: the
// graph needs to know only which of the components without plugin lists a
// kustomization deploys, and the stacks of thousands share a few folders.
// A folder without a kustomization.yaml is not probed further: a stat,
// where the probe reads its Makefiles.
func implementationProbe() func(dir string) string {
	kinds := map[string]string{}
	return func(dir string) string {
		kind, done := kinds[dir]
		if !done {
			if _, err := os.Stat(filepath.Join(dir, "kustomization.yaml")); err == nil {
				if impl, err := component.Probe(dir, plan.VerbDeploy); err == nil && impl != nil {
					kind = impl.Kind
				}
			}
			kinds[dir] = kind
		}
		return kind
	}
}

// absDirs makes components' folders absolute, as the plan's facts name
// them, against the working folder read once: filepath.Abs reads it for
// every call (two stats), 5 % of a 10,000-component plan.
func absDirs() func(dir string) string {
	wd, err := os.Getwd()
	return func(dir string) string {
		if filepath.IsAbs(dir) {
			return filepath.Clean(dir)
		}
		if err != nil {
			return dir
		}
		return filepath.Join(wd, dir)
	}
}
