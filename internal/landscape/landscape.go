package landscape

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// sow's names for the files and folders of a landscape (seed 002, "The
// Filesystem Structure").
const (
	AcreFile       = "acre.yaml"
	cropDir        = "crop"
	componentsDir  = "components"
	templatesDir   = "templates"
	greenhouses    = "greenhouses"
	componentFile  = "component.yaml"
	templateFile   = "template.yaml"
	deploymentFile = "deployment.yaml"
	exportFile     = "export.yaml"
	specVersion    = "SPEC-VERSION"
	// stateInfo is sow's record of a component's last deploy or delete:
	// there once it ran, saying infoDeployed when that finished.
	stateInfo    = "state.info"
	infoDeployed = "deployed"
	mainProduct  = "<main>"
)

// Landscape is a loaded landscape: its folders, its effective
// configuration (gen/config.json) and its components, by name.
type Landscape struct {
	Root string // the landscape folder, absolute
	// Graph says only the component graph was read (Options.Graph).
	Graph bool
	// Config is the effective installation configuration as JSON: the
	// acre.yaml processed with the crop's acre.yaml as template.
	Config     []byte
	Products   []*Product
	Components []*Component // sorted by name
	Templates  []*Template  // sorted by name
	// Handler is the configuration's meta.installationHandler (seed 002):
	// called with prepare before a deploy or undeploy and finalize after
	// it, its path relative to the landscape.
	Handler *manifest.InstallationHandler
	// handlerLater: Options.HandlerLater, and there is a handler;
	// handlerCalled: Options.HandlerCalled.
	handlerLater, handlerCalled bool
	// view is what Open and Result read sow's records through; nil once
	// the landscape is opened: its steps read the folder.
	view      *recordView
	byName    map[string]*Component
	templates map[string]*Template
}

// Options say how much of a landscape Open reads.
type Options struct {
	// Graph reads what the component graph needs and no more (gantry
	// order): the configuration, the components, whether they are active
	// and what they import. Stubs are not looked up and no deployment
	// manifest is evaluated, as sow's order does not.
	Graph bool
	// HandlerLater says the configuration's installation handler will
	// prepare before the run and the landscape be opened again then: a
	// plugin list that depends on exports not there yet is not refused
	// now (prepare may bring them), only when it is opened again.
	HandlerLater bool
	// HandlerCalled says the installation handler's prepare ran before
	// the landscape was opened (a run reads it again then): its records
	// are what prepare left.
	HandlerCalled bool
	// Records, when set, are sow's records as a client's plan read them
	// (elaborate.Result.Records): a worker rebuilding the plan of a run
	// under way reads them instead of the folder's, which the run
	// changes as it goes.
	Records []byte
}

// Product is an installation source: the crop, or a greenhouse in it.
type Product struct {
	Name string // "<main>" for the crop, else its folder's name
	Dir  string
	// Parent is the product it is nested in (nil for the crop).
	Parent *Product
	// SpecVersion is its SPEC-VERSION, "" without one.
	SpecVersion string
}

// Component is a sow component with its effective component.yaml.
type Component struct {
	Name    string // its path below its product's components/ folder
	Dir     string
	Product *Product
	File    string // its component.yaml
	// Meta is the effective component.yaml (COMPONENTJSON), as JSON.
	Meta    []byte
	Active  bool
	Imports []Import
	// StubRefs are component.stubs as written; Stubs the files they name
	// with the stubs of the template chain first (sow's order), found
	// unless Options.Graph.
	StubRefs []stubRef
	Stubs    []string
	Template string
	// TemplatePos is where component.template is; Chain the templates it
	// names, the nearest first.
	TemplatePos manifest.Pos
	Chain       []*Template
	// Setup is component.plugins: run with prepare before the deployment
	// is evaluated and with cleanup after the deletion.
	Setup []any
	// Deployed says sow's state folder records a deploy (state.info,
	// whatever it says: sow's version checks count a failed one too);
	// DeployedVersion is then the product's spec version it was made with
	// ("0" without a record of one).
	Deployed        bool
	DeployedVersion string
	// Plan is the component's plugin lists as the plan runs them, worked
	// out from its deployment manifest when the landscape was opened (not
	// with Options.Graph).
	Plan *planned
	// Gone is the folder a component had that the landscape no longer
	// has, rebuilt from sow's records to be deleted (orphan); "" for the
	// landscape's components. recordedTemplates are then its env.TEMPLATES
	// as recorded.
	Gone              string
	recordedTemplates []string
	// broken says a problem of the component itself was reported (its
	// component.yaml, imports, templates, stubs or records): it is not
	// planned, while the others are, so that every problem is reported at
	// once.
	broken bool
}

