// Package steps carries out the steps of plans: one runner per step kind,
// chosen by the step's spec (Runtime.Runner). Runners share only the run's
// world — the state being recorded, the outputs known so far, the
// capabilities provided so far, the secrets to mask — and hand what they
// produce to the steps that name them as inputs (plan.Result.Data).
package steps

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/plan/stepvars"
	"github.com/gantry-dev/gantry/internal/plugin"
	"github.com/gantry-dev/gantry/internal/secret"
	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/workspace"
)

// Runtime is the world the steps of one run share.
type Runtime struct {
	Plan   *plan.Plan
	Res    *elaborate.Result
	Order  []string // the deploy order, for stack-level lookups
	Locked *params.Locked
	// Outputs are the outputs known so far: the state's, then those of the
	// components as they run.
	Outputs *params.OutputIndex
	// Before is the state as the run found it (the plan was built from it);
	// Recorder holds it as it changes, nil for runs that leave it alone.
	Before   *state.State
	Recorder *state.Recorder
	Masker   *secret.Masker
	Provides *Capabilities
	Dirs     workspace.Workspace
	RunID    string
	// StatePath is the state file, absolute, or for a database the file
	// it would be: the workspace lies next to it and component folders are
	// recorded relative to its folder. StateLocation (the file, or the
	// database's URL) and ElaboratePath are given to processes
	// (GANTRY_STATE, GANTRY_ELABORATE); StackDir is where stack-level
	// steps run.
	StatePath     string
	StateLocation string
	// StateKey names the state the same however its location is spelt
	// (a database's server, database and stack; the file's resolved
	// path): plugin data folders are marked with it (pluginRoot).
	StateKey      string
	ElaboratePath string
	StackDir      string
	OSEnv         []string
	KeepTFVars    bool
	Now           func() time.Time
	// Elaborated is the elaborated file the setup step writes, worked out
	// ahead (PrepareElaborated); nil: the step works it out.
	Elaborated *Elaborated

	folders folderLocks
	roots   pluginRoots

	cacheMu sync.Mutex
	dirSums map[string]*dirSumEntry

	modelOnce sync.Once
	model     map[string]any

	envOnce sync.Once
	envBase *component.EnvBase

	hubOnce sync.Once
	hub     *build.HubProvides

	tuningOnce sync.Once
	tuningIdx  build.Tuning

	// planned are the plan's staged deploy stages by component and
	// instance key (plannedDeploys), gathered once.
	plannedOnce sync.Once
	planned     map[string]map[string][]plugin.Stage
}

// tuning is the stack's tuning conditions by component, indexed once.
func (rt *Runtime) tuning() build.Tuning {
	rt.tuningOnce.Do(func() { rt.tuningIdx = build.TuningIndex(rt.Res.Stack) })
	return rt.tuningIdx
}

// baseEnv is the environment every process of the run starts from
// (OSEnv, KeepTFVars), indexed once.
func (rt *Runtime) baseEnv() *component.EnvBase {
	rt.envOnce.Do(func() { rt.envBase = component.NewEnvBase(rt.OSEnv, rt.KeepTFVars) })
	return rt.envBase
}

// SeedDirSums gives the run the folder digests the plan was built with
// (by component.DirKey): a thousand components made from one folder read
// it once.
func (rt *Runtime) SeedDirSums(sums map[string]*component.DirDigest) {
	rt.cacheMu.Lock()
	defer rt.cacheMu.Unlock()
	for key, d := range sums {
		if d == nil || d.Sum == "" {
			continue
		}
		if rt.dirSums == nil {
			rt.dirSums = map[string]*dirSumEntry{}
		}
		e := &dirSumEntry{d: d}
		e.once.Do(func() {})
		rt.dirSums[key] = e
	}
}

type dirSumEntry struct {
	once sync.Once
	d    *component.DirDigest
	err  error
}

// dirSum is component.DigestDir once per folder, exclusions, reads and run. A run
// sees each folder as it was when first used.
func (rt *Runtime) dirSum(dir string, exclude, reads []string) (*component.DirDigest, error) {
	key := component.DirKey(dir, exclude, reads)
	rt.cacheMu.Lock()
	e, ok := rt.dirSums[key]
	if !ok {
		e = &dirSumEntry{}
		if rt.dirSums == nil {
			rt.dirSums = map[string]*dirSumEntry{}
		}
		rt.dirSums[key] = e
	}
	rt.cacheMu.Unlock()
	e.once.Do(func() { e.d, e.err = component.DigestDir(dir, exclude, reads) })
	return e.d, e.err
}

