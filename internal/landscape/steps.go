package landscape

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/gantry-dev/gantry/internal/plugin"
)

func init() {
	for _, name := range []string{EntrySetup, EntryDeployment, EntryPlugins, EntryExport} {
		plugin.Register(name, step(name), plugin.ForLists)
	}
}

// step is one of the built-in entries of a landscape component's lists.
type step string

// Actions is nil: these serve plugin lists only.
func (step) Actions() []string { return nil }

// Validate refuses call and probe steps.
func (step) Validate(string, map[string]any) error {
	return errors.New("this plugin serves the plugin lists of sow landscapes only")
}

// Run carries out the step for the component its config names.
func (s step) Run(ctx context.Context, c *plugin.Call) error {
	if c.Entry == nil {
		return errors.New("this plugin serves the plugin lists of sow landscapes only")
	}
	cfg, _ := c.Entry.Config.(map[string]any)
	root, _ := cfg["landscape"].(string)
	name, _ := cfg["component"].(string)
	if root == "" || name == "" {
		return fmt.Errorf("%s: its config names no landscape and component", s)
	}
	l, err := lookup(ctx, root)
	if err != nil {
		return fmt.Errorf("open the landscape %s: %w", root, err)
	}
	comp := l.Component(name)
	if comp == nil {
		return fmt.Errorf("component %s is no longer in the landscape %s", name, root)
	}
	w := &work{l: l, c: comp, call: c}
	switch string(s) {
	case EntrySetup:
		return w.setup(ctx)
	case EntryDeployment:
		return w.deployment(ctx)
	case EntryPlugins:
		return w.plugins(ctx)
	case EntryExport:
		return w.export(ctx)
	}
	return fmt.Errorf("unknown step %s", s)
}

// work is one step of one component.
type work struct {
	l    *Landscape
	c    *Component
	call *plugin.Call
}

func (w *work) gen() string     { return w.l.GenDir(w.c.Name) }
func (w *work) state() string   { return w.l.StateDir(w.c.Name) }
func (w *work) export_() string { return w.l.ExportDir(w.c.Name) }

// versions are the product's spec version ("" without SPEC-VERSION) and
// the one the component was deployed with (0 before its first deploy).
func (w *work) versions() (spec string, deployed int, err error) {
	spec = w.c.Product.SpecVersion
	data, err := os.ReadFile(filepath.Join(w.state(), specVersion))
	if err != nil {
		return spec, 0, nil
	}
	v := strings.TrimSpace(string(data))
	if deployed, err = strconv.Atoi(v); err != nil {
		return spec, 0, fmt.Errorf("%s: deployed specification version %q is no number", filepath.Join(w.state(), specVersion), v)
	}
	return spec, deployed, nil
}

// vars are sow's environment variables of the component: every one is
// always set, so that a plugin never writes below an empty path.
func (w *work) vars() ([]string, error) {
	spec, deployed, err := w.versions()
	if err != nil {
		return nil, err
	}
	migrate := ""
	if spec != "" && spec != strconv.Itoa(deployed) {
		migrate = "true"
	}
	lib := sowLib()
	if lib == "" {
		return nil, errors.New("gantry's sow library could not be written to a cache or temporary folder")
	}
	return []string{
		"ROOT=" + w.l.Root, "ROOTDIR=" + w.l.Root,
		"ROOTPRODUCTDIR=" + w.l.RootProductDir(),
		"GEN=" + filepath.Join(w.l.Root, "gen"), "STATE=" + filepath.Join(w.l.Root, "state"), "EXPORT=" + filepath.Join(w.l.Root, "export"),
		"CONFIG=" + filepath.Join(w.l.Root, "gen", "config.json"), "META=" + filepath.Join(w.l.Root, "gen", "meta.json"),
		"CURRENT=" + w.c.Dir, "COMPONENT=" + w.c.Name,
		"PRODUCT=" + w.c.Product.Name, "PRODUCTDIR=" + w.c.Product.Dir,
		"GENDIR=" + w.gen(), "STATEDIR=" + w.state(), "EXPORTDIR=" + w.export_(),
		"SOW=" + filepath.Dir(lib), "SOWLIB=" + lib,
		"SPECVERSION=" + spec, "DEPLOYEDVERSION=" + strconv.Itoa(deployed), "MIGRATE=" + migrate, "MIGRATION=" + migrate,
		"TEMPLATES=", "PLUGININSTANCE=", "PLUGINCONFIG=", "DEPLOYMEMT=", "DEPLOYMENT=",
	}, nil
}

