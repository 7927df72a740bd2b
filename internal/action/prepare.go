package action

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/plan/resolve"
	"github.com/gantry-dev/gantry/internal/plan/steps"
	"github.com/gantry-dev/gantry/internal/secret"
	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/workspace"
)

// planner builds the plans of one command: it gathers the facts, then
// builds. A run builds again under the state's lock when the state changed
// meanwhile; each warning is said once however often it builds.
type planner struct {
	st          *Stack
	warn        func(manifest.Diagnostics)
	said        map[string]bool
	consequence string
}

func newPlanner(st *Stack, warn func(manifest.Diagnostics), consequence string) *planner {
	pl := &planner{st: st, warn: warn, said: map[string]bool{}, consequence: consequence}
	pl.warnOnce(st.warnings)
	return pl
}

// built is a plan with what it was built from.
type built struct {
	plan   *plan.Plan
	facts  *build.Facts
	masker *secret.Masker
}

// build resolves the facts and builds the plan.
func (pl *planner) build(opts build.Options, ro resolve.Options) (*built, error) {
	st := pl.st
	ro.StateDir = filepath.Dir(st.AbsStatePath())
	ro.StateFiles = st.stateFiles()
	for _, d := range filepath.SplitList(os.Getenv("GANTRY_PLUGIN_PATH")) {
		if d != "" {
			ro.PluginPath = append(ro.PluginPath, d)
		}
	}
	start := time.Now()
	facts, err := resolve.Facts(st.Res, st.State, ro)
	var he *resolve.HandlerError
	if errors.As(err, &he) {
		return nil, invalid(pl.consequence, "%s; %s", he, pl.consequence)
	}
	if err != nil {
		return nil, err
	}
	resolved := time.Now()
	masker := stackMasker(st)
	p, diags := build.Build(&build.Input{Res: st.Res, Graph: st.Graph, Before: st.State, Locked: st.Locked, Facts: facts,
		StateDir: ro.StateDir, StateFiles: ro.StateFiles, Mask: masker.Text, Options: opts})
	if err := diagsError(diags, pl.consequence); err != nil {
		return nil, err
	}
	linkComponents(p, st.Graph)
	slog.Debug("plan built", "verb", opts.Verb, "steps", len(p.Nodes), "edges", len(p.Edges),
		"resolve", resolved.Sub(start).Round(time.Microsecond), "build", time.Since(resolved).Round(time.Microsecond),
		"leftovers", facts.Leftovers != nil, "handler", facts.Handler != nil)
	pl.warnOnce(diags)
	return &built{plan: p, facts: facts, masker: masker}, nil
}

// warnOnce passes on the warnings not said yet.
func (pl *planner) warnOnce(diags manifest.Diagnostics) {
	if pl.warn == nil {
		return
	}
	var fresh manifest.Diagnostics
	for _, d := range diags.Warnings() {
		if !pl.said[d.String()] {
			pl.said[d.String()] = true
			fresh = append(fresh, d)
		}
	}
	if len(fresh) > 0 {
		pl.warn(fresh)
	}
}

// stackMasker knows the secrets of a run before it starts: secret locked
// parameters, and earlier values of secret parameters and outputs that the
// state recorded, which may still show in what components print.
func stackMasker(st *Stack) *secret.Masker {
	m := secret.NewMasker()
	if st.Locked != nil {
		for _, v := range st.Locked.Values() {
			if v.Secret {
				m.Add(v.Value)
			}
		}
	}
	m.Add(StateSecrets(st.State)...)
	// Secret resources a params file registers (nested stacks): their
	// values reach leaves through parameters, but a component may print
	// one however it came by it.
	if st.Res != nil {
		m.Add(st.Res.SecretResources()...)
	}
	// The state's URL, which components get in GANTRY_STATE, may hold a
	// password: a script that prints its environment must not show it.
	if s, ok := st.Store.(interface{ Secrets() []string }); ok {
		m.Add(s.Secrets()...)
	}
	return m
}

// StateSecrets are the secret values a state holds: parameters and outputs
// whose names look secret or that were recorded as secret.
func StateSecrets(st *state.State) []string {
	if st == nil {
		return nil
	}
	var out []string
	for q, v := range st.Parameters {
		if name, _, _ := strings.Cut(q, "|"); manifest.LooksSecret(name) || contains(st.SecretParameters, q) {
			out = append(out, v)
		}
	}
	for k, v := range st.Outputs {
		if contains(st.SecretOutputs, k) || manifest.LooksSecret(k) {
			out = append(out, v)
		}
	}
	for _, c := range st.Components {
		for k, v := range c.Outputs {
			if contains(c.SecretOutputs, k) || manifest.LooksSecret(k) {
				out = append(out, v)
			}
		}
		for _, p := range c.Parameters {
			if p.Secret || manifest.LooksSecret(p.Name) {
				out = append(out, p.Value)
			}
		}
	}
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// foundEnvironment are the environment's capabilities whose tools the facts
// found.
func foundEnvironment(b *built) []string {
	var env []string
	for c, found := range b.facts.Environment {
		if found {
			env = append(env, c)
		}
	}
	return env
}

// runtime assembles the world a run's steps share.
func runtime(st *Stack, b *built, runID string, keepTFVars bool) *steps.Runtime {
	statePath := st.AbsStatePath()
	elab := st.Res.Stack.File
	if !IsElaborated(elab) {
		elab += elaborate.Suffix
	}
	if a, err := filepath.Abs(elab); err == nil {
		elab = a
	}
	stackDir := st.Res.Dir
	if stackDir == "" {
		stackDir = filepath.Dir(st.Res.Stack.File)
	}
	stackDir = b.facts.Abs(stackDir)
	rt := &steps.Runtime{
		Plan:          b.plan,
		Res:           st.Res,
		Order:         st.Graph.Order,
		Locked:        st.Locked,
		Outputs:       build.NewOutputIndex(st.Res, st.Graph, st.State),
		Before:        st.State,
		Masker:        b.masker,
		Provides:      steps.NewCapabilities(build.InitialProvides(st.Res, nil, foundEnvironment(b))...),
		Dirs:          workspace.For(statePath),
		RunID:         runID,
		StatePath:     statePath,
		StateLocation: st.Location(),
		StateKey:      st.Key(),
		ElaboratePath: elab,
		StackDir:      stackDir,
		OSEnv:         os.Environ(),
		KeepTFVars:    keepTFVars,
		Now:           time.Now,
	}
	rt.Provides.AddDeployed(st.State)
	rt.SeedDirSums(b.facts.DirSums)
	return rt
}