// stubRef is a stub named by a component.yaml or template.yaml.
type stubRef struct {
	Name string
	Pos  manifest.Pos
}

// Import is an import of a component: the label its exports appear under.
type Import struct {
	Label, Component string
	Pos              manifest.Pos
}

// Component returns the component called name, or nil.
func (l *Landscape) Component(name string) *Component { return l.byName[name] }

// ConfigFile is gen/config.json, the effective configuration.
func (l *Landscape) ConfigFile() string { return filepath.Join(l.Root, "gen", "config.json") }

// GenDir is a component's folder of generated files (sow's GENDIR): they
// can be deleted at any time.
func (l *Landscape) GenDir(comp string) string { return filepath.Join(l.Root, "gen", comp) }

// StateDir is a component's folder of state to keep (sow's STATEDIR).
func (l *Landscape) StateDir(comp string) string { return filepath.Join(l.Root, "state", comp) }

// ExportDir is a component's folder of exports for the components
// importing it (sow's EXPORTDIR).
func (l *Landscape) ExportDir(comp string) string { return filepath.Join(l.Root, "export", comp) }

// RootProductDir is the crop.
func (l *Landscape) RootProductDir() string { return filepath.Join(l.Root, cropDir) }

// IsLandscape reports whether path names a landscape: its folder (holding
// an acre.yaml and a crop/) or its acre.yaml. It returns the root.
func IsLandscape(path string) (string, bool) {
	root := path
	if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
		if filepath.Base(path) != AcreFile {
			return "", false
		}
		root = filepath.Dir(path)
	}
	if fi, err := os.Stat(filepath.Join(root, AcreFile)); err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	if fi, err := os.Stat(filepath.Join(root, cropDir)); err != nil || !fi.IsDir() {
		return "", false
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", false
	}
	return abs, true
}

