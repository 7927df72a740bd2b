package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plugin"
	"github.com/gantry-dev/gantry/internal/state"
)

// SpecVersionFile declares a product's specification version (sow migrations).
const SpecVersionFile = "SPEC-VERSION"

// readSpecVersion reads the SPEC-VERSION of a product folder: "" without one.
func readSpecVersion(dir string) (string, error) {
	data, err := os.ReadFile(filepath.Join(dir, SpecVersionFile))
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

// preparePlugins works out a component's plugin lists and versions, and
// checks them before anything runs: every plugin exists, config paths name
// parameters, and the spec version does not jump more than one step.
func preparePlugins(rt *Runtime, cr *compRun, force bool, pos manifest.Pos, diags *manifest.Diagnostics) {
	cr.productDir = rt.Res.ProductDirs[cr.name]
	if cr.productDir == "" {
		cr.productDir = stackDir(rt)
	}
	cr.productDir = absPath(cr.productDir)
	v, err := readSpecVersion(cr.productDir)
	if err != nil {
		diags.Errorf(pos, "", "component %s: %v", cr.name, err)
	}
	cr.specVersion = v
	if cr.recorded != nil {
		cr.deployedVersion = cr.recorded.SpecVersion
	}
	if cr.verb == VerbDeploy && cr.specVersion != "" && cr.deployedVersion != "" && !force {
		to, _ := strconv.Atoi(cr.specVersion)
		from, _ := strconv.Atoi(cr.deployedVersion)
		switch {
		case to > from+1:
			diags.Errorf(pos, "", "component %s was deployed with spec version %d and the stack is now at %d: migrations go one version at a time (deploy the version in between first, or --force)", cr.name, from, to)
		case to < from:
			diags.Errorf(pos, "", "component %s was deployed with spec version %d, newer than the stack's %d: refusing to go back (--force overrides)", cr.name, from, to)
		}
	}
	switch rec := cr.recorded; {
	case cr.verb == VerbUndeploy && rec != nil && (len(rec.Plugins) > 0 || len(rec.SetupPlugins) > 0):
		// An undeploy deletes what was deployed, as it was recorded (already
		// expanded), whatever the manifest says now.
		cr.plugins, cr.setup = recordedSpecs(rec.Plugins), recordedSpecs(rec.SetupPlugins)
		cr.expanded = true
	case cr.c != nil:
		cr.plugins = plugin.Specs(cr.c.Plugins)
		cr.setup = plugin.Specs(cr.c.SetupPlugins)
	}
	env := cr.pluginEnv(nil, nil)
	var check func(specs []*plugin.Spec)
	check = func(specs []*plugin.Spec) {
		for _, s := range specs {
			if manifest.IsControlPlugin(s.Name) {
				check(s.Children)
				continue
			}
			if _, err := plugin.Find(env, s.Name); err != nil {
				diags.Errorf(pos, "", "component %s: %v", cr.name, err)
			}
			if s.Path != "" && s.Config == nil && cr.c != nil && !hasParameter(cr.c, s.Path) {
				diags.Errorf(pos, "", "component %s: plugin %s: config path %q names no parameter of the component", cr.name, s.Name, s.Path)
			}
		}
	}
	check(cr.plugins)
	check(cr.setup)
	if cr.verb == VerbDeploy && cr.c != nil {
		known := knownNames(rt, cr.c)
		var refs func(v any)
		refs = func(v any) {
			switch x := v.(type) {
			case string:
				t, err := params.Parse(x)
				if err != nil {
					diags.Errorf(pos, "", "component %s: plugin argument %q: %v", cr.name, x, err)
					return
				}
				for _, r := range t.Refs() {
					if r.Component == "" && !known(r.Name) {
						diags.Errorf(pos, "", "component %s: plugin argument %q: unknown parameter %q", cr.name, x, r.Name)
					}
				}
			case map[string]any:
				for _, e := range x {
					refs(e)
				}
			case []any:
				for _, e := range x {
					refs(e)
				}
			}
		}
		var walk func([]*plugin.Spec)
		walk = func(specs []*plugin.Spec) {
			for _, s := range specs {
				for _, a := range s.Args {
					refs(a)
				}
				refs(s.Config)
				walk(s.Children)
			}
		}
		if !cr.expanded {
			walk(cr.plugins)
			walk(cr.setup)
		}
	}
}

// describeSpecs is a plugin list for plans: "echo hello", "parallel(rec a, rec b)".
func describeSpecs(specs []*plugin.Spec) []string {
	var out []string
	for _, s := range specs {
		if manifest.IsControlPlugin(s.Name) {
			out = append(out, s.Name+"("+strings.Join(describeSpecs(s.Children), ", ")+")")
			continue
		}
		d := s.Name
		if len(s.Args) > 0 {
			d += " " + strings.Join(s.Args, " ")
		}
		if s.Key != "" && s.Key != s.Name {
			d += " [" + s.Key + "]"
		}
		out = append(out, d)
	}
	return out
}

func hasParameter(c *manifest.Component, name string) bool {
	for _, p := range c.Parameters {
		if p.Name == name {
			return true
		}
	}
	return false
}

// recordedSpecs turns recorded instances back into specs.
func recordedSpecs(list []state.PluginInstance) []*plugin.Spec {
	if len(list) == 0 {
		return nil
	}
	out := make([]*plugin.Spec, len(list))
	for i, p := range list {
		out[i] = &plugin.Spec{Name: p.Name, Key: p.Key, Path: p.Path, Args: p.Args, Config: p.Config, Hidden: p.Hidden, Children: recordedSpecs(p.Children)}
	}
	return out
}

// recordSpecs is what the state keeps of expanded plugin lists: every entry
// with its structure, and for instances the config they resolved (a config
// path reads a parameter), so that they can be deleted as they were deployed.
func recordSpecs(specs []*plugin.Spec, params map[string]string) []state.PluginInstance {
	if len(specs) == 0 {
		return nil
	}
	out := make([]state.PluginInstance, len(specs))
	for i, s := range specs {
		config := s.Config
		if s.Key != "" {
			if c, err := plugin.InstanceConfig(s, params); err == nil {
				config = c
			}
		}
		out[i] = state.PluginInstance{Key: s.Key, Name: s.Name, Path: s.Path, Args: s.Args, Config: config, Hidden: s.Hidden, Children: recordSpecs(s.Children, params)}
	}
	return out
}

// vanished are the instances the record has that the lists no longer have,
// in their recorded order.
func vanished(rec *state.Component, lists ...[]*plugin.Spec) []*plugin.Spec {
	if rec == nil {
		return nil
	}
	current := map[string]bool{}
	for _, l := range lists {
		for _, s := range plugin.Keyed(l) {
			current[s.Key] = true
		}
	}
	var gone []*plugin.Spec
	for _, s := range plugin.Keyed(append(recordedSpecs(rec.Plugins), recordedSpecs(rec.SetupPlugins)...)) {
		if !current[s.Key] {
			gone = append(gone, s)
		}
	}
	return gone
}

// expandPlugins gives the manifest's plugin lists their ${...} and #{...}
// values, before anything of them runs or is recorded: nothing ever runs
// with a reference left in it. Recorded lists are expanded already.
func (cr *compRun) expandPlugins(exp *params.Expanded) error {
	if cr.expanded || cr.plugins == nil && cr.setup == nil {
		return nil
	}
	if exp == nil {
		exp = params.Recorded(cr.name, nil, cr.rt.Outputs, cr.rt.Locked)
	}
	var err error
	if cr.plugins, err = expandSpecs(cr.plugins, exp.Resolver()); err != nil {
		return err
	}
	if cr.setup, err = expandSpecs(cr.setup, exp.Resolver()); err != nil {
		return err
	}
	cr.expanded = true
	return nil
}

// pluginRecord is what the state holds while a deploy of the lists runs:
// the new lists, and in front the instances that vanished from them but are
// not deleted yet, so that a failed or killed run loses track of nothing.
func (cr *compRun) pluginRecord(params map[string]string) (plugins, setup []state.PluginInstance) {
	gone := vanished(cr.recorded, cr.plugins, cr.setup)
	return recordSpecs(append(gone, cr.plugins...), params), recordSpecs(cr.setup, params)
}

// pluginEnv is what the component's plugins run with; streams and outputs
// are set for a run, nil when only checking.
func (cr *compRun) pluginEnv(stream func(string) io.Writer, outputs func(map[string]string, []string)) *plugin.Env {
	rt := cr.rt
	search := []string{cr.dir}
	search = append(search, rt.Res.SourceDirs...)
	if len(rt.Res.SourceDirs) == 0 {
		search = append(search, stackDir(rt))
	}
	var pluginPath []string
	for _, d := range filepath.SplitList(os.Getenv("GANTRY_PLUGIN_PATH")) {
		if d != "" {
			pluginPath = append(pluginPath, d)
		}
	}
	templates := rt.Res.TemplateDirs[cr.name]
	if len(templates) == 0 {
		templates = []string{cr.dir}
	}
	return &plugin.Env{
		Component:       cr.name,
		Dir:             cr.dir,
		RootDir:         stackDir(rt),
		SearchDirs:      absAll(search),
		PluginPath:      pluginPath,
		GenDir:          absPath(rt.Dirs.GenDir(cr.name)),
		StateRoot:       absPath(filepath.Join(rt.Dirs.Root, "state", cr.name)),
		ExportDir:       absPath(rt.Dirs.ExportDir(cr.name)),
		ProductDir:      cr.productDir,
		SpecVersion:     cr.specVersion,
		DeployedVersion: cr.deployedVersion,
		Templates:       absAll(templates),
		Deployment:      absPath(filepath.Join(rt.Dirs.GenDir(cr.name), "deployment.json")),
		Stream:          stream,
		Outputs:         outputs,
	}
}

// absPath is filepath.Abs with one getcwd system call: os.Getwd checks $PWD
// with two stat calls first, which a plan of thousands of components pays
// thousands of times.
func absPath(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	wd, err := syscall.Getwd()
	if err != nil {
		if wd, err = os.Getwd(); err != nil {
			return p
		}
	}
	return filepath.Join(wd, p)
}

func absAll(l []string) []string {
	out := make([]string, len(l))
	for i, p := range l {
		out[i] = absPath(p)
	}
	return out
}

// stepAsker lets plugin gates ask through the step's environment.
type stepAsker struct{ env Env }

func (a stepAsker) Yes() bool                       { return a.env.Yes() }
func (a stepAsker) Interactive() bool               { return a.env.Interactive() }
func (a stepAsker) Pause(fn func() error) error     { return a.env.Pause(fn) }
func (a stepAsker) Input() (string, error)          { return a.env.Input() }
func (a stepAsker) Logf(format string, args ...any) { a.env.Logf(format, args...) }

// pluginRun collects what a component's plugins print and report.
type pluginRun struct {
	mu       sync.Mutex
	writers  []*captureWriter
	direct   map[string]string
	secret   []string
	provides []string
}

func (pr *pluginRun) outputs() (map[string]string, []string) {
	raw := map[string]string{}
	for _, w := range pr.writers {
		w.Flush()
		for k, v := range w.capture.Outputs() {
			raw[k] = v
		}
		pr.provides = append(pr.provides, w.capture.Provides()...)
	}
	for k, v := range pr.direct {
		raw[k] = v
	}
	return raw, pr.secret
}

// runPlugins carries out the verb with the component's plugin lists: setup
// plugins prepare before the deploy list and clean up after the delete list.
// After a deploy, instances the state recorded but the list no longer has are
// deleted with their recorded spec, their state folder removed, their record
// dropped.
func runPlugins(ctx context.Context, env Env, cr *compRun, exp *params.Expanded, secretKeys map[string]bool) (map[string]string, []string, []string, error) {
	rt := cr.rt
	pr := &pluginRun{direct: map[string]string{}}
	out := env.Output()
	stream := func(prefix string) io.Writer {
		if prefix != "" {
			prefix = "[" + prefix + "] "
		}
		w := newCaptureWriter(out, prefix, rt.Masker, secretKeys)
		pr.mu.Lock()
		pr.writers = append(pr.writers, w)
		pr.mu.Unlock()
		return w
	}
	report := func(values map[string]string, secret []string) {
		pr.mu.Lock()
		defer pr.mu.Unlock()
		for k, v := range values {
			pr.direct[k] = v
		}
		for _, s := range secret {
			rt.Masker.Add(values[s])
			pr.secret = append(pr.secret, s)
		}
	}
	penv := cr.pluginEnv(stream, report)
	penv.ProcessEnv = processEnv(cr, exp)
	penv.Ask = stepAsker{env}
	if exp != nil {
		penv.Params = exp.Map()
	}
	if err := writeDeployment(penv.Deployment, cr, exp); err != nil {
		return nil, nil, nil, err
	}
	var err error
	if cr.verb == VerbDeploy {
		if err = plugin.RunList(ctx, cr.setup, plugin.ActionPrepare, penv); err == nil {
			err = plugin.RunList(ctx, cr.plugins, plugin.ActionDeploy, penv)
		}
		if err == nil {
			err = deleteVanished(ctx, cr, penv)
		}
	} else {
		if err = plugin.RunList(ctx, cr.plugins, plugin.ActionDelete, penv); err == nil {
			err = plugin.RunList(ctx, cr.setup, plugin.ActionCleanup, penv)
		}
		if err == nil {
			for _, s := range plugin.Keyed(append(append([]*plugin.Spec(nil), cr.plugins...), cr.setup...)) {
				if dir, derr := penv.StateDir(s); derr == nil {
					os.RemoveAll(dir)
				}
			}
		}
	}
	raw, secret := pr.outputs()
	return raw, secret, pr.provides, err
}

// deleteVanished deletes the instances recorded at the last deploy that the
// component's lists no longer have (seed 002: after the deployment), last
// first.
func deleteVanished(ctx context.Context, cr *compRun, penv *plugin.Env) error {
	gone := vanished(cr.recorded, cr.plugins, cr.setup)
	for i := len(gone) - 1; i >= 0; i-- {
		s := gone[i]
		fmt.Fprintf(penv.Stream(""), "==> instance %s is no longer in the plugin list: deleting it\n", s.InstanceName())
		if err := plugin.RunList(ctx, []*plugin.Spec{s}, plugin.ActionDelete, penv); err != nil {
			return fmt.Errorf("delete vanished instance %s: %w", s.InstanceName(), err)
		}
		dir, err := penv.StateDir(s)
		if err != nil {
			return err
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	return nil
}

// writeDeployment writes the component's deployment file: its parameters and
// plugin lists as JSON (DEPLOYMENT). It holds secrets: owner only.
func writeDeployment(path string, cr *compRun, exp *params.Expanded) error {
	doc := map[string]any{"component": cr.name, "verb": cr.verb, "plugins": cr.plugins, "setupPlugins": cr.setup}
	if exp != nil {
		doc["parameters"] = exp.Map()
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// expandSpecs returns the specs with ${...} and #{...} expanded in their
// arguments and in the strings of their configs.
func expandSpecs(specs []*plugin.Spec, r params.Resolver) ([]*plugin.Spec, error) {
	out := make([]*plugin.Spec, len(specs))
	for i, s := range specs {
		c := *s
		c.Args = make([]string, len(s.Args))
		for j, a := range s.Args {
			v, err := params.Expand(a, r)
			if err != nil {
				return nil, fmt.Errorf("plugin %s argument %q: %w", s.Name, a, err)
			}
			c.Args[j] = v
		}
		cfg, err := expandValue(s.Config, r)
		if err != nil {
			return nil, fmt.Errorf("plugin %s config: %w", s.Name, err)
		}
		c.Config = cfg
		if c.Children, err = expandSpecs(s.Children, r); err != nil {
			return nil, err
		}
		out[i] = &c
	}
	return out, nil
}

func expandValue(v any, r params.Resolver) (any, error) {
	switch x := v.(type) {
	case string:
		return params.Expand(x, r)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, val := range x {
			e, err := expandValue(val, r)
			if err != nil {
				return nil, err
			}
			m[k] = e
		}
		return m, nil
	case []any:
		l := make([]any, len(x))
		for i, val := range x {
			e, err := expandValue(val, r)
			if err != nil {
				return nil, err
			}
			l[i] = e
		}
		return l, nil
	}
	return v, nil
}
