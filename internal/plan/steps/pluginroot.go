package steps

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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
// needs it; what was decided goes to the step's log.
func (rt *Runtime) pluginRoot(env plan.Env, comp string) (string, error) {
	rt.roots.mu.Lock()
	defer rt.roots.mu.Unlock()
	if dir, ok := rt.roots.dirs[comp]; ok {
		return dir, nil
	}
	req := workspace.PluginRootRequest{
		Component: comp,
		Run:       rt.owner(),
		Default:   rt.DefaultState,
		Gone:      ownerGone,
	}
	if c := rt.recorded(comp); c != nil {
		req.Recorded = len(c.Plugins) > 0 || len(c.SetupPlugins) > 0
	}
	dir, note, err := rt.Dirs.PluginRoot(req)
	if err != nil {
		return "", err
	}
	if note != "" && env != nil {
		env.Logf("%s", note)
	}
	if rt.roots.dirs == nil {
		rt.roots.dirs = map[string]string{}
	}
	rt.roots.dirs[comp] = dir
	return dir, nil
}

// owner is the deployment this run is for, as plugin data folders name it.
func (rt *Runtime) owner() workspace.Owner {
	o := workspace.Owner{Location: state.Redact(rt.StateLocation)}
	if rt.Locked != nil {
		o.ID = rt.Locked.DeploymentID
	}
	if o.Location == "" {
		o.Location = rt.StatePath
	}
	return o
}

// ownerGone says whether the state file a plugin data folder's owner names
// no longer holds that deployment: removed, or made anew (another
// hub.deploymentId). A database, or a file that cannot be read, is taken
// to hold it still: its folder is never taken over on a guess.
func ownerGone(o workspace.Owner) bool {
	if state.IsURL(o.Location) || !filepath.IsAbs(o.Location) {
		return false
	}
	if _, err := os.Lstat(o.Location); errors.Is(err, fs.ErrNotExist) {
		return true
	}
	st, err := state.ReadFile(o.Location)
	if err != nil || st == nil {
		return false
	}
	return st.DeploymentID != "" && st.DeploymentID != o.ID
}
