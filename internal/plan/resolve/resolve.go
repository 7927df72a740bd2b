// Package resolve gathers the facts a plan is built from (build.Facts):
// what component folders hold, where plugins come from, whether scripts and
// tools exist, which processes a killed run left, the installation handler.
// It is the only part of planning that reads files or looks at PATH, and it
// runs before building, so that building is a pure function of what it is
// given.
package resolve

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/inputfile"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/plugin"
	"github.com/gantry-dev/gantry/internal/state"
)

// Options say which facts to gather.
type Options struct {
	// Verbs are the verbs whose implementations the plan needs (deploy,
	// undeploy, or a custom verb).
	Verbs []string
	// Resume is the run's --resume. The folders of deployed components are
	// digested for every deploy plan, which says what changed with or
	// without it.
	Resume bool
	// StateDir is the folder of the state file: folders the state records
	// are relative to it.
	StateDir string
	// StateFiles are the run's state files, absolute
	// (build.FingerprintExclude).
	StateFiles []string
	// Leftovers are the processes a killed run left that still live, as
	// read from its process registry under the state's lock (none for
	// plans that are only shown); LastRun names that run.
	Leftovers []component.Leftover
	LastRun   string
	// Handler resolves the stack's installation handler.
	Handler bool
	// PluginPath are folders of executable plugins ($GANTRY_PLUGIN_PATH).
	PluginPath []string
}

// resolver gathers facts, each once.
type resolver struct {
	res    *elaborate.Result
	before *state.State
	o      Options
	f      *build.Facts
	search []string // the stack's plugin search folders
	// stackNames are the names every component can refer to
	// (build.StackNames), once a component's inputs need them.
	stackNames *build.Names
	// outside are the files outside their folder that instances read,
	// and checked the entries looked at for what a deploy would refuse,
	// by folder and entry (inspectEntries).
	outside map[build.StagesKey][]string
	checked map[build.StagesKey]bool
	// stateFiles are the run's state files and their companions, by their
	// real paths (build.StateFilePaths), once reads need them.
	stateFiles map[string]bool
}

// Facts gathers the facts of a stack. The error is about the input (an
// installation handler that cannot be found) or about reading the process
// registry; every other problem is a fact for the builder to report.
func Facts(res *elaborate.Result, before *state.State, o Options) (*build.Facts, error) {
	wd, err := syscall.Getwd()
	if err != nil {
		if wd, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("the working directory: %w", err)
		}
	}
	r := &resolver{res: res, before: before, o: o, f: &build.Facts{
		WorkDir:         wd,
		Implementations: map[build.ImplKey]build.Implementation{},
		SpecVersions:    map[string]build.Version{},
		Plugins:         map[build.PluginKey]build.PluginSource{},
		Scripts:         map[build.ScriptKey]bool{},
		Environment:     map[string]bool{},
		DirSums:         map[string]*component.DirDigest{},
		RealDirs:        map[string]string{},
		Stages:          map[build.StagesKey]build.StagesFact{},
		Reads:           map[string][]string{},
		EntryErrs:       map[build.StagesKey]string{},
		EnvironmentWhy:  map[string]string{},
		RecordsGone:     map[string]string{},
	}, outside: map[build.StagesKey][]string{}, checked: map[build.StagesKey]bool{}}
	stackDir := r.stackDir()
	if len(res.SourceDirs) == 0 {
		r.search = []string{stackDir}
	}
	for _, d := range res.SourceDirs {
		r.search = append(r.search, r.f.Abs(d))
	}
	for i := range res.Stack.Components {
		ref := &res.Stack.Components[i]
		r.component(ref.Name, r.f.Abs(ref.Source.Dir), res.Component(ref.Name), ref, o.Verbs)
	}
	if before != nil {
		for _, name := range before.ComponentOrder() {
			// A component only the state knows can only be torn down.
			if res.Component(name) == nil {
				r.component(name, r.f.Abs(r.recordedDir(before.Components[name].Dir)), nil, nil, []string{plan.VerbUndeploy})
			}
		}
	}
	for _, g := range []*manifest.FlightGroup{res.Stack.Lifecycle.PreFlight, res.Stack.Lifecycle.PostFlight, res.Stack.Lifecycle.PostTeardown} {
		if g != nil {
			r.steps(stackDir, g.Steps)
		}
	}
	r.f.Clouds = build.DetectClouds(os.Environ())
	for _, c := range build.RequiredEnvironment(res) {
		if build.CloudOmitted(r.f.Clouds, c) {
			continue // not checked: the requirement is dropped
		}
		if check, ok := plugin.Environment(c); ok {
			ctx, cancel := context.WithTimeout(context.Background(), environmentTimeout)
			err := check(ctx, os.Environ())
			cancel()
			r.f.Environment[c] = err == nil
			if err != nil {
				r.f.EnvironmentWhy[c] = err.Error()
			}
			continue
		}
		r.f.Environment[c] = onPath(build.EnvironmentTools(c))
	}
	if len(o.Leftovers) > 0 {
		lo := &plan.Leftovers{Run: o.LastRun}
		for _, l := range o.Leftovers {
			lo.Processes = append(lo.Processes, plan.Process{PID: l.PID, Command: l.Args, Dir: l.Dir, Boot: l.Boot, Started: l.Started})
		}
		r.f.Leftovers = lo
	}
	if o.Handler {
		h, err := Handler(res)
		if err != nil {
			return nil, err
		}
		r.f.Handler = h
	}
	return r.f, nil
}