// Open loads the landscape at root: its configuration, products and
// components, each component.yaml evaluated with the configuration as stub.
// Every problem found is returned; the landscape is nil when there are
// errors.
func Open(ctx context.Context, root string, opts Options) (*Landscape, manifest.Diagnostics) {
	var diags manifest.Diagnostics
	pos := newPositions()
	l := &Landscape{Root: root, Graph: opts.Graph, byName: map[string]*Component{}, templates: map[string]*Template{}}
	acre := filepath.Join(root, AcreFile)
	var err error
	if l.view, err = newRecordView(root, opts.Records); err != nil {
		diags.Errorf(manifest.Pos{File: acre}, "", "%v", err)
		return nil, diags
	}
	acreData, err := readFile(acre)
	if err != nil {
		diags.Errorf(manifest.Pos{File: acre}, "", "read the landscape configuration: %v", err)
		return nil, diags
	}
	// The crop's acre.yaml is the template, the landscape's the stub.
	job := Job{Template: Doc{Name: acre, Data: acreData}, Reading: true}
	if tmpl := filepath.Join(l.RootProductDir(), AcreFile); exists(tmpl) {
		data, err := readFile(tmpl)
		if err != nil {
			diags.Errorf(manifest.Pos{File: tmpl}, "", "read the configuration template: %v", err)
			return nil, diags
		}
		job = Job{Template: Doc{Name: tmpl, Data: data}, Stubs: []Doc{{Name: acre, Data: acreData}}, Reading: true}
	}
	res, err := Evaluate(ctx, []Job{job})
	if err != nil {
		diags.Errorf(manifest.Pos{File: acre}, "", "process the landscape configuration: %v", err)
		return nil, diags
	}
	if len(res[0].Issues) > 0 {
		diags = append(diags, pos.diagnostics(res[0].Issues, "acre.yaml")...)
		l.checkWithoutConfig(ctx, pos, &diags)
		return nil, diags
	}
	l.Config = res[0].JSON
	if len(l.Config) == 0 || string(l.Config) == "null" {
		l.Config = []byte("{}")
	}
	l.readHandler(acre, pos, &diags)
	l.handlerLater = opts.HandlerLater && l.Handler != nil
	l.handlerCalled = opts.HandlerCalled
	l.findProducts(l.RootProductDir(), mainProduct, nil, &diags)
	l.findComponents(&diags)
	l.findTemplates(&diags)
	// Problems found so far (a bad SPEC-VERSION, a name defined twice)
	// leave the control files to evaluate: every problem is reported.
	l.evalComponents(ctx, pos, &diags)
	// Imports are checked even when some component.yaml failed, so that
	// every problem is reported at once.
	l.checkImports(&diags)
	l.chainTemplates(&diags)
	if opts.Graph {
		if diags.HasErrors() {
			return nil, diags
		}
		return l, diags
	}
	// Components with problems of their own are not planned; the others
	// are, so that a mistake in one component.yaml does not hide those in
	// another's deployment.yaml.
	for _, c := range l.Components {
		if c.Active && !c.broken {
			n := len(diags)
			l.resolveStubs(c, &diags)
			l.readDeployed(c, &diags)
			c.broken = len(diags) > n
		}
	}
	l.planComponents(ctx, pos, &diags)
	if diags.HasErrors() {
		return nil, diags
	}
	return l, diags
}

// checkWithoutConfig reports, when the configuration (acre.yaml) cannot be
// evaluated, what is wrong in the landscape regardless of it: names defined
// twice, SPEC-VERSIONs that are no number, control files (component.yaml,
// template.yaml, deployment.yaml, export.yaml) that are no YAML. Their
// evaluation needs the configuration, so it waits until acre.yaml is mended:
// it would report the configuration's absence in every file.
func (l *Landscape) checkWithoutConfig(ctx context.Context, pos *positions, diags *manifest.Diagnostics) {
	l.findProducts(l.RootProductDir(), mainProduct, nil, diags)
	l.findComponents(diags)
	l.findTemplates(diags)
	var jobs []Job
	var kinds []string
	add := func(dir, file string) {
		p := filepath.Join(dir, file)
		if !isFile(p) {
			return
		}
		if job, ok := parseOnly(p, diags); ok {
			jobs, kinds = append(jobs, job), append(kinds, file)
		}
	}
	for _, c := range l.Components {
		for _, f := range []string{componentFile, deploymentFile, exportFile} {
			add(c.Dir, f)
		}
	}
	for _, t := range l.Templates {
		for _, f := range []string{templateFile, deploymentFile, exportFile} {
			add(t.Dir, f)
		}
	}
	if len(jobs) == 0 {
		return
	}
	results, err := Evaluate(ctx, jobs)
	if err != nil {
		diags.Errorf(manifest.Pos{File: l.Root}, "", "read the control files: %v", err)
		return
	}
	for i, res := range results {
		*diags = append(*diags, pos.diagnostics(res.Issues, kinds[i])...)
	}
}

// parseOnly is the job that reads a control file as YAML and no more; false
// when the file cannot be read (said in diags).
func parseOnly(path string, diags *manifest.Diagnostics) (Job, bool) {
	data, err := readFile(path)
	if err != nil {
		diags.Errorf(manifest.Pos{File: path}, "", "read: %v", err)
		return Job{}, false
	}
	return Job{Template: Doc{Name: path, Data: data}, ParseOnly: true}, true
}

