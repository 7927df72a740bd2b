package landscape

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/internal/atomicfile"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plugin"
)

// The built-in plugins a landscape component's plugin list is made of:
// each is a step of the plan (seed 002's processing chain, one step per
// entry of the component's lists).
const (
	// EntrySetup is an entry of component.plugins: prepare before the
	// deployment is evaluated (deploy and delete), cleanup after a delete.
	EntrySetup = "sow.setup"
	// EntryDeployment evaluates deployment.yaml: the manifest, the &state.
	EntryDeployment = "sow.deployment"
	// EntryPlugin is an entry of the manifest's plugin list.
	EntryPlugin = "sow.plugin"
	// EntryAction runs the deploy or delete function of an action script.
	EntryAction = "sow.action"
	// EntryVanished deletes an instance the last deploy ran that the
	// list no longer has.
	EntryVanished = "sow.vanished"
	// EntryExport evaluates export.yaml (deploy) or removes the
	// component's folders (delete).
	EntryExport = "sow.export"
	// EntryUnplanned stands for a plugin list that cannot be planned.
	EntryUnplanned = "sow.unplanned"
)

func init() {
	for _, name := range []string{EntrySetup, EntryDeployment, EntryPlugin, EntryAction, EntryVanished, EntryExport, EntryUnplanned} {
		plugin.Register(name, step(name), plugin.ForLists)
		manifest.RegisterKeyless(name)
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

// config is an entry's config: the landscape, the component and what the
// entry does. Landscape is the folder the plan was made in, which planning
// finds the landscape by; a run takes the folder of the stack it runs.
type config struct {
	Landscape string   `json:"landscape"`
	Component string   `json:"component"`
	At        []int    `json:"at,omitempty"`
	Phase     string   `json:"phase,omitempty"`
	Name      string   `json:"name,omitempty"`
	Key       string   `json:"key,omitempty"`
	Hidden    bool     `json:"hidden,omitempty"`
	Function  string   `json:"function,omitempty"`
	Shape     []*shape `json:"shape,omitempty"`
}

func configOf(s *plugin.Spec) (*config, error) {
	var c config
	data, err := json.Marshal(s.Config)
	if err == nil {
		err = json.Unmarshal(data, &c)
	}
	if err != nil || c.Landscape == "" || c.Component == "" {
		return nil, fmt.Errorf("%s: its config names no landscape and component", s.Name)
	}
	return &c, nil
}

// asConfig is a config as the plain data a plugin entry holds.
func asConfig(c config) map[string]any {
	data, _ := json.Marshal(c)
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	return m
}

// title names an instance: the plugin, and its key when that says more.
func title(name, key string) string {
	if key != "" && key != name {
		return name + " (" + key + ")"
	}
	return name
}

// EntryLabel says what an entry does, for plans and displays.
func (s step) EntryLabel(action string, spec *plugin.Spec) string {
	c, err := configOf(spec)
	if err != nil {
		return string(s)
	}
	with := func(what string) string {
		if action == "" {
			return what
		}
		return action + " " + what
	}
	switch string(s) {
	case EntrySetup:
		return c.Phase + " " + title(c.Name, c.Key)
	case EntryDeployment:
		if action == "" {
			return "deployment manifest"
		}
		return "evaluate the deployment manifest"
	case EntryPlugin:
		if action == "" && c.Key != "" {
			return c.Key // a lane of a parallel block
		}
		return with(title(c.Name, c.Key))
	case EntryAction:
		return "action script: " + c.Function
	case EntryVanished:
		if action == "" {
			return c.Key
		}
		return "delete " + title(c.Name, c.Key) + ": no longer in the plugin list"
	case EntryExport:
		if action == plugin.ActionDelete {
			return "remove the component's gen, state and export folders"
		}
		if action == "" {
			return "exports"
		}
		return "evaluate the exports"
	case EntryUnplanned:
		return "plugin list not known yet"
	}
	return string(s)
}

// PlanEntry leaves out what an entry does not do for the action, and
// refuses a plugin list that cannot be planned.
func (s step) PlanEntry(action string, spec *plugin.Spec) (bool, error) {
	c, err := configOf(spec)
	if err != nil {
		return false, err
	}
	switch string(s) {
	case EntrySetup:
		return c.Phase == plugin.ActionPrepare || action == plugin.ActionDelete, nil
	case EntryAction:
		return c.Function == action, nil
	case EntryUnplanned:
		v, ok := loaded.Load(c.Landscape)
		if !ok {
			return false, fmt.Errorf("component %s: its plugin list cannot be planned", c.Component)
		}
		if v.(*Landscape).handlerLater {
			return true, nil // the installation handler's prepare may bring the exports
		}
		comp := v.(*Landscape).Component(c.Component)
		if comp == nil || comp.Plan == nil || comp.Plan.Unknown == nil {
			return false, fmt.Errorf("component %s: its plugin list cannot be planned", c.Component)
		}
		if action == plugin.ActionDelete && !comp.Deployed {
			return false, nil // nothing to delete
		}
		return false, &plugin.PositionedError{Pos: comp.Plan.Pos, Field: "plugins", Err: comp.Plan.Unknown}
	}
	return true, nil
}

// Run carries out the step for the component its config names.
func (s step) Run(ctx context.Context, c *plugin.Call) error {
	if c.Entry == nil {
		return errors.New("this plugin serves the plugin lists of sow landscapes only")
	}
	cfg, err := configOf(c.Entry)
	if err != nil {
		return err
	}
	// The landscape is the stack being run, never the one the config
	// names: an orphan's config comes from the state, which recorded the
	// folder the landscape had when it was deployed (a copy or a move of
	// it would act on that folder, or another landscape's).
	if c.Instance == nil || c.Instance.RootDir == "" {
		return errors.New("this plugin runs only in a plan of a sow landscape (no stack folder given)")
	}
	root := c.Instance.RootDir
	l, err := lookup(ctx, root)
	if err != nil {
		return fmt.Errorf("open the landscape %s: %w", root, err)
	}
	comp := l.Component(cfg.Component)
	if comp == nil && c.Action == plugin.ActionDelete {
		// Its folder is gone: it is deleted from sow's records of it.
		if comp, err = l.orphan(cfg.Component); err != nil {
			return err
		}
	}
	if comp == nil {
		return fmt.Errorf("component %s is no longer in the landscape %s", cfg.Component, root)
	}
	w := &work{l: l, c: comp, call: c, cfg: cfg}
	// A delete of a component that is not deployed does nothing (sow:
	// neither exports nor generated files).
	if c.Action == plugin.ActionDelete && w.notDeployed() {
		if string(s) == EntryDeployment {
			fmt.Fprintf(c.Stdout, "component %s already deleted or not yet deployed\n", comp.Name)
		}
		return nil
	}
	switch string(s) {
	case EntrySetup:
		return w.setup(ctx)
	case EntryDeployment:
		return w.deployment(ctx)
	case EntryPlugin:
		return w.plugin(ctx)
	case EntryAction:
		return w.action(ctx)
	case EntryVanished:
		return w.vanished(ctx)
	case EntryExport:
		return w.export(ctx)
	case EntryUnplanned:
		return fmt.Errorf("component %s: its plugin list was not known when the plan was made", comp.Name)
	}
	return fmt.Errorf("unknown step %s", s)
}

// work is one step of one component.
type work struct {
	l    *Landscape
	c    *Component
	call *plugin.Call
	cfg  *config
}

func (w *work) gen() string     { return w.l.GenDir(w.c.Name) }
func (w *work) state() string   { return w.l.StateDir(w.c.Name) }
func (w *work) export_() string { return w.l.ExportDir(w.c.Name) }

// vars are sow's environment variables of the component (sow's
// ACTION_setup): every one is always set, so that a plugin never writes
// below an empty path.
func (w *work) vars() ([]string, error) {
	spec, deployed, err := w.l.versions(w.c)
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
		"CONFIG=" + w.l.ConfigFile(), "META=" + filepath.Join(w.l.Root, "gen", "meta.json"),
		"CURRENT=" + w.c.Dir, "COMPONENT=" + w.c.Name,
		"PRODUCT=" + w.c.Product.Name, "PRODUCTDIR=" + w.c.Product.Dir,
		"GENDIR=" + w.gen(), "STATEDIR=" + w.state(), "EXPORTDIR=" + w.export_(),
		"SOW=" + filepath.Dir(lib), "SOWLIB=" + lib,
		"SPECVERSION=" + spec, "DEPLOYEDVERSION=" + strconv.Itoa(deployed), "MIGRATE=" + migrate, "MIGRATION=" + migrate,
		"TEMPLATES=" + strings.Join(w.c.TemplateDirs(), " "),
		// Plugins that call spiff (sow's kubectl and helm) evaluate as
		// the landscape was: with interpolation, as sow exports it.
		"SPIFF_FEATURES=" + spiffFeatureList(),
		"PLUGININSTANCE=", "PLUGINCONFIG=", "DEPLOYMEMT=", "DEPLOYMENT=",
	}, nil
}

// runner is a runner of this step's entries, for sow's action and the
// document its entries come from (written to docFile for DEPLOYMEMT).
func (w *work) runner(ctx context.Context, action, docVar, docFile string, doc []byte) (*runner, error) {
	vars, err := w.vars()
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, fmt.Errorf("read the %s document: %w", docVar, err)
	}
	r := &runner{l: w.l, c: w.c, action: action, docVar: docVar, doc: v, docRaw: doc, docFile: docFile,
		env: w.call.Env, vars: vars, stdout: w.call.Stdout, stderr: w.call.Stderr,
		record: func(action, key string, spec map[string]any) error {
			switch action {
			case plugin.ActionDeploy:
				return w.registry(func(reg *registry) { reg.set(key, spec) })
			case plugin.ActionDelete:
				return w.registry(func(reg *registry) { reg.drop(key) })
			}
			return nil
		}}
	if err := r.loadScripts(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// dirs creates the component's folders and writes the configuration
// (CONFIG), which plugins of other components may be reading meanwhile:
// it is replaced whole, and only when it changed.
func (w *work) dirs() error {
	for _, d := range []string{w.gen(), w.state(), w.export_()} {
		if err := makeDirs(d, 0o755); err != nil {
			return err
		}
	}
	if old, err := readFile(w.l.ConfigFile()); err == nil && bytes.Equal(old, w.l.Config) {
		return nil
	}
	return atomicfile.Write(w.l.ConfigFile(), w.l.Config, writtenMode(w.l.ConfigFile()), false)
}

// notDeployed is sow's check before a delete: neither exports nor
// generated files.
func (w *work) notDeployed() bool {
	_, e1 := os.Stat(filepath.Join(w.export_(), exportFile))
	_, e2 := os.Stat(w.gen())
	return e1 != nil && e2 != nil
}

// setup runs an entry of component.plugins with its phase's action.
func (w *work) setup(ctx context.Context) error {
	if w.c.Gone != "" && !isFile(filepath.Join(w.gen(), "component.json")) {
		return w.missingRecord("the component.yaml its setup plugins ran with", filepath.Join(w.gen(), "component.json"))
	}
	var meta map[string]any
	_ = json.Unmarshal(w.c.Meta, &meta)
	comp, _ := meta["component"].(map[string]any)
	e, err := callAt(comp["plugins"], w.cfg.At)
	if err != nil {
		return fmt.Errorf("component.plugins: %w", err)
	}
	// The entry is the one the plan showed (a run in another process
	// reads the component.yaml again), or nothing runs.
	now := *e
	if !keyless(now.Name) {
		now.resolveKey()
	}
	if now.Name != w.cfg.Name || now.Key != w.cfg.Key {
		return fmt.Errorf("component.plugins %v: the plan runs %s there, component.yaml now has %s", w.cfg.At, title(w.cfg.Name, w.cfg.Key), title(now.Name, now.Key))
	}
	if err := w.dirs(); err != nil {
		return err
	}
	docFile := filepath.Join(w.gen(), "component.json")
	if err := os.WriteFile(docFile, w.c.Meta, 0o600); err != nil {
		return err
	}
	r, err := w.runner(ctx, w.cfg.Phase, "COMPONENTJSON", docFile, w.c.Meta)
	if err != nil {
		return err
	}
	return r.one(ctx, e)
}

// deployment evaluates deployment.yaml (seed 002 steps 3 and 4): the
// imports gathered, the env node written, the manifest generated with the
// last state and checked against the plan, the new state kept.
func (w *work) deployment(ctx context.Context) error {
	if w.c.Gone != "" {
		return w.recordedDeployment()
	}
	in, err := w.l.gather(w.c, false)
	if err != nil {
		return err
	}
	stubs, err := w.l.genStubs(w.c, in)
	if err != nil {
		return err
	}
	job, err := w.l.deploymentJob(w.c, stubs)
	if err != nil {
		return err
	}
	res, err := evaluateYAML(ctx, job, "deployment.yaml")
	if err != nil {
		return err
	}
	manifestJSON := nonEmpty(res.JSON)
	var doc map[string]any
	if err := json.Unmarshal(manifestJSON, &doc); err != nil {
		return fmt.Errorf("%s: the deployment manifest is no mapping: %w", job.Template.Name, err)
	}
	now, err := shapeOf(doc["plugins"])
	if err != nil {
		return fmt.Errorf("deployment manifest of %s: plugins: %w", w.c.Name, err)
	}
	if err := fits(w.cfg.Shape, now, ""); err != nil {
		return fmt.Errorf("the plugin list of %s is no longer the one planned: %w; the exports it imports changed since the plan was made: run the %s again to plan with them", w.c.Name, err, w.call.Action)
	}
	// Nothing is written before the manifest is known to fit the plan: a
	// component whose gen/ folder exists counts as deployed for a delete.
	if err := w.dirs(); err != nil {
		return err
	}
	for name, data := range map[string][]byte{"import.json": in.imports, "env.json": in.env} {
		if err := os.WriteFile(filepath.Join(w.gen(), name), data, 0o600); err != nil {
			return err
		}
	}
	cd := filepath.Join(w.gen(), "compdeploy.json")
	if in.compdeploy != nil {
		if err := os.WriteFile(cd, in.compdeploy, 0o600); err != nil {
			return err
		}
	} else {
		os.Remove(cd)
	}
	out := res.YAML
	target := filepath.Join(w.gen(), deploymentFile)
	if old, err := readFile(target); err == nil {
		_ = os.WriteFile(target+".bak", old, 0o600)
		if string(old) != string(out) {
			fmt.Fprintln(w.call.Stdout, "deployment has changed")
		}
	}
	if err := os.WriteFile(target, out, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(w.gen(), "deployment.json"), manifestJSON, 0o600); err != nil {
		return err
	}
	stateFile := filepath.Join(w.state(), "state.yaml")
	if len(res.State) > 0 {
		// The old state stays whole until the new one replaces it: a
		// crash never leaves the component without one.
		if old, err := readFile(stateFile); err == nil {
			_ = atomicfile.Write(stateFile+".bak", old, 0o600, false)
		}
		if err := atomicfile.Write(stateFile, res.State, 0o600, true); err != nil {
			return fmt.Errorf("keep the state: %w", err)
		}
	}
	return w.listStarts()
}

// recordedDeployment stands for the evaluation of the deployment manifest
// of a component whose folder is gone, on delete: its plugins are deleted
// with the manifest it was last deployed with (gen/<comp>/deployment.json),
// which must still have the plan's shape.
func (w *work) recordedDeployment() error {
	p := filepath.Join(w.gen(), "deployment.json")
	data, err := readFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return w.missingRecord("the deployment manifest it was deployed with", p)
	}
	if err != nil {
		return err
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: the deployment manifest is no JSON mapping: %w", p, err)
	}
	now, err := shapeOf(doc["plugins"])
	if err != nil {
		return fmt.Errorf("%s: plugins: %w", p, err)
	}
	if err := fits(w.cfg.Shape, now, ""); err != nil {
		return fmt.Errorf("%s: the plugin list it records is not the one the plan was made with: %w", w.rel(p), err)
	}
	fmt.Fprintf(w.call.Stdout, "component %s is no longer in the landscape (%s is gone): deleting it with the manifest it was deployed with (%s)\n", w.c.Name, w.rel(w.c.Gone), w.rel(p))
	return w.listStarts()
}

// listStarts begins a new run of the plugin list (sow's pluginlist reset):
// from now on the plugins change what the component deployed, so until the
// exports are evaluated (or its records go) its state.info says the deploy
// or delete has not finished. sow writes it when its plugins fail or are
// aborted; written before, it holds after a kill too.
func (w *work) listStarts() error {
	if err := w.markUnfinished(); err != nil {
		return err
	}
	return w.registry(func(reg *registry) { reg.Current = nil })
}

// evaluateYAML evaluates a component's deployment.yaml or export.yaml
// (what) to YAML when its step runs, in a child process; the file's
// problems are the step's error, at their places.
func evaluateYAML(ctx context.Context, job Job, what string) (Result, error) {
	job.WantYAML = true
	res, err := Evaluate(ctx, []Job{job})
	if err != nil {
		return Result{}, fmt.Errorf("process %s: %w", job.Template.Name, err)
	}
	if len(res[0].Issues) > 0 {
		return Result{}, newPositions().diagnostics(res[0].Issues, what).Err()
	}
	return res[0], nil
}

// listRunner is a runner of entries of the deployment manifest this run
// generated (the step evaluating it wrote it), for an action.
func (w *work) listRunner(ctx context.Context, action string) (*runner, error) {
	p := filepath.Join(w.gen(), "deployment.json")
	data, err := readFile(p)
	if err != nil {
		return nil, fmt.Errorf("the deployment manifest (the step evaluating it writes it): %w", err)
	}
	return w.runner(ctx, action, "DEPLOYMENTJSON", p, data)
}

// plugin runs one entry of the manifest's plugin list.
func (w *work) plugin(ctx context.Context) error {
	r, err := w.listRunner(ctx, w.call.Action)
	if err != nil {
		return err
	}
	list, _ := r.doc.(map[string]any)
	e, err := callAt(list["plugins"], w.cfg.At)
	if err != nil {
		return fmt.Errorf("plugins: %w", err)
	}
	if e.Name != w.cfg.Name {
		return fmt.Errorf("plugins %v: the plan runs %s there, the manifest has %s", w.cfg.At, w.cfg.Name, e.Name)
	}
	return r.one(ctx, e)
}

// action runs the deploy or delete function of the action scripts, when
// they define it.
func (w *work) action(ctx context.Context) error {
	r, err := w.listRunner(ctx, w.call.Action)
	if err != nil {
		return err
	}
	if !r.hasFunc(w.cfg.Function) {
		if w.c.Gone != "" && len(r.scripts) == 0 {
			// The plan has this step, so the component had an action
			// script: its own, gone with its folder.
			return w.missingRecord("its action script, whose "+w.cfg.Function+" function this step runs", filepath.Join(w.c.Gone, "action"))
		}
		return nil
	}
	return r.shell(ctx, r.stdout, r.stderr, nil, w.cfg.Function)
}

// vanished deletes an instance the last deploy ran, with the spec it was
// deployed with, unless the run's list has it (its key was not known
// when the plan was made).
func (w *work) vanished(ctx context.Context) error {
	reg := w.readRegistry()
	for _, k := range reg.Current {
		if k == w.cfg.Key {
			fmt.Fprintf(w.call.Stdout, "instance %s is still in the plugin list\n", k)
			return nil
		}
	}
	spec, _ := reg.Plugins[w.cfg.Key].(map[string]any)
	recorded := str(spec["name"])
	// sow records a hidden instance under its name in the list (-name).
	name, hidden := plainName(recorded)
	if name == "" {
		return w.registry(func(reg *registry) { reg.drop(w.cfg.Key) })
	}
	r, err := w.listRunner(ctx, plugin.ActionDelete)
	if err != nil {
		return err
	}
	fmt.Fprintf(r.stdout, "found deleted plugin %s{%s}\n", recorded, w.cfg.Key)
	if err := r.external(ctx, &call{Name: name, Hidden: hidden, Key: w.cfg.Key, Path: str(spec["path"]), Config: spec["config"], Args: strs(spec["args"])}); err != nil {
		return err
	}
	return w.registry(func(reg *registry) { reg.drop(w.cfg.Key) })
}

// export evaluates export.yaml with the generated manifest and the stubs
// (seed 002 step 6) into export/<component>/, its files: written with
// their modes; on delete, the component's export, state and generated
// folders go.
func (w *work) export(ctx context.Context) error {
	if w.call.Action == plugin.ActionDelete {
		for _, base := range []string{"export", "state", "gen"} {
			top := filepath.Join(w.l.Root, base)
			d := filepath.Join(top, filepath.FromSlash(w.c.Name))
			if err := os.RemoveAll(d); err != nil {
				return err
			}
			removeEmptyParents(top, filepath.Dir(d))
		}
		return nil
	}
	// The run's instances are now the last deploy's (sow's pluginlist
	// update).
	if err := w.registry(func(reg *registry) { reg.Last = append([]string(nil), reg.Current...) }); err != nil {
		return err
	}
	target := filepath.Join(w.export_(), exportFile)
	in, err := w.l.gather(w.c, false)
	if err != nil {
		return err
	}
	stubs, err := w.l.genStubs(w.c, in)
	if err != nil {
		return err
	}
	dep := filepath.Join(w.gen(), deploymentFile)
	depData, err := readFile(dep)
	if err != nil {
		return err
	}
	job, ok, err := chainJob(w.c, exportFile, append([]Doc{{Name: dep, Data: depData}}, stubs...))
	if err != nil {
		return err
	}
	// The exports often hold secrets: the file gets the umask's mode, or
	// the narrower one it has.
	mode := writtenMode(target)
	if !ok {
		return w.finish(atomicfile.Write(target, []byte("---\n"), mode, true))
	}
	if old, err := readFile(target); err == nil {
		_ = atomicfile.Write(target+".bak", old, mode, false)
	}
	res, err := evaluateYAML(ctx, job, "export.yaml")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(target, res.YAML, mode, true); err != nil {
		return err
	}
	if err := w.exportFiles(job.Template.Name, res.JSON); err != nil {
		return err
	}
	return w.finish(nil)
}

// removeEmptyParents removes dir and the folders above it up to top (not
// top itself) as long as they are empty: the folders of a component named
// by a path (store/db) that held only it. A folder another component's
// files are in stays.
func removeEmptyParents(top, dir string) {
	dirsMu.Lock()
	defer dirsMu.Unlock()
	for dir != top && strings.HasPrefix(dir, top+string(filepath.Separator)) {
		if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			return // not empty: the folders above it are not either
		}
		dir = filepath.Dir(dir)
	}
}

