package landscape

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/manifest"
)

// loaded are the landscapes this process opened, by root: the plugin-list
// entries of a run use the landscape its plan was built from.
var loaded sync.Map

// Load opens the landscape at path (its folder or its acre.yaml) and
// returns it as an elaborated stack: one component per active sow
// component, named as sow names it, depending on what it imports, its
// plugin lists made of the steps of seed 002's processing chain.
func Load(ctx context.Context, path string, opts Options) (*elaborate.Result, manifest.Diagnostics) {
	root, ok := IsLandscape(path)
	if !ok {
		var d manifest.Diagnostics
		d.Errorf(manifest.Pos{File: path}, "", "not a sow landscape: expected a folder holding acre.yaml and crop/, or that acre.yaml")
		return nil, d
	}
	l, diags := Open(ctx, root, opts)
	if l == nil {
		return nil, diags
	}
	if !opts.Graph {
		for _, c := range l.Components {
			// Only where one of the two is there: a first deploy that
			// failed has neither, and gantry's state says it failed.
			if file, why := l.recordsIncomplete(c); file != "" && c.Active && c.Plan != nil &&
				(l.view.isFile(filepath.Join(l.StateDir(c.Name), stateInfo)) || l.view.isFile(filepath.Join(l.ExportDir(c.Name), exportFile))) {
				diags.Warnf(manifest.Pos{File: file}, "", "component %s: sow's records do not say it is deployed (%s): a deploy runs it again, --resume included", c.Name, why)
			}
		}
	}
	res := l.Result()
	l.detachView()
	if !opts.Graph {
		loaded.Store(root, l)
	}
	return res, diags
}

// detachView is the view the landscape's plan read sow's records through,
// taken off it: from now on the landscape's steps read the folder as the
// run changes it, and the plan's last reads (elaborate.Result.OwnRecords)
// and a worker's (Result.Records) keep to the view.
func (l *Landscape) detachView() *recordView {
	v := l.view
	l.view = nil
	return v
}

// lookup returns the landscape at root, opening it when this process has
// not.
func lookup(ctx context.Context, root string) (*Landscape, error) {
	if l, ok := loaded.Load(root); ok {
		return l.(*Landscape), nil
	}
	l, diags := Open(ctx, root, Options{})
	if l == nil {
		return nil, diags.Err()
	}
	l.detachView()
	loaded.Store(root, l)
	return l, nil
}

// Result is the landscape as an elaborated stack.
func (l *Landscape) Result() *elaborate.Result {
	acre := filepath.Join(l.Root, AcreFile)
	st := &manifest.Stack{
		Pos: manifest.Pos{File: acre, Line: 1, Col: 1}, File: acre, Version: 1, Kind: "stack",
		Meta: manifest.Meta{Name: filepath.Base(l.Root)},
	}
	st.Meta.InstallationHandler = l.Handler
	res := &elaborate.Result{Stack: st, Dir: l.Root, SourceDirs: []string{l.RootProductDir()}, Files: []string{acre},
		ProductDirs: map[string]string{}, TemplateDirs: map[string][]string{}, DeployedVersions: map[string]string{}}
	// The plan's last reads of the records keep to the view it was made
	// with (detachView).
	view := l.view
	res.OwnRecords = func(name string) (string, bool) { return l.ownRecords(view, name) }
	res.Records = view.encode
	for _, c := range l.Components {
		if !c.Active {
			continue
		}
		ref := manifest.ComponentRef{Pos: manifest.Pos{File: c.File, Line: 1, Col: 1}, Name: c.Name, Source: manifest.Source{Dir: c.Dir}, Item: len(st.Components)}
		for _, im := range c.Imports {
			ref.Depends = append(ref.Depends, im.Component)
		}
		st.Components = append(st.Components, ref)
		res.ProductDirs[c.Name] = c.Product.Dir
		for _, t := range c.Chain {
			res.TemplateDirs[c.Name] = append(res.TemplateDirs[c.Name], t.Dir)
		}
		if c.DeployedVersion != "" {
			res.DeployedVersions[c.Name] = c.DeployedVersion
		}
		mc := &manifest.Component{
			Pos: ref.Pos, File: c.File, Dir: c.Dir, Version: 1, Kind: "component",
			Meta: manifest.ComponentMeta{Name: c.Name}, Generated: true,
		}
		if c.Plan != nil {
			mc.Plugins = []manifest.PluginEntry{{Pos: ref.Pos, Name: "pinned", Children: l.entries(c, ref.Pos)}}
			// Secret: it is derived from the configuration, which may hold
			// secrets; displays mask it.
			secret := true
			mc.Parameters = []manifest.Parameter{{Pos: ref.Pos, Name: InputsParameter, Value: manifest.Scalar(l.inputsDigest(c)),
				Brief: "digest of what the component's files are evaluated with (configuration, templates, stubs, plugins, spec version)", Secret: &secret}}
			// sow's records no longer say it is deployed (its exports were
			// deleted): --resume does not skip it. Not part of its
			// fingerprint, which the deploy records as the plan saw it.
			if file, _ := l.recordsIncomplete(c); file != "" {
				replace := true
				mc.Lifecycle.ForceReplace = &replace
			}
		}
		res.Components = append(res.Components, mc)
		res.Files = append(res.Files, c.File)
	}
	return res
}

