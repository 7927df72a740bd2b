package landscape

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/manifest"
)

// The entries each landscape component's plugin list is made of: the steps
// of seed 002's processing chain. They are pinned: a delete evaluates the
// deployment again before it runs the plugins backwards, as sow does.
const (
	EntrySetup      = "sow.setup"
	EntryDeployment = "sow.deployment"
	EntryPlugins    = "sow.plugins"
	EntryExport     = "sow.export"
)

// loaded are the landscapes this process opened, by root: the plugin-list
// entries of a run use the landscape its plan was built from.
var loaded sync.Map

// Load opens the landscape at path (its folder or its acre.yaml) and
// returns it as an elaborated stack: one component per active sow
// component, named as sow names it, depending on what it imports.
func Load(ctx context.Context, path string) (*elaborate.Result, manifest.Diagnostics) {
	root, ok := IsLandscape(path)
	if !ok {
		var d manifest.Diagnostics
		d.Errorf(manifest.Pos{File: path}, "", "not a sow landscape: expected a folder holding acre.yaml and crop/, or that acre.yaml")
		return nil, d
	}
	l, diags := Open(ctx, root)
	if l == nil {
		return nil, diags
	}
	loaded.Store(root, l)
	return l.Result(), diags
}

// lookup returns the landscape at root, opening it when this process has
// not (a state recorded it in another run).
func lookup(ctx context.Context, root string) (*Landscape, error) {
	if l, ok := loaded.Load(root); ok {
		return l.(*Landscape), nil
	}
	l, diags := Open(ctx, root)
	if l == nil {
		return nil, diags.Err()
	}
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
	res := &elaborate.Result{Stack: st, Dir: l.Root, SourceDirs: []string{l.RootProductDir()}, Files: []string{acre}}
	for _, c := range l.Components {
		if !c.Active {
			continue
		}
		ref := manifest.ComponentRef{Pos: manifest.Pos{File: c.File, Line: 1, Col: 1}, Name: c.Name, Source: manifest.Source{Dir: c.Dir}}
		for _, im := range c.Imports {
			ref.Depends = append(ref.Depends, im.Component)
		}
		st.Components = append(st.Components, ref)
		cfg := map[string]any{"landscape": l.Root, "component": c.Name}
		entry := func(name string) manifest.PluginEntry {
			return manifest.PluginEntry{Pos: ref.Pos, Name: name, Object: true, Config: cfg}
		}
		mc := &manifest.Component{
			Pos: ref.Pos, File: c.File, Dir: c.Dir, Version: 1, Kind: "component",
			Meta: manifest.ComponentMeta{Name: c.Name},
			Plugins: []manifest.PluginEntry{{Pos: ref.Pos, Name: "pinned", Children: []manifest.PluginEntry{
				entry(EntryDeployment), entry(EntryPlugins), entry(EntryExport)}}},
		}
		if len(c.Setup) > 0 {
			mc.SetupPlugins = []manifest.PluginEntry{entry(EntrySetup)}
		}
		res.Components = append(res.Components, mc)
		res.Files = append(res.Files, c.File)
	}
	return res
}