// dirsMu keeps removeEmptyParents from taking away a folder between the
// steps of another component's makeDirs (gen/store between its creation
// and that of gen/store/new, as an orphan store/old goes in the run that
// deploys store/new).
var dirsMu sync.RWMutex

// makeDirs is os.MkdirAll, never while removeEmptyParents runs.
func makeDirs(path string, perm os.FileMode) error {
	dirsMu.RLock()
	defer dirsMu.RUnlock()
	return os.MkdirAll(path, perm)
}

// finish records a deploy as sow does: state.info and, for a product with
// a SPEC-VERSION, the version deployed; and reports the exports' digest as
// the component's output (secret: exports may hold secrets).
func (w *work) finish(err error) error {
	if err != nil {
		return err
	}
	info := filepath.Join(w.state(), stateInfo)
	if err := atomicfile.Write(info, []byte(infoDeployed+"\n"), writtenMode(info), true); err != nil {
		return err
	}
	if v := w.c.Product.SpecVersion; v != "" {
		p := filepath.Join(w.state(), specVersion)
		if err := atomicfile.Write(p, []byte(v+"\n"), writtenMode(p), true); err != nil {
			return err
		}
	}
	if w.call.Report != nil {
		w.call.Report(map[string]string{ExportsOutput: w.exportsDigest()}, []string{ExportsOutput})
	}
	return nil
}