// stackDir is where stack-level steps run: the stack manifest's folder.
// environmentTimeout bounds a check of the environment that asks a
// service (the kubernetes capability asks the cluster).
const environmentTimeout = 5 * time.Second

func (r *resolver) stackDir() string {
	dir := r.res.Dir
	if dir == "" {
		dir = filepath.Dir(r.res.Stack.File)
	}
	return r.f.Abs(dir)
}

func (r *resolver) recordedDir(dir string) string {
	if dir == "" || filepath.IsAbs(dir) {
		return dir
	}
	return filepath.Join(r.o.StateDir, filepath.FromSlash(dir))
}

// component gathers the facts of one component: its implementations, its
// plugins, its steps' scripts, its product's spec version, and for --resume
// its folder's digest.
func (r *resolver) component(name, dir string, c *manifest.Component, ref *manifest.ComponentRef, verbs []string) {
	if _, done := r.f.RealDirs[dir]; !done {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			r.f.RealDirs[dir] = real
		}
	}
	var rec *state.Component
	if r.before != nil {
		rec = r.before.Components[name]
	}
	// Any record an undeploy would act on: a component whose deploy failed
	// after its plugins ran has records too, in the folder it ran in.
	if rec != nil && rec.Status != state.StatusUndeployed && rec.Status != state.StatusSkipped && !build.NeverRan(rec) && r.res.OwnRecords != nil {
		if what, none := r.res.OwnRecords(name); none {
			r.f.RecordsGone[name] = what
		}
	}
	// The lists the plan may run, and the actions it may run them for.
	type lists struct {
		specs   []*plugin.Spec
		actions []string
	}
	var all []lists
	for _, verb := range verbs {
		impl := r.implementation(dir, verb)
		if impl.Impl == nil {
			continue
		}
		if list, _ := build.ProbedList(impl.Impl.Kind); list != nil {
			r.plugin(dir, list[0].Name)
			all = append(all, lists{list, []string{plugin.ActionDeploy, plugin.ActionDelete}})
		}
	}
	if c != nil {
		all = append(all, lists{plugin.Specs(c.Plugins), []string{plugin.ActionDeploy, plugin.ActionDelete}},
			lists{plugin.Specs(c.SetupPlugins), []string{plugin.ActionPrepare, plugin.ActionCleanup}})
		lc := build.EffectiveLifecycle(c, ref)
		r.steps(dir, build.LifecycleSteps(&lc))
	}
	if rec != nil {
		all = append(all, lists{plugin.FromRecord(rec.Plugins), []string{plugin.ActionDelete}},
			lists{plugin.FromRecord(rec.SetupPlugins), []string{plugin.ActionCleanup}})
	}
	reads := map[string]bool{}
	for _, l := range all {
		for _, n := range pluginNames(l.specs) {
			r.plugin(dir, n)
		}
		r.stages(name, dir, rec, c, l.specs, l.actions, reads)
		if slices.Contains(l.actions, plugin.ActionDeploy) {
			r.inspectEntries(dir, c != nil && c.Templates != nil, l.specs, reads)
		}
	}
	if len(reads) > 0 {
		r.f.Reads[name] = slices.Sorted(maps.Keys(reads))
	}
	product := r.res.ProductDirs[name]
	if product == "" {
		product = r.stackDir()
	}
	product = r.f.Abs(product)
	if _, done := r.f.SpecVersions[product]; !done {
		v, err := readSpecVersion(product)
		r.f.SpecVersions[product] = build.Version{Version: v, Err: errText(err)}
	}
	// A deploy plan says whether a deployed component changed, --resume or
	// not: its folder's digest is needed, and the run reuses it.
	if c != nil && slices.Contains(verbs, plan.VerbDeploy) && rec != nil && rec.Status == state.StatusDeployed && rec.Fingerprint != "" {
		lc := build.EffectiveLifecycle(c, ref)
		exclude := build.FingerprintExclude(&lc, dir, r.o.StateFiles)
		key := component.DirKey(dir, exclude, r.f.Reads[name])
		if _, done := r.f.DirSums[key]; !done {
			d, err := component.DigestDir(dir, exclude, r.f.Reads[name])
			if err != nil {
				d = nil
			}
			r.f.DirSums[key] = d
		}
	}
}