// fingerprint is a component's fingerprint in this run, and what it is
// made of as the state records it.
func (rt *Runtime) fingerprint(info *plan.Component, exp *params.Expanded) (string, *state.Inputs, error) {
	d, err := rt.dirSum(info.Dir, info.FingerprintExclude, info.FingerprintReads)
	if err != nil {
		return "", nil, err
	}
	upstream := make(map[string]map[string]string, len(info.After))
	for _, dep := range info.After {
		upstream[dep] = rt.Outputs.Values(dep)
	}
	return component.Fingerprint(info.Verb, d.Sum, info.EntryLifecycle, exp, upstream),
		build.Inputs(info.Verb, rt.Locked.DeploymentID, info.EntryLifecycle, d, upstream), nil
}

// comp is the plan's record of a component.
func (rt *Runtime) comp(name string) (*plan.Component, error) {
	info := rt.Plan.Components[name]
	if info == nil {
		return nil, fmt.Errorf("internal error: the plan has no component %s", name)
	}
	return info, nil
}

// recorded is the component's record when the run began.
func (rt *Runtime) recorded(name string) *state.Component {
	if rt.Before == nil {
		return nil
	}
	return rt.Before.Components[name]
}

// modelOf is .Model of the seed 001 variables, built once per run.
func (rt *Runtime) modelOf() map[string]any {
	rt.modelOnce.Do(func() { rt.model = stepvars.Model(rt.Res, rt.Locked) })
	return rt.model
}

// RecordDir is how a component's folder is written in the state: relative to
// the state's folder when it lies below it, so that moving a checkout keeps
// the state valid.
func (rt *Runtime) RecordDir(dir string) string {
	base := filepath.Dir(rt.StatePath)
	if rel, err := filepath.Rel(base, dir); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return dir
}

// hubProvides is hub.provides of a component the run deploys
// (build.HubProvides), made when the first component asks.
func (rt *Runtime) hubProvides() *build.HubProvides {
	rt.hubOnce.Do(func() {
		rt.hub = build.NewHubProvides(rt.Res, rt.Order, rt.Before, rt.Provides.Fixed(), rt.Plan.SomeComponents, func(name string) bool {
			info := rt.Plan.Components[name]
			return info != nil && info.Verb == plan.VerbDeploy
		})
		for name, info := range rt.Plan.Components {
			if info.SkippedByDesign {
				rt.hub.Provided(name, nil)
			}
		}
	})
	return rt.hub
}

// Capabilities is the set of capabilities known so far in a run, which
// requirements are checked against: the environment's, the state's, and
// those of components as they finish. An environment capability not known
// yet is looked for when asked about: an installation handler's prepare may
// have put its tool on PATH since the run started. What a component
// provides is known with the component, and goes when it is undeployed: the
// next component undeployed no longer sees it (as the Hub CLI erases a
// component's provides). A deploy's hub.provides follows build.HubProvides.
type Capabilities struct {
	mu  sync.Mutex
	set build.CapabilitySet
}

// NewCapabilities starts from the given capabilities, which no component
// removes.
func NewCapabilities(initial ...string) *Capabilities {
	c := &Capabilities{}
	c.set.Add(initial...)
	return c
}

// AddFor records capabilities comp provides.
func (c *Capabilities) AddFor(comp string, caps ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set.AddFor(comp, caps...)
}

// AddDeployed records the capabilities of the components the state records
// deployed.
func (c *Capabilities) AddDeployed(st *state.State) {
	if st == nil {
		return
	}
	for _, name := range st.ComponentOrder() {
		if rc := st.Components[name]; rc != nil && rc.Status == state.StatusDeployed {
			c.AddFor(name, rc.Provides...)
		}
	}
}

// Remove forgets what comp provides: a capability stays known while
// something else provides it.
func (c *Capabilities) Remove(comp string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set.Remove(comp)
}

// Has reports whether a capability is known, looking on PATH for the tools of
// an environment capability; learned reports that it was found there now.
func (c *Capabilities) Has(p string) (known, learned bool) {
	c.mu.Lock()
	known = c.set.Has(p)
	c.mu.Unlock()
	if known || !build.IsEnvironmentCapability(p) {
		return known, false
	}
	for _, t := range build.EnvironmentTools(p) {
		if _, err := exec.LookPath(t); err != nil {
			return false, false
		}
	}
	c.mu.Lock()
	c.set.Add(p)
	c.mu.Unlock()
	return true, true
}

// Fixed are the capabilities no component removes: those the run started
// with and the environment's found since.
func (c *Capabilities) Fixed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.set.Fixed()
}

// String is the space-separated sorted list, as HUB_PROVIDES and hub.provides
// show it.
func (c *Capabilities) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.set.String()
}