// findProducts records the product at dir and, recursively, the
// greenhouses in it.
func (l *Landscape) findProducts(dir, name string, parent *Product, diags *manifest.Diagnostics) {
	p := &Product{Name: name, Dir: dir, Parent: parent}
	for _, o := range l.Products {
		if o.Name == name {
			diags.Errorf(manifest.Pos{File: dir}, "", "greenhouse %s is defined twice (also at %s)", name, o.Dir)
			return
		}
	}
	if data, err := readFile(filepath.Join(dir, specVersion)); err != nil && !errors.Is(err, os.ErrNotExist) {
		diags.Errorf(manifest.Pos{File: filepath.Join(dir, specVersion)}, "", "read the product's specification version: %v", err)
	} else if err == nil {
		v := strings.TrimSpace(string(data))
		if _, err := strconv.Atoi(v); err != nil {
			diags.Errorf(manifest.Pos{File: filepath.Join(dir, specVersion), Line: 1, Col: 1}, "", "expected a plain number (the product's specification version), got %q", v)
		} else {
			p.SpecVersion = v
		}
	}
	l.Products = append(l.Products, p)
	entries, _ := os.ReadDir(filepath.Join(dir, greenhouses))
	for _, e := range entries {
		if e.IsDir() {
			l.findProducts(filepath.Join(dir, greenhouses, e.Name()), e.Name(), p, diags)
		}
	}
}

// findComponents walks each product's components/ folder for
// component.yaml files; a component is named by its path there.
func (l *Landscape) findComponents(diags *manifest.Diagnostics) {
	for _, p := range l.Products {
		findDefs(filepath.Join(p.Dir, componentsDir), componentFile, "component", diags, func(name, dir, path string) string {
			if o := l.byName[name]; o != nil {
				return o.File
			}
			c := &Component{Name: name, Dir: dir, Product: p, File: path, Active: true}
			l.byName[name] = c
			l.Components = append(l.Components, c)
			return ""
		})
	}
	sort.Slice(l.Components, func(i, j int) bool { return l.Components[i].Name < l.Components[j].Name })
}

// findDefs walks base for the files that define a component or a template
// (file: component.yaml, template.yaml), each named by its folder's path
// below base. add records one and returns "", or the file that already
// defines the name.
func findDefs(base, file, what string, diags *manifest.Diagnostics, add func(name, dir, path string) (other string)) {
	_ = filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			// A folder that cannot be read (its permissions, a path past
			// the system's limit) may hold definitions: said, not
			// skipped. A product without the folder has none.
			if !(path == base && errors.Is(err, fs.ErrNotExist)) {
				diags.Errorf(manifest.Pos{File: path}, "", "cannot look for %ss here: %v", what, err)
			}
			return nil
		}
		if d.IsDir() || d.Name() != file {
			return nil
		}
		dir := filepath.Dir(path)
		rel, _ := filepath.Rel(base, dir)
		name := filepath.ToSlash(rel)
		if name == "." {
			diags.Errorf(manifest.Pos{File: path}, "", "a %s directly in %s: %ss live in folders below it", file, base, what)
			return nil
		}
		if other := add(name, dir, path); other != "" {
			diags.Errorf(manifest.Pos{File: path}, "", "%s %s is defined twice (also in %s)", what, name, other)
		}
		return nil
	})
}