// markUnfinished records in state.info that the component's deploy or
// delete has not finished (sow's "error"), so that sow's deploy -n and
// gantry's --resume run it again should it fail or be interrupted, even
// killed. Only a component sow's records call deployed is marked: a first
// deploy that fails leaves no state.info, as one that never ran (sow would
// count the component deployed at version 0 and refuse a spec-version jump
// on the next deploy).
func (w *work) markUnfinished() error {
	info := filepath.Join(w.state(), stateInfo)
	if !isFile(info) {
		return nil
	}
	if err := atomicfile.Write(info, []byte("error\n"), writtenMode(info), true); err != nil {
		return fmt.Errorf("record in %s that the component's %s did not finish: %w", w.rel(info), w.call.Action, err)
	}
	return nil
}

// exportFiles writes the files: section of the exports below the export
// folder, each with its mode from the start (a secret is never readable by
// others meanwhile). Every mode is checked before any file is written.
func (w *work) exportFiles(src string, exports []byte) error {
	var doc struct {
		Files map[string]struct {
			Path string `json:"path"`
			Data any    `json:"data"`
			Mode any    `json:"mode"`
		} `json:"files"`
	}
	if err := json.Unmarshal(exports, &doc); err != nil {
		return fmt.Errorf("%s: files: expected a mapping of names to {path, data, mode}: %w", src, err)
	}
	names := make([]string, 0, len(doc.Files))
	modes := map[string]os.FileMode{}
	for name, f := range doc.Files {
		names = append(names, name)
		if f.Mode == nil {
			continue
		}
		mode, err := exportMode(f.Mode)
		if err != nil {
			return fmt.Errorf("%s: files.%s.mode: %w", src, name, err)
		}
		modes[name] = mode
	}
	sort.Strings(names)
	for _, name := range names {
		f := doc.Files[name]
		p := f.Path
		if p == "" {
			p = name
		}
		file := filepath.Join(w.export_(), filepath.Clean("/"+p))
		if err := makeDirs(filepath.Dir(file), 0o755); err != nil {
			return err
		}
		text, _ := scalar(f.Data)
		if _, ok := f.Data.(string); !ok && f.Data != nil {
			b, _ := json.Marshal(f.Data)
			text = string(b)
		}
		fmt.Fprintf(w.call.Stdout, "exporting file %s\n", p)
		mode, ok := modes[name]
		if !ok {
			mode = writtenMode(file)
		}
		// Removed first: a link there is replaced, not written through.
		os.Remove(file)
		if err := atomicfile.Write(file, []byte(text+"\n"), mode, false); err != nil {
			return err
		}
	}
	return nil
}