// stages plans the actions of the instances of staged plugins (kubernetes)
// in a component's list: the plugin reads their inputs as the manifest c
// gives them (nil: only the state knows the component) — its templates
// render some of them, its parameters may name the release, and a deploy
// refuses references to names it cannot see. The files outside the folder
// their deploys read are added to reads.
func (r *resolver) stages(name, dir string, rec *state.Component, c *manifest.Component, specs []*plugin.Spec, actions []string, reads map[string]bool) {
	var templates *manifest.Templates
	var parameters []manifest.Parameter
	if c != nil {
		templates, parameters = c.Templates, c.Parameters
	}
	for _, s := range specs {
		if s.IsControl() {
			r.stages(name, dir, rec, c, s.Children, actions, reads)
			continue
		}
		staged, ok := plugin.IsStaged(s.Name)
		if !ok || r.f.Plugins[build.PluginKey{Dir: dir, Name: s.Name}].Source != plan.SourceBuiltin {
			continue
		}
		inst := build.RecordedInstance(rec, s.Key)
		for _, action := range actions {
			k := build.StagesKeyOf(dir, action, s, inst)
			fact, done := r.f.Stages[k]
			if !done {
				req := plugin.StagesRequest{Component: name, Dir: dir, Entry: s, Action: action, Recorded: inst, Templates: templates, Parameters: parameters}
				req.Read = func(p string) { fact.Reads = append(fact.Reads, p) }
				if action == plugin.ActionDeploy {
					// A delete reads the manifests for their hooks only,
					// and never fails for them. Made here, for the few
					// components with staged plugins, not for every one.
					if check := r.unknown(c); check != nil {
						seen := map[[2]string]bool{}
						req.Unknown = func(component, name string) string {
							if ref := [2]string{component, name}; component != "" && !seen[ref] {
								seen[ref] = true
								fact.Refs = append(fact.Refs, params.Part{Component: component, Name: name})
							}
							return check(component, name)
						}
					}
				}
				st, err := staged.Stages(req)
				fact.Stages, fact.Err = st, errText(err)
				if c, ok := staged.(plugin.Claimer); ok && action == plugin.ActionDeploy && err == nil {
					fact.Claim = c.Claim(req)
				}
				r.f.Stages[k] = fact
			}
			if action == plugin.ActionDeploy {
				for _, p := range fact.Reads {
					reads[p] = true
				}
			}
		}
	}
}

// inspectEntries looks at the entries of built-in plugins in a component's
// list that a deploy runs, in folder dir: the files outside the folder
// their instances read and no stage planned reads (plugin.OutsideReader: a
// terraform module's local modules) are added to reads, for the
// component's fingerprint; what a deploy of them would refuse
// (plugin.EntryChecker) is kept for the builder to report.
func (r *resolver) inspectEntries(dir string, templated bool, specs []*plugin.Spec, reads map[string]bool) {
	for _, s := range specs {
		if s.IsControl() {
			r.inspectEntries(dir, templated, s.Children, reads)
			continue
		}
		if r.f.Plugins[build.PluginKey{Dir: dir, Name: s.Name}].Source != plan.SourceBuiltin {
			continue
		}
		if checker, ok := plugin.EntryCheckerOf(s.Name); ok {
			k := build.EntryCheckKey(dir, s)
			if _, done := r.checked[k]; !done {
				if err := checker.CheckEntry(dir, s, templated); err != nil {
					r.f.EntryErrs[k] = err.Error()
				}
				r.checked[k] = true
			}
		}
		reader, ok := plugin.ReadsOutsideOf(s.Name)
		if !ok {
			continue
		}
		// Components on one folder and entry read the same files: once.
		k := build.StagesKeyOf(dir, "reads", s, nil)
		files, done := r.outside[k]
		if !done {
			files = r.withoutStateFiles(dir, reader.ReadsOutside(dir, s))
			r.outside[k] = files
		}
		for _, p := range files {
			reads[p] = true
		}
	}
}