// entries are a component's plugin list, one entry per step, in sow's
// order for a deploy (pinned: a delete takes the same way, each entry
// doing its delete part): the setup plugins' prepare, the deployment
// manifest, the action script's delete function, the manifest's plugins
// (reversed on delete), the vanished instances, the action script's
// deploy function, the setup plugins' cleanup, the exports.
func (l *Landscape) entries(c *Component, pos manifest.Pos) []manifest.PluginEntry {
	base := config{Landscape: l.Root, Component: c.Name}
	entry := func(name string, cfg config) manifest.PluginEntry {
		return manifest.PluginEntry{Pos: pos, Name: name, Object: true, Config: asConfig(cfg)}
	}
	// leaf makes the step of a plugin in a list (listEntries), with cfg.
	leaf := func(name string, cfg config) func([]int, *shape) manifest.PluginEntry {
		return func(at []int, s *shape) manifest.PluginEntry {
			cfg.At, cfg.Name, cfg.Key = at, s.Name, s.Key
			e := entry(name, cfg)
			e.Hidden = s.Hidden
			return e
		}
	}
	p := c.Plan
	if p.Unknown != nil {
		return []manifest.PluginEntry{entry(EntryUnplanned, base)}
	}
	setup := func(phase string) []manifest.PluginEntry {
		cfg := base
		cfg.Phase = phase
		// sow's prepare and cleanup never reverse a list: unpinned in
		// component.plugins keeps its order.
		return l.listEntries(p.Setup, nil, pos, leaf(EntrySetup, cfg), true)
	}
	var out []manifest.PluginEntry
	out = append(out, setup("prepare")...)
	dep := base
	dep.Shape = p.List
	out = append(out, entry(EntryDeployment, dep))
	if p.Actions {
		a := base
		a.Function = "delete"
		out = append(out, entry(EntryAction, a))
	}
	list := l.listEntries(p.List, nil, pos, leaf(EntryPlugin, base), false)
	if len(list) > 0 {
		// The manifest's list runs backwards on delete: unpinned.
		out = append(out, manifest.PluginEntry{Pos: pos, Name: "unpinned", Children: list})
	}
	reg := loadRegistry(l.view, l.StateDir(c.Name))
	for _, k := range p.Vanished {
		v := base
		v.Key = k
		spec, _ := reg.Plugins[k].(map[string]any)
		v.Name, v.Hidden = plainName(str(spec["name"]))
		out = append(out, entry(EntryVanished, v))
	}
	if p.Actions {
		a := base
		a.Function = "deploy"
		out = append(out, entry(EntryAction, a))
	}
	out = append(out, setup("cleanup")...)
	out = append(out, entry(EntryExport, base))
	return out
}

// listEntries maps a list's shape onto plan entries: pinned, unpinned and
// parallel stay what they are (pinned in place of unpinned when the list
// never reverses), every other entry becomes a step made by leaf.
func (l *Landscape) listEntries(list []*shape, at []int, pos manifest.Pos, leaf func([]int, *shape) manifest.PluginEntry, noReverse bool) []manifest.PluginEntry {
	out := make([]manifest.PluginEntry, 0, len(list))
	for i, s := range list {
		here := append(append([]int(nil), at...), i)
		if isControl(s.Name) {
			name := s.Name
			if noReverse && name == "unpinned" {
				name = "pinned"
			}
			out = append(out, manifest.PluginEntry{Pos: pos, Name: name, Hidden: s.Hidden,
				Children: l.listEntries(s.Children, here, pos, leaf, noReverse)})
			continue
		}
		out = append(out, leaf(here, s))
	}
	return out
}