// writtenMode is the mode of a file sow writes without giving one (a
// shell's redirection): what the umask lets a new file have, and never
// more than the file there has (a user who narrowed it keeps it narrow).
func writtenMode(path string) os.FileMode {
	mode := atomicfile.Umasked(0o666)
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		mode &= fi.Mode().Perm()
	}
	return mode
}

// exportMode is the mode an exported file's mode field gives: octal
// digits as sow's chmod takes them. A number YAML may have changed is
// refused, with how to quote it: YAML makes an unquoted mode a number, and
// one with a leading 0 an octal one, so that 0400 comes as 256, which
// chmod would take as 0256 (others may write), and 04755 as 2541. A number
// whose digits are a file's mode while the number itself is none (600,
// 755, 4755: as modes 01130, 01363 and beyond 07777) is taken as sow
// takes it, its digits octal.
func exportMode(v any) (os.FileMode, error) {
	if n, ok := v.(float64); ok {
		text := strconv.FormatFloat(n, 'f', -1, 64)
		digits, err := strconv.ParseUint(text, 8, 32)
		asNumber := n == float64(uint64(n)) && n <= 0o7777 && fileMode(uint64(n))
		if err != nil || len(text) > 4 || !fileMode(digits) || asNumber {
			return 0, numericMode(n)
		}
		v = text
	}
	text, err := scalar(v)
	if _, isString := v.(string); err != nil || !isString {
		return 0, fmt.Errorf("expected an octal mode like \"0600\", got %s", describe(v))
	}
	m, err := strconv.ParseUint(text, 8, 32)
	if err != nil || m > 0o7777 {
		return 0, fmt.Errorf("expected an octal mode like \"0600\", got %q", text)
	}
	mode := os.FileMode(m & 0o777)
	for bit, flag := range map[uint64]os.FileMode{0o4000: os.ModeSetuid, 0o2000: os.ModeSetgid, 0o1000: os.ModeSticky} {
		if m&bit != 0 {
			mode |= flag
		}
	}
	return mode, nil
}