func (w *work) runner(ctx context.Context, action, docVar string, doc []byte) (*runner, error) {
	vars, err := w.vars()
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, fmt.Errorf("read the %s document: %w", docVar, err)
	}
	r := &runner{l: w.l, c: w.c, action: action, docVar: docVar, doc: v, docRaw: doc, env: w.call.Env, vars: vars, stdout: w.call.Stdout, stderr: w.call.Stderr}
	if err := r.loadScripts(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

func (w *work) dirs() error {
	for _, d := range []string{w.gen(), w.state(), w.export_()} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(w.l.Root, "gen", "config.json"), w.l.Config, 0o644)
}

// notDeployed is sow's check before a delete: neither exports nor
// generated files.
func (w *work) notDeployed() bool {
	_, e1 := os.Stat(filepath.Join(w.export_(), exportFile))
	_, e2 := os.Stat(w.gen())
	return e1 != nil && e2 != nil
}

// setup runs component.plugins: prepare on deploy, cleanup on delete.
func (w *work) setup(ctx context.Context) error {
	if err := w.dirs(); err != nil {
		return err
	}
	r, err := w.runner(ctx, w.call.Action, "COMPONENTJSON", w.c.Meta)
	if err != nil {
		return err
	}
	if err := r.list(ctx, w.c.Setup, w.call.Action == plugin.ActionCleanup); err != nil {
		return err
	}
	if w.call.Action == plugin.ActionCleanup {
		// sow cleans up before it removes the component's folders; here
		// cleanup comes last, so it removes them (again).
		for _, d := range []string{w.export_(), w.state(), w.gen()} {
			if err := os.RemoveAll(d); err != nil {
				return err
			}
		}
	}
	return nil
}

// genStubs are the stubs of the deployment and of the exports, in sow's
// order: the component's stubs, the configuration, the imports, the env
// node and the component's deployment node.
func (w *work) genStubs() ([]Doc, error) {
	var out []Doc
	for _, s := range w.c.Stubs {
		data, err := readFile(s)
		if err != nil {
			return nil, fmt.Errorf("stub %s: %w", s, err)
		}
		out = append(out, Doc{Name: s, Data: data})
	}
	out = append(out, Doc{Name: filepath.Join(w.l.Root, "gen", "config.json"), Data: w.l.Config})
	for _, f := range []string{"import.json", "env.json", "compdeploy.json"} {
		p := filepath.Join(w.gen(), f)
		data, err := os.ReadFile(p)
		if err != nil {
			if f == "compdeploy.json" {
				continue
			}
			return nil, fmt.Errorf("%s: %w (the deployment step writes it)", p, err)
		}
		out = append(out, Doc{Name: p, Data: data})
	}
	return out, nil
}

