package steps

import (
	"context"
	"sync"

	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/workspace"
)

// pluginRoots are the components' plugin data folders a run has worked out
// (workspace.PluginRoot), each once.
type pluginRoots struct {
	mu   sync.Mutex
	dirs map[string]string
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
	req := workspace.PluginRootRequest{Component: info.Name, Run: rt.owner(), ReadOnly: info.ReadOnly}
	if c := rt.recorded(info.Name); c != nil {
		req.Recorded = len(c.Plugins) > 0 || len(c.SetupPlugins) > 0
	}
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