// fileMode reports whether m is a mode someone gives a file: its owner
// may read it, and has every right its group has, which has every right
// others have; no sticky bit (it means nothing on a file); setuid and
// setgid only with the right to run it.
func fileMode(m uint64) bool {
	owner, group, other := m>>6&7, m>>3&7, m&7
	switch {
	case m > 0o7777, m&0o1000 != 0, owner&4 == 0:
		return false
	case owner&group != group, group&other != other:
		return false
	case m&0o4000 != 0 && owner&1 == 0, m&0o2000 != 0 && group&1 == 0:
		return false
	}
	return true
}

// numericMode is the error of a mode given as the number n: the modes it
// may have been written as, quoted.
func numericMode(n float64) error {
	text := strconv.FormatFloat(n, 'f', -1, 64)
	// The two readings of what was typed: an unquoted 0600, which YAML
	// reads as 384, or the digits 600 themselves. A reading above 0777
	// (a sticky or setuid mode nobody meant) is left out when the other
	// reading is a plain mode.
	type reading struct {
		mode uint64
		say  string
	}
	var readings []reading
	if n == float64(uint64(n)) && n <= 0o7777 {
		readings = append(readings, reading{uint64(n), fmt.Sprintf("\"%04o\" for an unquoted %#o (YAML reads it as the number %s)", uint64(n), uint64(n), text)})
	}
	if m, err := strconv.ParseUint(text, 8, 32); err == nil && len(text) <= 4 && (len(readings) == 0 || m != readings[0].mode) {
		readings = append(readings, reading{m, fmt.Sprintf("\"%s\" for %s", strings.Repeat("0", 4-len(text))+text, text)})
	}
	plain := slices.ContainsFunc(readings, func(r reading) bool { return r.mode <= 0o777 })
	var ways []string
	for _, r := range readings {
		if r.mode <= 0o777 || !plain {
			ways = append(ways, r.say)
		}
	}
	if len(ways) == 0 {
		ways = []string{`like "0600"`}
	}
	return fmt.Errorf("the number %s is no mode gantry takes: write the mode quoted, %s", text, strings.Join(ways, ", "))
}

