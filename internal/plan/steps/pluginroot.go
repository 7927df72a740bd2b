package steps

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plugin"
	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/workspace"
)

// pluginRoots are the components' plugin data folders a run has worked out
// (workspace.PluginRoot), each once.
type pluginRoots struct {
	mu   sync.Mutex
	dirs map[string]string
	// keepers are the components of the plan with an entry whose plugin
	// keeps data (entryKeepsData), in the plan's order; found once.
	keepersOnce sync.Once
	keepers     []string
	keeps       map[string]bool
}

// dataKeepers are the components of the plan with an entry whose plugin
// keeps data in the component's plugin data folder, in the plan's order
// (orphans too).
func (rt *Runtime) dataKeepers() []string {
	rt.roots.keepersOnce.Do(func() {
		rt.roots.keeps = map[string]bool{}
		for _, n := range rt.Plan.Nodes {
			if e, ok := n.Spec.(plan.Entry); ok && !rt.roots.keeps[e.Component] && entryKeepsData(e) {
				rt.roots.keeps[e.Component] = true
				rt.roots.keepers = append(rt.roots.keepers, e.Component)
			}
		}
	})
	return rt.roots.keepers
}

// keepsData reports whether a component is one of dataKeepers.
func (rt *Runtime) keepsData(component string) bool {
	rt.dataKeepers()
	return rt.roots.keeps[component]
}

// pluginRoot is the folder of a component's plugin data for this run's
// deployment, created and marked the first time an instance of the run
// needs it (a read-only run only looks); what was decided goes to the
// step's log.
func (rt *Runtime) pluginRoot(ctx context.Context, env plan.Env, info *plan.Component) (string, error) {
	rt.roots.mu.Lock()
	defer rt.roots.mu.Unlock()
	if dir, ok := rt.roots.dirs[info.Name]; ok {
		return dir, nil
	}
	req := rt.pluginRootRequest(info)
	if env != nil {
		req.Waiting = func(msg string) { env.Logf("%s", msg) }
	}
	dir, note, err := rt.Dirs.PluginRoot(ctx, req)
	if err != nil {
		return "", err
	}
	if note != "" && env != nil {
		env.Logf("%s", note)
	}
	if rt.roots.dirs == nil {
		rt.roots.dirs = map[string]string{}
	}
	rt.roots.dirs[info.Name] = dir
	return dir, nil
}

// pluginRootRequest asks for the component's plugin data folder.
func (rt *Runtime) pluginRootRequest(info *plan.Component) workspace.PluginRootRequest {
	req := workspace.PluginRootRequest{Component: info.Name, Run: rt.owner(), ReadOnly: info.ReadOnly}
	if c := rt.recorded(info.Name); c != nil {
		req.Recorded = len(c.Plugins) > 0 || len(c.SetupPlugins) > 0
	}
	return req
}

// PluginDataRefusals are the refusals the plan's components would meet when
// their plugins first ask for their data folders (workspace.PluginRoot: a
// folder an earlier gantry left unmarked that this state cannot claim),
// all of them, found before anything runs: met at the plugin step, they
// failed a run midway, after the components before had changed the world.
// The steps decide again, under the workspace's lock.
//
// A deployment whose state does not record its id yet (a first deploy) is
// not checked: a refusal's "adopt it" names the folder by that id, which
// would be another one at the next run; its component is refused when
// its lists are prepared (prepareLists), once the run's start has recorded
// the id, and before the lists are.
func (rt *Runtime) PluginDataRefusals() error {
	if rt.Before == nil || rt.Locked == nil || rt.Before.DeploymentID == "" || rt.Before.DeploymentID != rt.Locked.DeploymentID {
		return nil
	}
	var errs []error
	for _, name := range rt.dataKeepers() {
		info := rt.Plan.Components[name]
		if info == nil || info.ReadOnly || rt.maySkip(name) {
			continue
		}
		if err := rt.Dirs.PluginRootRefusal(rt.pluginRootRequest(info)); err != nil {
			errs = append(errs, fmt.Errorf("component %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// maySkip reports whether the component's begin may skip or fail it before
// its plugins ask for their folder: a requirement of seed 000 that is not
// met by what the run knows at its start (a tuning parameter set false, a
// capability no deployed component provides yet — one the run deploys may
// provide it). Its plugin step decides then.
func (rt *Runtime) maySkip(name string) bool {
	c := rt.Res.Component(name)
	if c == nil {
		return false
	}
	_, stop := rt.checkRequirements(name, c)
	return stop
}

// entryKeepsData reports whether an entry's plugin keeps data in its instance's
// folder (STATEDIR) under the component's plugin data folder: an
// executable plugin (sow's contract gives every instance one) or a
// built-in that says so (plugin.DataKeeper).
func entryKeepsData(e plan.Entry) bool {
	if e.Source != plan.SourceBuiltin {
		return true
	}
	p, ok := plugin.Lookup(e.Plugin)
	_, keeps := p.(plugin.DataKeeper)
	return ok && keeps
}

// owner is the deployment this run is for, as plugin data folders name it.
func (rt *Runtime) owner() workspace.Owner {
	o := workspace.Owner{Key: rt.StateKey, Location: state.Redact(rt.StateLocation)}
	if rt.Locked != nil {
		o.ID = rt.Locked.DeploymentID
	}
	if o.Location == "" {
		o.Location = rt.StatePath
	}
	if o.Key == "" {
		o.Key = rt.StatePath
	}
	return o
}