// deployment evaluates deployment.yaml (seed 002 steps 3 and 4): the
// imports gathered, the env node written, the manifest generated with the
// last state, the new state kept.
func (w *work) deployment(ctx context.Context) error {
	if w.call.Action == plugin.ActionDelete && w.notDeployed() {
		fmt.Fprintf(w.call.Stdout, "component %s already deleted or not yet deployed\n", w.c.Name)
		return nil
	}
	if err := w.dirs(); err != nil {
		return err
	}
	spec, deployed, err := w.versions()
	if err != nil {
		return err
	}
	if w.call.Action == plugin.ActionDeploy && spec != "" && exists(filepath.Join(w.state(), specVersion)) {
		cur, _ := strconv.Atoi(spec)
		if cur != deployed && cur-deployed != 1 {
			return fmt.Errorf("upgrading component %s from specification version %d to %d is not supported: migrations go one version at a time", w.c.Name, deployed, cur)
		}
	}
	imports := map[string]any{}
	for _, im := range w.c.Imports {
		p := filepath.Join(w.l.ExportDir(im.Component), exportFile)
		data, err := readFile(p)
		if err != nil {
			return fmt.Errorf("imported component %s not deployed yet (%s: %v)", im.Component, p, err)
		}
		var v any
		if err := yaml.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("read the exports of %s: %w", im.Component, err)
		}
		imports[im.Label] = v
	}
	if err := writeJSON(filepath.Join(w.gen(), "import.json"), map[string]any{"imports": imports}); err != nil {
		return err
	}
	env := map[string]any{
		"<<": "(( &temporary &inject ))", "ROOTDIR": w.l.Root, "ROOTPRODUCTDIR": w.l.RootProductDir(),
		"PRODUCT": w.c.Product.Name, "PRODUCTDIR": w.c.Product.Dir, "COMPONENT": w.c.Name,
		"GENDIR": w.gen(), "STATEDIR": w.state(), "EXPORTDIR": w.export_(),
		"lookupfile": "(( |f|->lookup_file(f,__ctx.DIR, reverse(_.TEMPLATES) || [])[0] ))",
		"lookupdir":  "(( |f|->lookup_dir(f,__ctx.DIR, reverse(_.TEMPLATES) || [])[0] ))",
		"TEMPLATES":  []string{},
	}
	isDeployed := exists(filepath.Join(w.state(), specVersion)) || exists(filepath.Join(w.export_(), exportFile))
	if spec != "" {
		v, _ := strconv.Atoi(spec)
		env["SPECVERSION"], env["DEPLOYEDVERSION"] = v, deployed
		env["MIGRATE"] = isDeployed && v != deployed
	} else {
		env["SPECVERSION"], env["DEPLOYEDVERSION"], env["MIGRATE"] = nil, deployed, true
	}
	if err := writeJSON(filepath.Join(w.gen(), "env.json"), map[string]any{"env": env}); err != nil {
		return err
	}
	var meta map[string]any
	_ = json.Unmarshal(w.c.Meta, &meta)
	cd := filepath.Join(w.gen(), "compdeploy.json")
	if d, ok := meta["deployment"]; ok && d != nil {
		if err := writeJSON(cd, d); err != nil {
			return err
		}
	} else {
		os.Remove(cd)
	}
	stubs, err := w.genStubs()
	if err != nil {
		return err
	}
	tmpl := Doc{Name: filepath.Join(w.c.Dir, deploymentFile), Data: []byte("{}")}
	if data, err := readFile(tmpl.Name); err == nil {
		tmpl.Data = data
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	stateFile := filepath.Join(w.state(), "state.yaml")
	job := Job{Template: tmpl, Stubs: stubs, WantState: true}
	if data, err := readFile(stateFile); err == nil {
		job.State = &Doc{Name: stateFile, Data: data}
	}
	res, err := Evaluate(ctx, []Job{job})
	if err != nil {
		return fmt.Errorf("process %s: %w", tmpl.Name, err)
	}
	if len(res[0].Issues) > 0 {
		return newPositions().diagnostics(res[0].Issues, "deployment.yaml").Err()
	}
	out, err := yaml.JSONToYAML(nonEmpty(res[0].JSON))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(w.gen(), deploymentFile), out, 0o600); err != nil {
		return err
	}
	if len(res[0].State) > 0 {
		if exists(stateFile) {
			_ = os.Rename(stateFile, stateFile+".bak")
		}
		if err := os.WriteFile(stateFile, res[0].State, 0o600); err != nil {
			return fmt.Errorf("keep the state: %w", err)
		}
	}
	return nil
}