// registries serializes the changes to each component's plugins.json:
// entries of a parallel block record their instances at once.
var registries sync.Map

func (w *work) lockRegistry() func() {
	v, _ := registries.LoadOrStore(w.state(), &sync.Mutex{})
	mu := v.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

func (w *work) readRegistry() *registry {
	defer w.lockRegistry()()
	return loadRegistry(nil, w.state()) // as the run left it
}

// registry changes plugins.json.
func (w *work) registry(change func(*registry)) error {
	defer w.lockRegistry()()
	if err := makeDirs(w.state(), 0o755); err != nil {
		return err
	}
	reg := loadRegistry(nil, w.state())
	change(reg)
	return reg.save(w.state())
}

// set records an instance the run deployed (sow's pluginlist deploy): the
// latest first.
func (r *registry) set(key string, spec any) {
	r.Plugins[key] = spec
	r.Current = append([]string{key}, without(r.Current, key)...)
}

// drop forgets an instance (sow's pluginlist delete).
func (r *registry) drop(key string) {
	delete(r.Plugins, key)
	r.Current = without(r.Current, key)
	r.Last = without(r.Last, key)
}

func without(l []string, s string) []string {
	out := l[:0:0]
	for _, x := range l {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func strs(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		s, _ := scalar(x)
		out = append(out, s)
	}
	return out
}

func nonEmpty(j []byte) []byte {
	if len(j) == 0 || string(j) == "null" {
		return []byte("{}")
	}
	return j
}
