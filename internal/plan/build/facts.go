package build

import (
	"fmt"
	"path/filepath"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/plan"
)

// Facts are what building a plan needs to know of the world outside the
// manifests and the state: what the component folders hold, which plugins
// exist where, which tools are on PATH. The resolve phase (plan/resolve)
// gathers them before anything is built, so that a plan is a pure function
// of its input: the same manifests, state and facts give the same plan, and
// tests give facts without a file system.
type Facts struct {
	// WorkDir is the working directory relative paths are resolved against.
	WorkDir string
	// Implementations are the implementations probed in component folders,
	// by folder and verb (DESIGN 4.5).
	Implementations map[ImplKey]Implementation
	// SpecVersions are the SPEC-VERSION files of product folders: the
	// version, "" without a file, or the error reading it.
	SpecVersions map[string]Version
	// Plugins say where the plugins of plugin lists come from, by the
	// component folder whose search path found them and the plugin's name.
	Plugins map[PluginKey]PluginSource
	// Scripts says whether the scripts of exec steps exist: in the folder
	// the step runs in, or on PATH.
	Scripts map[ScriptKey]bool
	// Environment holds, for every environment capability the stack's
	// components require, whether its tools are on PATH.
	Environment map[string]bool
	// EnvironmentWhy says why the environment does not provide a
	// capability whose check is not a tool on PATH (kubernetes: no
	// kubeconfig reaches a cluster).
	EnvironmentWhy map[string]string
	// Clouds are the clouds the environment enables (DetectClouds): the
	// requirements of other clouds are dropped, as the Hub CLI drops them.
	Clouds []string
	// DirSums digest the folders of deployed components (by
	// component.DirKey: folder and exclusions), for the plan's prediction
	// of what is unchanged and what changed; nil where the folder could not
	// be read.
	DirSums map[string]*component.DirDigest
	// RealDirs are the component folders with their links resolved, by
	// folder: two components whose folders are one folder must not run at
	// once. A folder that cannot be resolved is missing (its own path
	// stands for it).
	RealDirs map[string]string
	// Leftovers are the process groups a killed run left running (runs
	// only).
	Leftovers *plan.Leftovers
	// Handler is the stack's installation handler, found (nil without one).
	Handler *plan.Handler
	// Stages are the stages of the instances of staged plugins
	// (kubernetes), for each action the plan may carry out.
	Stages map[StagesKey]StagesFact
	// Reads are, by component, the files outside its folder that planning
	// its staged plugins' instances read, by their path from the folder
	// with symlinks resolved, sorted: they join
	// its fingerprint (plan.Component.FingerprintReads).
	Reads map[string][]string
	// EntryErrs are what a deploy of an instance of a built-in plugin
	// would refuse, as its files say before anything runs
	// (plugin.EntryChecker: a terraform file that does not parse), by
	// EntryCheckKey; absent when there is nothing.
	EntryErrs map[StagesKey]string
	// RecordsGone are, by component, the records of its own the stack
	// keeps beside gantry's state (elaborate.Result.OwnRecords), for each
	// component the state records as deployed and none of whose records
	// is there.
	RecordsGone map[string]string
}

// ImplKey names a probe of a folder for a verb.
type ImplKey struct{ Dir, Verb string }

// Implementation is what a folder holds for a verb, or why it holds none.
type Implementation struct {
	Impl *component.Implementation
	Err  string
}

// Version is a SPEC-VERSION, or why it could not be read.
type Version struct {
	Version string
	Err     string
}

// PluginKey names a plugin as a component's folder sees it.
type PluginKey struct{ Dir, Name string }

// PluginSource is where a plugin comes from: plan.SourceBuiltin, the path of
// an executable, or "" when nothing provides it (Err says where it looked).
type PluginSource struct {
	Source string
	Err    string
}

// ScriptKey names an exec step's script in the folder it runs in.
type ScriptKey struct{ Dir, Script string }

// Abs resolves a path against the working directory.
func (f *Facts) Abs(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(f.WorkDir, p)
}

// missing reports a fact the resolve phase did not gather: a bug of
// gantry's, never of the input.
func missing(what string, args ...any) string {
	return "internal error: the plan needs a fact that was not gathered: " + fmt.Sprintf(what, args...)
}

// realDir is dir with its links resolved, when the resolve phase could.
func (f *Facts) realDir(dir string) string {
	if real, ok := f.RealDirs[dir]; ok {
		return real
	}
	return dir
}

// implementation returns the probe of dir for verb.
func (f *Facts) implementation(dir, verb string) (*component.Implementation, error) {
	r, ok := f.Implementations[ImplKey{dir, verb}]
	if !ok {
		return nil, fmt.Errorf("%s", missing("the implementation of %s in %s", verb, dir))
	}
	if r.Err != "" {
		return nil, fmt.Errorf("%s", r.Err)
	}
	return r.Impl, nil
}
