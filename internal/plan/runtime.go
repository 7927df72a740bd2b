package plan

import (
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/secret"
	"github.com/gantry-dev/gantry/internal/state"
)

// Runtime is everything the steps of one run share.
type Runtime struct {
	Res     *elaborate.Result
	Graph   *Graph
	Locked  *params.Locked
	Outputs *params.OutputIndex
	// Before is the state as the run found it; Recorder holds it as it changes.
	Before   *state.State
	Recorder *state.Recorder
	Masker   *secret.Masker
	Provides *Capabilities
	Dirs     Workspace
	RunID    string
	// StatePath and ElaboratePath are given to processes (GANTRY_STATE,
	// GANTRY_ELABORATE), absolute.
	StatePath     string
	ElaboratePath string
	OSEnv         []string
	KeepTFVars    bool
	Now           func() time.Time

	planned *params.OutputIndex // outputs as the plan sees them, built once

	cacheMu sync.Mutex
	dirSums map[string]*dirSumEntry
	probes  map[probeKey]probeResult

	refsOnce   sync.Once
	refs       map[string]int // stack component entries by name
	namesOnce  sync.Once
	stackNames map[string]bool // names every component may refer to
}

// Workspace is the .gantry folder next to a state file (DESIGN 2.5).
type Workspace struct {
	Root string
}

// WorkspaceFor returns the workspace of a state file.
func WorkspaceFor(statePath string) Workspace {
	return Workspace{Root: filepath.Join(filepath.Dir(statePath), ".gantry")}
}

// RunDir holds a run's logs, plan and events.
func (w Workspace) RunDir(runID string) string { return filepath.Join(w.Root, "runs", runID) }

// GenDir holds a component's rendered files and plugin configs; deleting it is
// always safe.
func (w Workspace) GenDir(comp string) string { return filepath.Join(w.Root, "gen", comp) }

// StateDir holds a plugin instance's persistent files.
func (w Workspace) StateDir(comp, key string) string {
	return filepath.Join(w.Root, "state", comp, key)
}

// ExportDir holds a component's exported files.
func (w Workspace) ExportDir(comp string) string { return filepath.Join(w.Root, "export", comp) }

// Capabilities is the set of capabilities known so far in a run: the
// environment's, the state's, and those of components as they finish.
type Capabilities struct {
	mu  sync.Mutex
	set map[string]bool
}

// NewCapabilities starts from the given capabilities.
func NewCapabilities(initial ...string) *Capabilities {
	c := &Capabilities{set: map[string]bool{}}
	c.Add(initial...)
	return c
}

// Add records capabilities.
func (c *Capabilities) Add(caps ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range caps {
		c.set[p] = true
	}
}

// Has reports whether a capability is known.
func (c *Capabilities) Has(p string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.set[p]
}

// String is the space-separated sorted list, as HUB_PROVIDES and hub.provides
// show it.
func (c *Capabilities) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := make([]string, 0, len(c.set))
	for p := range c.set {
		l = append(l, p)
	}
	sort.Strings(l)
	return strings.Join(l, " ")
}

// environmentTools are the well-known requirements the environment satisfies
// when their tool is on PATH (seed 000: these cannot be tuned).
var environmentTools = map[string][]string{
	"aws":        {"aws"},
	"azure":      {"az"},
	"gcp":        {"gcloud"},
	"kubectl":    {"kubectl"},
	"kubernetes": {"kubectl"},
	"helm":       {"helm"},
	"terraform":  {"terraform"},
	"vault":      {"vault"},
}

// IsEnvironmentCapability reports whether a requirement is one the
// environment provides.
func IsEnvironmentCapability(name string) bool {
	_, ok := environmentTools[name]
	return ok
}

// EnvironmentCapabilities returns the well-known capabilities whose tools are
// on PATH, among those asked for.
func EnvironmentCapabilities(wanted []string) []string {
	var out []string
	for _, w := range wanted {
		tools, ok := environmentTools[w]
		if !ok {
			continue
		}
		all := true
		for _, t := range tools {
			if _, err := exec.LookPath(t); err != nil {
				all = false
			}
		}
		if all {
			out = append(out, w)
		}
	}
	return out
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

// RecordedDir resolves a folder the state recorded.
func (rt *Runtime) RecordedDir(dir string) string {
	if dir == "" || filepath.IsAbs(dir) {
		return dir
	}
	return filepath.Join(filepath.Dir(rt.StatePath), filepath.FromSlash(dir))
}

// DeclaredProvides are the capabilities a stack declares itself (a base
// stack's provides), without those its components provide when they deploy.
func DeclaredProvides(res *elaborate.Result) []string {
	fromComponents := map[string]bool{}
	for _, c := range res.Components {
		for _, p := range c.Provides {
			fromComponents[p] = true
		}
	}
	var out []string
	for _, p := range res.Stack.Provides {
		if !fromComponents[p] {
			out = append(out, p)
		}
	}
	return out
}

type probeKey struct{ dir, verb string }

type probeResult struct {
	impl *component.Implementation
	err  error
}

// probe is component.Probe once per folder and verb: a plan of a thousand
// components made from one folder looks at it once.
func (rt *Runtime) probe(dir, verb string) (*component.Implementation, error) {
	k := probeKey{dir, verb}
	rt.cacheMu.Lock()
	defer rt.cacheMu.Unlock()
	if r, ok := rt.probes[k]; ok {
		return r.impl, r.err
	}
	impl, err := component.Probe(dir, verb)
	if rt.probes == nil {
		rt.probes = map[probeKey]probeResult{}
	}
	rt.probes[k] = probeResult{impl, err}
	return impl, err
}