// deploymentDoc reads the generated deployment manifest as JSON.
func (w *work) deploymentDoc() ([]byte, error) {
	data, err := readFile(filepath.Join(w.gen(), deploymentFile))
	if err != nil {
		return nil, fmt.Errorf("the generated deployment manifest: %w", err)
	}
	return yaml.YAMLToJSON(data)
}

// plugins runs the deployment manifest's plugins (seed 002 step 5): in
// order on deploy; on delete the action script's delete function, then
// the list backwards. After a deploy, instances that vanished from the
// list are deleted with the spec they were deployed with.
func (w *work) plugins(ctx context.Context) error {
	if w.call.Action == plugin.ActionDelete && w.notDeployed() {
		return nil
	}
	doc, err := w.deploymentDoc()
	if err != nil {
		return err
	}
	r, err := w.runner(ctx, w.call.Action, "DEPLOYMENTJSON", doc)
	if err != nil {
		return err
	}
	list, _ := r.doc.(map[string]any)["plugins"].([]any)
	if v, ok := r.doc.(map[string]any)["plugins"]; ok && v != nil && list == nil {
		return fmt.Errorf("%s: plugins: expected a list of plugins", filepath.Join(w.gen(), deploymentFile))
	}
	reg := loadRegistry(w.state())
	switch w.call.Action {
	case plugin.ActionDeploy:
		if err := r.list(ctx, list, false); err != nil {
			return err
		}
		if r.hasFunc("deploy") {
			if err := r.shell(ctx, r.stdout, r.stderr, nil, "deploy"); err != nil {
				return err
			}
		}
		current := map[string]bool{}
		for _, in := range r.ran {
			current[in.key] = true
			reg.Plugins[in.key] = in.spec
		}
		for _, k := range reg.Last {
			if current[k] {
				continue
			}
			if err := w.deleteVanished(ctx, r, k, reg.Plugins[k]); err != nil {
				return err
			}
			delete(reg.Plugins, k)
		}
		reg.Last = nil
		for _, in := range r.ran {
			reg.Last = append(reg.Last, in.key)
		}
		reg.Current = reg.Last
	case plugin.ActionDelete:
		if r.hasFunc("delete") {
			if err := r.shell(ctx, r.stdout, r.stderr, nil, "delete"); err != nil {
				return err
			}
		}
		if err := r.list(ctx, list, true); err != nil {
			return err
		}
		for _, in := range r.ran {
			delete(reg.Plugins, in.key)
		}
		reg.Last, reg.Current = nil, nil
	default:
		return fmt.Errorf("%s: action %s is not one of deploy and delete", EntryPlugins, w.call.Action)
	}
	return reg.save(w.state())
}

// deleteVanished deletes an instance a former deploy ran that the list no
// longer has, with its recorded spec.
func (w *work) deleteVanished(ctx context.Context, r *runner, key string, spec any) error {
	m, _ := spec.(map[string]any)
	name, _ := m["name"].(string)
	if name == "" {
		return nil
	}
	fmt.Fprintf(r.stdout, "found deleted plugin %s{%s}\n", name, key)
	entry := map[string]any{name: map[string]any{"key": key, "config": m["config"], "args": m["args"]}}
	dr := &runner{l: r.l, c: r.c, action: plugin.ActionDelete, docVar: r.docVar, doc: r.doc, docRaw: r.docRaw,
		env: r.env, vars: r.vars, stdout: r.stdout, stderr: r.stderr, scripts: r.scripts, funcs: r.funcs}
	return dr.one(ctx, entry, r.stdout, r.stderr)
}