// evalComponents evaluates every component.yaml with the configuration and
// the env node (COMPONENT, PRODUCT) as stubs, in one child process.
// Each template.yaml is evaluated with the configuration as stub, in the
// same child process.
func (l *Landscape) evalComponents(ctx context.Context, pos *positions, diags *manifest.Diagnostics) {
	jobs := make([]Job, 0, len(l.Components)+len(l.Templates))
	// done takes each job's result: a component's or a template's.
	var done []func(Result)
	for _, c := range l.Components {
		data, err := readFile(c.File)
		if err != nil {
			diags.Errorf(manifest.Pos{File: c.File}, "", "read: %v", err)
			c.broken = true
			continue
		}
		env, _ := json.Marshal(map[string]any{"env": map[string]string{"COMPONENT": c.Name, "PRODUCT": c.Product.Name}})
		// sow's stubs of a component.yaml: every lib/templates/component.yaml
		// of the tool, the landscape, the component and its products (the
		// crop's first), then the configuration and the env node.
		var stubs []Doc
		for _, f := range l.componentStubs(c) {
			data, err := readFile(f)
			if err != nil {
				diags.Errorf(manifest.Pos{File: f}, "", "read: %v", err)
				c.broken = true
				continue
			}
			stubs = append(stubs, Doc{Name: f, Data: data})
		}
		if c.broken {
			continue
		}
		stubs = append(stubs, Doc{Name: l.ConfigFile(), Data: l.Config}, Doc{Name: "env", Data: env})
		jobs = append(jobs, Job{Template: Doc{Name: c.File, Data: data}, Stubs: stubs, Reading: true})
		done = append(done, func(res Result) {
			c.broken = take(res, "component.yaml", pos, diags, func(meta []byte) {
				c.Meta = meta
				l.readMeta(c, pos, diags)
			})
		})
	}
	for _, t := range l.Templates {
		data, err := readFile(t.File)
		if err != nil {
			diags.Errorf(manifest.Pos{File: t.File}, "", "read: %v", err)
			t.broken = true
			continue
		}
		jobs = append(jobs, Job{Template: Doc{Name: t.File, Data: data}, Stubs: []Doc{{Name: l.ConfigFile(), Data: l.Config}}, Reading: true})
		done = append(done, func(res Result) {
			t.broken = take(res, "template.yaml", pos, diags, func(meta []byte) {
				t.Meta = meta
				l.readTemplateMeta(t, pos, diags)
			})
		})
	}
	results, err := Evaluate(ctx, jobs)
	if err != nil {
		diags.Errorf(manifest.Pos{File: l.Root}, "", "evaluate the components' component.yaml: %v", err)
		for _, c := range l.Components {
			c.broken = true
		}
		return
	}
	for i, res := range results {
		done[i](res)
	}
}

// take reads the result of a control file's evaluation: its issues are
// reported, or read takes the document in. It reports whether anything
// was wrong with the file.
func take(res Result, what string, pos *positions, diags *manifest.Diagnostics, read func(doc []byte)) bool {
	n := len(*diags)
	if len(res.Issues) > 0 {
		*diags = append(*diags, pos.diagnostics(res.Issues, what)...)
	} else {
		read(res.JSON)
	}
	return len(*diags) > n
}

// componentStubs are the lib/templates/component.yaml files sow gives a
// component.yaml as stubs, in its order.
func (l *Landscape) componentStubs(c *Component) []string {
	dirs := productDirs(c)
	// sow looks in the products from the crop inwards, then the component,
	// the landscape and the tool; every file found goes in front.
	var order []string
	for i := len(dirs) - 1; i >= 0; i-- {
		order = append(order, dirs[i])
	}
	order = append(order, c.Dir, l.Root, sowRoot())
	var out []string
	for _, d := range order {
		if d == "" {
			continue
		}
		if f := filepath.Join(d, "lib", "templates", componentFile); isFile(f) {
			out = append([]string{f}, out...)
		}
	}
	return out
}

