package build

import (
	"maps"
	"slices"
	"strconv"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plugin"
)

// versions works out the spec versions of a component (sow migrations): its
// product's SPEC-VERSION and the one it was deployed with. A deploy may move
// one version at a time (--force jumps).
func (b *builder) versions(cp *compPlan) {
	info := cp.info
	productDir := b.productDirOf(info.Name)
	v, ok := b.f.SpecVersions[productDir]
	switch {
	case !ok:
		b.diags.Errorf(cp.pos, "", "%s", missing("the SPEC-VERSION of %s", productDir))
		return
	case v.Err != "":
		b.diags.Errorf(cp.pos, "", "component %s: %s", info.Name, v.Err)
		return
	}
	info.ProductDir, info.SpecVersion = productDir, v.Version
	if cp.recorded != nil {
		info.DeployedVersion = cp.recorded.SpecVersion
	}
	// Records kept beside gantry's state (a sow landscape's
	// state/<component>/SPEC-VERSION) are what its plugins read: they win.
	if d, ok := b.res.DeployedVersions[info.Name]; ok {
		info.DeployedVersion = d
	}
	if info.Verb != plan.VerbDeploy || info.SpecVersion == "" || info.DeployedVersion == "" || b.opts.Force {
		return
	}
	to, _ := strconv.Atoi(info.SpecVersion)
	from, _ := strconv.Atoi(info.DeployedVersion)
	switch {
	case to > from+1:
		b.diags.Errorf(cp.pos, "", "component %s was deployed with spec version %d and the stack is now at %d: migrations go one version at a time (deploy the version in between first, or --force)", info.Name, from, to)
	case to < from:
		b.diags.Errorf(cp.pos, "", "component %s was deployed with spec version %d, newer than the stack's %d: refusing to go back (--force overrides)", info.Name, from, to)
	}
}

// lists works out a component's plugin lists and checks them before
// anything runs: every plugin exists, config paths name parameters, and
// references in arguments name something. An undeploy deletes what was
// deployed, as the state recorded it (expanded already), whatever the
// manifest says now.
func (b *builder) lists(cp *compPlan) {
	info, rec := cp.info, cp.recorded
	info.Plugins = true
	recorded := false
	switch {
	case info.Verb == plan.VerbUndeploy && rec != nil && (len(rec.Plugins) > 0 || len(rec.SetupPlugins) > 0) && (cp.c == nil || !cp.c.Generated):
		cp.plugins, cp.setup = plugin.FromRecord(rec.Plugins), plugin.FromRecord(rec.SetupPlugins)
		info.Lists, recorded = plan.ListsRecorded, true
	case cp.c != nil:
		cp.plugins, cp.setup = plugin.Specs(cp.c.Plugins), plugin.Specs(cp.c.SetupPlugins)
		info.Lists = plan.ListsManifest
	}
	var check func(specs []*plugin.Spec)
	check = func(specs []*plugin.Spec) {
		for _, s := range specs {
			if s.IsControl() {
				check(s.Children)
				continue
			}
			at := cp.entryPos(s)
			src, ok := b.f.Plugins[PluginKey{info.Dir, s.Name}]
			switch {
			case !ok:
				b.diags.Errorf(at, "", "%s", missing("where plugin %s of %s comes from", s.Name, info.Name))
			case src.Err != "":
				b.diags.Errorf(at, "", "component %s: %s", info.Name, src.Err)
			}
			if s.Path != "" && s.Config == nil && cp.c != nil && !hasParameter(cp.c, s.Path) {
				b.diags.Errorf(at, "", "component %s: plugin %s: config path %q names no parameter of the component", info.Name, s.Name, s.Path)
			}
		}
	}
	check(cp.plugins)
	check(cp.setup)
	if info.Verb == plan.VerbDeploy && cp.c != nil && !recorded && !cp.c.Generated {
		b.checkArgumentRefs(cp, cp.plugins)
		b.checkArgumentRefs(cp, cp.setup)
	}
}

// checkArgumentRefs checks that the ${...} references in plugin arguments
// and configs name something the component can see.
func (b *builder) checkArgumentRefs(cp *compPlan, specs []*plugin.Spec) {
	known := b.knownNames(cp.c)
	name := cp.info.Name
	var refs func(at manifest.Pos, v any)
	refs = func(at manifest.Pos, v any) {
		switch x := v.(type) {
		case string:
			t, err := params.Parse(x)
			if err == nil {
				err = t.Check() // its expressions compile
			}
			if err != nil {
				b.diags.Errorf(at, "", "component %s: plugin argument %q: %v", name, x, err)
				return
			}
			for _, r := range t.Refs() {
				if r.Component != "" {
					continue
				}
				if msg := b.refProblem(r, "", cp.c, known); msg != "" {
					b.diags.Errorf(at, "", "component %s: plugin argument %q: %s", name, x, msg)
				}
			}
		case map[string]any:
			// In the order of the keys: the same messages every time.
			for _, k := range slices.Sorted(maps.Keys(x)) {
				refs(at, x[k])
			}
		case []any:
			for _, e := range x {
				refs(at, e)
			}
		}
	}
	for _, s := range specs {
		at := cp.entryPos(s)
		for _, a := range s.Args {
			refs(at, a)
		}
		refs(at, s.Config)
		b.checkArgumentRefs(cp, s.Children)
	}
}

// entryPos is where a plugin entry's problems are told: at the entry in
// the component's manifest, else (a list the state recorded) at the
// component.
func (cp *compPlan) entryPos(s *plugin.Spec) manifest.Pos {
	if s.Pos.File != "" {
		return s.Pos
	}
	return cp.pos
}

func hasParameter(c *manifest.Component, name string) bool {
	for _, p := range c.Parameters {
		if p.Name == name {
			return true
		}
	}
	return false
}

// productDirOf is the absolute folder whose SPEC-VERSION versions a
// component: its product's, else the stack's. The last one is kept: most
// components of a stack share one, and making it absolute again for each
// of 10,000 cost a path join and clean each.
func (b *builder) productDirOf(name string) string {
	dir := b.res.ProductDirs[name]
	if dir == "" {
		dir = b.stackFolder()
	}
	if dir != b.lastProduct[0] {
		b.lastProduct = [2]string{dir, b.f.Abs(dir)}
	}
	return b.lastProduct[1]
}