// withoutStateFiles is files (read outside the folder dir, by their path
// from it with symlinks resolved) without the run's state files and their
// companions: each run writes them, and a module folder that holds the
// stack's state under a name of its choosing (-s st.json) would change
// with every run.
func (r *resolver) withoutStateFiles(dir string, files []string) []string {
	if len(files) == 0 || len(r.o.StateFiles) == 0 {
		return files
	}
	if r.stateFiles == nil {
		r.stateFiles = build.StateFilePaths(r.o.StateFiles)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return files
	}
	out := files[:0:0]
	for _, f := range files {
		if !r.stateFiles[filepath.Join(real, filepath.FromSlash(f))] {
			out = append(out, f)
		}
	}
	return out
}

// unknown says why a ${name} or ${component:name} in component c's inputs
// cannot resolve, "" when it can (build.NameCheck); nil when every one may:
// c is not known (a component only the state records) or the stack is
// partial.
func (r *resolver) unknown(c *manifest.Component) func(component, name string) string {
	if c == nil || r.res.Partial {
		return nil
	}
	if r.stackNames == nil {
		r.stackNames = build.StackNames(r.res)
	}
	return build.NameCheck(r.stackNames, build.Components{Res: r.res, Before: r.before}, c)
}

func (r *resolver) implementation(dir, verb string) build.Implementation {
	k := build.ImplKey{Dir: dir, Verb: verb}
	if impl, done := r.f.Implementations[k]; done {
		return impl
	}
	impl, err := component.Probe(dir, verb)
	got := build.Implementation{Impl: impl, Err: errText(err)}
	r.f.Implementations[k] = got
	return got
}

// steps gathers what injected steps need: their scripts, and the actions
// calls of the core plugin name.
func (r *resolver) steps(dir string, steps []manifest.Step) {
	for _, st := range steps {
		switch st.Type {
		case manifest.StepExec:
			if len(st.Args) > 0 {
				k := build.ScriptKey{Dir: dir, Script: st.Args[0]}
				if _, done := r.f.Scripts[k]; !done {
					r.f.Scripts[k] = scriptExists(dir, st.Args[0])
				}
			}
		case manifest.StepCall:
			if st.Plugin == "" {
				r.implementation(dir, st.Action)
			}
		}
	}
}

// plugin finds where a plugin of a component's lists comes from: an
// executable in the component's folder, the stack's sources or the plugin
// path, else a built-in.
func (r *resolver) plugin(dir, name string) {
	k := build.PluginKey{Dir: dir, Name: name}
	if _, done := r.f.Plugins[k]; done {
		return
	}
	search := append([]string{dir}, r.search...)
	path, tried := plugin.Find(search, r.o.PluginPath, name)
	switch {
	case path != "":
		r.f.Plugins[k] = build.PluginSource{Source: path}
	case plugin.IsListBuiltin(name):
		r.f.Plugins[k] = build.PluginSource{Source: plan.SourceBuiltin}
	default:
		r.f.Plugins[k] = build.PluginSource{Err: fmt.Sprintf("no plugin %q: not built in, and none of %s exists", name, strings.Join(tried, ", "))}
	}
}

// pluginNames are the names of the plugins a list runs.
func pluginNames(specs []*plugin.Spec) []string {
	var out []string
	for _, s := range specs {
		if s.IsControl() {
			out = append(out, pluginNames(s.Children)...)
			continue
		}
		out = append(out, s.Name)
	}
	return out
}

// SpecVersionFile declares a product's specification version (sow migrations).
const SpecVersionFile = "SPEC-VERSION"

// readSpecVersion reads the SPEC-VERSION of a product folder: "" without one.
func readSpecVersion(dir string) (string, error) {
	data, err := inputfile.Read(filepath.Join(dir, SpecVersionFile), inputfile.MaxValue)
	if os.IsNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	v := strings.TrimSpace(string(data))
	if _, err := strconv.Atoi(v); err != nil {
		return "", fmt.Errorf("%s holds %q; it must be a plain number", filepath.Join(dir, SpecVersionFile), v)
	}
	return v, nil
}

// scriptExists reports whether an exec step's script is found: in the folder
// the step runs in, as an absolute path, or on PATH.
func scriptExists(dir, script string) bool {
	if strings.Contains(script, "{{") || strings.Contains(script, "${") {
		return true
	}
	if filepath.IsAbs(script) {
		_, err := os.Stat(script)
		return err == nil
	}
	if dir != "" {
		if _, err := os.Stat(filepath.Join(dir, script)); err == nil {
			return true
		}
	}
	if strings.Contains(script, "/") {
		return false
	}
	_, err := exec.LookPath(script)
	return err == nil
}

// onPath reports whether every tool is on PATH.
func onPath(tools []string) bool {
	for _, t := range tools {
		if _, err := exec.LookPath(t); err != nil {
			return false
		}
	}
	return true
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