// readMeta takes the fields sow reads from the component node.
func (l *Landscape) readMeta(c *Component, pos *positions, diags *manifest.Diagnostics) {
	var doc struct {
		Component map[string]any `json:"component"`
	}
	if err := json.Unmarshal(c.Meta, &doc); err != nil {
		diags.Errorf(pos.at(c.File, nil), "", "component.yaml: expected a mapping with a component node: %v", err)
		return
	}
	m := doc.Component
	at := func(field ...string) manifest.Pos { return pos.at(c.File, append([]string{"component"}, field...)) }
	switch v := m["active"].(type) {
	case nil:
	case bool:
		c.Active = v
	case string:
		c.Active = v == "true"
	default:
		diags.Errorf(at("active"), "component.active", "expected a boolean, got %T", v)
	}
	switch t := m["template"].(type) {
	case nil:
	case string:
		c.Template, c.TemplatePos = t, at("template")
	default:
		diags.Errorf(at("template"), "component.template", "expected a template name, got %T", t)
	}
	switch v := m["imports"].(type) {
	case nil:
	case []any:
		for i, e := range v {
			ip := at("imports", "["+strconv.Itoa(i)+"]")
			switch x := e.(type) {
			case string:
				c.Imports = append(c.Imports, Import{Label: x, Component: x, Pos: ip})
			case nil:
				// (( cond ? "comp" :~~ )) leaves nothing when cond is false.
			case map[string]any:
				for _, k := range sortedKeys(x) {
					name, ok := x[k].(string)
					if !ok {
						diags.Errorf(ip, "component.imports", "import %q: expected a component name, got %T", k, x[k])
						continue
					}
					c.Imports = append(c.Imports, Import{Label: strings.TrimSpace(k), Component: strings.TrimSpace(name), Pos: ip})
				}
			default:
				diags.Errorf(ip, "component.imports", "expected a component name or label: name, got %T", e)
			}
		}
	case map[string]any:
		for _, k := range sortedKeys(v) {
			name, _ := v[k].(string)
			c.Imports = append(c.Imports, Import{Label: k, Component: name, Pos: at("imports", k)})
		}
	default:
		diags.Errorf(at("imports"), "component.imports", "expected a list of components (or label: component), got %T", v)
	}
	c.StubRefs = stubRefs(m["stubs"], "component.stubs", at, diags)
	switch v := m["plugins"].(type) {
	case nil:
	case []any:
		c.Setup = v
	default:
		diags.Errorf(at("plugins"), "component.plugins", "expected a list of plugins, got %T", v)
	}
}

// productDirs are the folders of a component's product and the products it
// is nested in, nearest first.
func productDirs(c *Component) []string {
	var out []string
	for p := c.Product; p != nil; p = p.Parent {
		out = append(out, p.Dir)
	}
	return out
}

// stubRefs reads a stubs field: a list of file names.
func stubRefs(v any, field string, at func(...string) manifest.Pos, diags *manifest.Diagnostics) []stubRef {
	var out []stubRef
	switch v := v.(type) {
	case nil:
	case []any:
		for i, e := range v {
			s, ok := e.(string)
			ip := at("stubs", "["+strconv.Itoa(i)+"]")
			if !ok || s == "" {
				diags.Errorf(ip, field, "expected a file name, got %s", describe(e))
				continue
			}
			out = append(out, stubRef{Name: s, Pos: ip})
		}
	default:
		diags.Errorf(at("stubs"), field, "expected a list of file names, got %s", describe(v))
	}
	return out
}

// resolveStubs finds the stub files of a component: the stubs of its
// template chain (the base template's first) and its own, as sow orders
// them.
func (l *Landscape) resolveStubs(c *Component, diags *manifest.Diagnostics) {
	var refs []stubRef
	for _, t := range c.Chain {
		refs = append(append([]stubRef(nil), t.Stubs...), refs...)
	}
	refs = append(refs, c.StubRefs...)
	for _, r := range refs {
		f := l.lookupStub(c, r.Name)
		if f == "" {
			diags.Errorf(r.Pos, "stubs", "stub %q not found (looked in the component, its templates, its greenhouses, the landscape and gantry's sow tool root)", r.Name)
			continue
		}
		c.Stubs = append(c.Stubs, f)
	}
}

// lookupStub finds a stub file: as given when absolute, else in the
// component (seed 002: locally first), its templates, its product and the
// products around it, the landscape and the tool root.
func (l *Landscape) lookupStub(c *Component, name string) string {
	if filepath.IsAbs(name) {
		if isFile(name) {
			return name
		}
		return ""
	}
	dirs := []string{c.Dir}
	for _, t := range c.Chain {
		dirs = append(dirs, t.Dir)
	}
	for _, d := range append(append(dirs, productDirs(c)...), l.Root, sowRoot()) {
		if d == "" {
			continue
		}
		if p := filepath.Join(d, name); isFile(p) {
			return p
		}
	}
	return ""
}