// export evaluates export.yaml with the generated manifest and the stubs
// (seed 002 step 6) into export/<component>/, its files: written with
// their modes; on delete, the component's export, state and generated
// folders go.
func (w *work) export(ctx context.Context) error {
	if w.call.Action == plugin.ActionDelete {
		for _, d := range []string{w.export_(), w.state(), w.gen()} {
			if err := os.RemoveAll(d); err != nil {
				return err
			}
		}
		return nil
	}
	target := filepath.Join(w.export_(), exportFile)
	src := filepath.Join(w.c.Dir, exportFile)
	data, err := readFile(src)
	if errors.Is(err, os.ErrNotExist) {
		return w.finish(os.WriteFile(target, []byte("---\n"), 0o644))
	}
	if err != nil {
		return err
	}
	stubs, err := w.genStubs()
	if err != nil {
		return err
	}
	dep := filepath.Join(w.gen(), deploymentFile)
	depData, err := readFile(dep)
	if err != nil {
		return err
	}
	stubs = append([]Doc{{Name: dep, Data: depData}}, stubs...)
	res, err := Evaluate(ctx, []Job{{Template: Doc{Name: src, Data: data}, Stubs: stubs}})
	if err != nil {
		return fmt.Errorf("process %s: %w", src, err)
	}
	if len(res[0].Issues) > 0 {
		return newPositions().diagnostics(res[0].Issues, "export.yaml").Err()
	}
	out, err := yaml.JSONToYAML(nonEmpty(res[0].JSON))
	if err != nil {
		return err
	}
	if err := os.WriteFile(target, out, 0o644); err != nil {
		return err
	}
	var doc struct {
		Files map[string]struct {
			Path string `json:"path"`
			Data any    `json:"data"`
			Mode any    `json:"mode"`
		} `json:"files"`
	}
	if err := json.Unmarshal(res[0].JSON, &doc); err != nil {
		return fmt.Errorf("%s: files: expected a mapping of names to {path, data, mode}: %w", src, err)
	}
	for name, f := range doc.Files {
		p := f.Path
		if p == "" {
			p = name
		}
		file := filepath.Join(w.export_(), filepath.Clean("/"+p))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		text, _ := scalar(f.Data)
		if _, ok := f.Data.(string); !ok && f.Data != nil {
			b, _ := json.Marshal(f.Data)
			text = string(b)
		}
		fmt.Fprintf(w.call.Stdout, "exporting file %s\n", p)
		os.Remove(file)
		if err := os.WriteFile(file, []byte(text+"\n"), 0o644); err != nil {
			return err
		}
		if f.Mode != nil {
			ms, _ := scalar(f.Mode)
			mode, err := strconv.ParseUint(ms, 8, 32)
			if err != nil {
				return fmt.Errorf("%s: files.%s.mode: expected an octal mode like 0600, got %q", src, name, ms)
			}
			if err := os.Chmod(file, os.FileMode(mode)); err != nil {
				return err
			}
		}
	}
	return w.finish(nil)
}

// finish records a deploy as sow does: state.info and, for a product with
// a SPEC-VERSION, the version deployed.
func (w *work) finish(err error) error {
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(w.state(), "state.info"), []byte("deployed\n"), 0o644); err != nil {
		return err
	}
	if v := w.c.Product.SpecVersion; v != "" {
		return os.WriteFile(filepath.Join(w.state(), specVersion), []byte(v+"\n"), 0o644)
	}
	return nil
}

func nonEmpty(j []byte) []byte {
	if len(j) == 0 || string(j) == "null" {
		return []byte("{}")
	}
	return j
}

func writeJSON(p string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(p, data, 0o600)
}

// registry is sow's plugins.json in the component's state folder: the
// external instances of the last deploy and their specs.
type registry struct {
	Current []string       `json:"current,omitempty"`
	Last    []string       `json:"last,omitempty"`
	Plugins map[string]any `json:"plugins"`
}

func loadRegistry(dir string) *registry {
	r := &registry{}
	if data, err := os.ReadFile(filepath.Join(dir, "plugins.json")); err == nil {
		_ = json.Unmarshal(data, r)
	}
	if r.Plugins == nil {
		r.Plugins = map[string]any{}
	}
	return r
}

func (r *registry) save(dir string) error { return writeJSON(filepath.Join(dir, "plugins.json"), r) }