// checkImports checks that each import names an active component and that
// the imports form no cycle; inactive components are left out.
func (l *Landscape) checkImports(diags *manifest.Diagnostics) {
	for _, c := range l.Components {
		if !c.Active {
			continue
		}
		labels := map[string]bool{}
		n := len(*diags)
		for _, im := range c.Imports {
			o := l.byName[im.Component]
			switch {
			case im.Component == "":
				diags.Errorf(im.Pos, "component.imports", "import %q names no component", im.Label)
			case o == nil:
				diags.Errorf(im.Pos, "component.imports", "component %s imports %q, which is no component of this landscape%s", c.Name, im.Component, l.suggest(im.Component))
			case !o.Active:
				diags.Errorf(im.Pos, "component.imports", "component %s imports %s, which is not active in this landscape", c.Name, im.Component)
			case o == c:
				diags.Errorf(im.Pos, "component.imports", "component %s imports itself", c.Name)
			}
			if labels[im.Label] {
				diags.Errorf(im.Pos, "component.imports", "label %q is used twice", im.Label)
			}
			labels[im.Label] = true
		}
		c.broken = c.broken || len(*diags) > n
	}
	if diags.HasErrors() {
		return // a cycle search needs every import to name a component
	}
	if cyc := l.cycle(); cyc != nil {
		first := l.byName[cyc[0]]
		var p manifest.Pos
		for _, im := range first.Imports {
			if im.Component == cyc[1] {
				p = im.Pos
			}
		}
		diags.Errorf(p, "component.imports", "import cycle: %s", strings.Join(cyc, " → "))
	}
}

// cycle returns a cycle of imports among active components, or nil.
func (l *Landscape) cycle() []string {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	var found []string
	var visit func(n string) bool
	visit = func(n string) bool {
		color[n] = grey
		stack = append(stack, n)
		for _, im := range l.byName[n].Imports {
			switch color[im.Component] {
			case grey:
				for i, s := range stack {
					if s == im.Component {
						found = append(append([]string(nil), stack[i:]...), im.Component)
					}
				}
				return true
			case white:
				if visit(im.Component) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[n] = black
		return false
	}
	for _, c := range l.Components {
		if c.Active && color[c.Name] == white && visit(c.Name) {
			return found
		}
	}
	return nil
}

func (l *Landscape) suggest(name string) string {
	for _, c := range l.Components {
		if strings.HasSuffix(c.Name, "/"+name) || filepath.Base(c.Name) == name {
			return fmt.Sprintf(" (did you mean %s?)", c.Name)
		}
	}
	return ""
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// maxFile bounds a control file: they are configuration, not data.
const maxFile = 16 << 20

// readFile reads a regular file of bounded size: a FIFO or a device named
// as a control file must not hang or flood gantry.
func readFile(p string) ([]byte, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	if fi.Size() > maxFile {
		return nil, fmt.Errorf("%d bytes; control files are at most %d", fi.Size(), maxFile)
	}
	return os.ReadFile(p)
}

// readHandler takes meta.installationHandler from the configuration: a
// path (relative to the landscape) and an optional config.
func (l *Landscape) readHandler(acre string, pos *positions, diags *manifest.Diagnostics) {
	var doc struct {
		Meta struct {
			Handler map[string]any `json:"installationHandler"`
		} `json:"meta"`
	}
	if json.Unmarshal(l.Config, &doc) != nil || doc.Meta.Handler == nil {
		return
	}
	at := []string{"meta", "installationHandler"}
	p, ok := pos.find(acre, at)
	if !ok {
		if cp, ok := pos.find(filepath.Join(l.RootProductDir(), AcreFile), at); ok {
			p = cp
		}
	}
	path, _ := doc.Meta.Handler["path"].(string)
	if path == "" {
		diags.Errorf(p, "meta.installationHandler.path", "expected the path of the installation handler, got %s", describe(doc.Meta.Handler["path"]))
		return
	}
	// sow takes a relative path from the landscape's folder, wherever the
	// configuration that names it was written.
	if !filepath.IsAbs(path) {
		path = filepath.Join(l.Root, path)
	}
	l.Handler = &manifest.InstallationHandler{Pos: p, Path: path, Config: doc.Meta.Handler["config"]}
}
