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
	deploymentFile = "deployment.yaml"
	exportFile     = "export.yaml"
	specVersion    = "SPEC-VERSION"
	mainProduct    = "<main>"
)

// Landscape is a loaded landscape: its folders, its effective
// configuration (gen/config.json) and its components, by name.
type Landscape struct {
	Root string // the landscape folder, absolute
	// Config is the effective installation configuration as JSON: the
	// acre.yaml processed with the crop's acre.yaml as template.
	Config     []byte
	Products   []*Product
	Components []*Component // sorted by name
	byName     map[string]*Component
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
	Meta     []byte
	Active   bool
	Imports  []Import
	Stubs    []string // resolved stub files, in component.stubs order
	Template string
	// Setup is component.plugins: run with prepare before the deployment
	// is evaluated and with cleanup after the deletion.
	Setup []any
}

// Import is an import of a component: the label its exports appear under.
type Import struct {
	Label, Component string
	Pos              manifest.Pos
}

// Component returns the component called name, or nil.
func (l *Landscape) Component(name string) *Component { return l.byName[name] }

// Dirs are sow's folders of a component at the landscape's root.
func (l *Landscape) GenDir(comp string) string    { return filepath.Join(l.Root, "gen", comp) }
func (l *Landscape) StateDir(comp string) string  { return filepath.Join(l.Root, "state", comp) }
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
func Open(ctx context.Context, root string) (*Landscape, manifest.Diagnostics) {
	var diags manifest.Diagnostics
	pos := newPositions()
	l := &Landscape{Root: root, byName: map[string]*Component{}}
	acre := filepath.Join(root, AcreFile)
	acreData, err := readFile(acre)
	if err != nil {
		diags.Errorf(manifest.Pos{File: acre}, "", "read the landscape configuration: %v", err)
		return nil, diags
	}
	// The crop's acre.yaml is the template, the landscape's the stub.
	job := Job{Template: Doc{Name: acre, Data: acreData}}
	if tmpl := filepath.Join(l.RootProductDir(), AcreFile); exists(tmpl) {
		data, err := readFile(tmpl)
		if err != nil {
			diags.Errorf(manifest.Pos{File: tmpl}, "", "read the configuration template: %v", err)
			return nil, diags
		}
		job = Job{Template: Doc{Name: tmpl, Data: data}, Stubs: []Doc{{Name: acre, Data: acreData}}}
	}
	res, err := Evaluate(ctx, []Job{job})
	if err != nil {
		diags.Errorf(manifest.Pos{File: acre}, "", "process the landscape configuration: %v", err)
		return nil, diags
	}
	if len(res[0].Issues) > 0 {
		return nil, append(diags, pos.diagnostics(res[0].Issues, "acre.yaml")...)
	}
	l.Config = res[0].JSON
	if len(l.Config) == 0 || string(l.Config) == "null" {
		l.Config = []byte("{}")
	}
	l.findProducts(l.RootProductDir(), mainProduct, nil, &diags)
	l.findComponents(&diags)
	if diags.HasErrors() {
		return nil, diags
	}
	l.evalComponents(ctx, pos, &diags)
	// Imports are checked even when some component.yaml failed, so that
	// every problem is reported at once.
	l.checkImports(&diags)
	if diags.HasErrors() {
		return nil, diags
	}
	return l, diags
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
	if data, err := os.ReadFile(filepath.Join(dir, specVersion)); err == nil {
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
		base := filepath.Join(p.Dir, componentsDir)
		_ = filepath.WalkDir(base, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Name() != componentFile {
				return nil
			}
			dir := filepath.Dir(path)
			rel, _ := filepath.Rel(base, dir)
			name := filepath.ToSlash(rel)
			if name == "." {
				diags.Errorf(manifest.Pos{File: path}, "", "a component.yaml directly in %s: components live in folders below it", base)
				return nil
			}
			if o := l.byName[name]; o != nil {
				diags.Errorf(manifest.Pos{File: path}, "", "component %s is defined twice (also in %s)", name, o.File)
				return nil
			}
			c := &Component{Name: name, Dir: dir, Product: p, File: path, Active: true}
			l.byName[name] = c
			l.Components = append(l.Components, c)
			return nil
		})
	}
	sort.Slice(l.Components, func(i, j int) bool { return l.Components[i].Name < l.Components[j].Name })
}

// evalComponents evaluates every component.yaml with the configuration and
// the env node (COMPONENT, PRODUCT) as stubs, in one child process.
func (l *Landscape) evalComponents(ctx context.Context, pos *positions, diags *manifest.Diagnostics) {
	jobs := make([]Job, len(l.Components))
	for i, c := range l.Components {
		data, err := readFile(c.File)
		if err != nil {
			diags.Errorf(manifest.Pos{File: c.File}, "", "read: %v", err)
			continue
		}
		env, _ := json.Marshal(map[string]any{"env": map[string]string{"COMPONENT": c.Name, "PRODUCT": c.Product.Name}})
		jobs[i] = Job{Template: Doc{Name: c.File, Data: data}, Stubs: []Doc{
			{Name: filepath.Join(l.Root, "gen", "config.json"), Data: l.Config},
			{Name: "env", Data: env},
		}}
	}
	if diags.HasErrors() {
		return
	}
	results, err := Evaluate(ctx, jobs)
	if err != nil {
		diags.Errorf(manifest.Pos{File: l.Root}, "", "evaluate the components' component.yaml: %v", err)
		return
	}
	for i, c := range l.Components {
		if len(results[i].Issues) > 0 {
			*diags = append(*diags, pos.diagnostics(results[i].Issues, "component.yaml")...)
			continue
		}
		c.Meta = results[i].JSON
		l.readMeta(c, pos, diags)
	}
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
	if t, ok := m["template"].(string); ok {
		c.Template = t
	}
	switch v := m["imports"].(type) {
	case nil:
	case []any:
		for i, e := range v {
			ip := at("imports", "["+strconv.Itoa(i)+"]")
			switch x := e.(type) {
			case string:
				c.Imports = append(c.Imports, Import{Label: x, Component: x, Pos: ip})
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
	switch v := m["stubs"].(type) {
	case nil:
	case []any:
		for i, e := range v {
			s, ok := e.(string)
			ip := at("stubs", "["+strconv.Itoa(i)+"]")
			if !ok {
				diags.Errorf(ip, "component.stubs", "expected a file name, got %T", e)
				continue
			}
			f := l.lookupStub(c, s)
			if f == "" {
				diags.Errorf(ip, "component.stubs", "stub %q not found (looked in the component, its greenhouses and the landscape)", s)
				continue
			}
			c.Stubs = append(c.Stubs, f)
		}
	default:
		diags.Errorf(at("stubs"), "component.stubs", "expected a list of file names, got %T", v)
	}
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

// lookupStub finds a stub file: as given when absolute, else in the
// component, its product and the products around it, and the landscape.
func (l *Landscape) lookupStub(c *Component, name string) string {
	if filepath.IsAbs(name) {
		if exists(name) {
			return name
		}
		return ""
	}
	for _, d := range append(append([]string{c.Dir}, productDirs(c)...), l.Root, sowRoot()) {
		if d == "" {
			continue
		}
		if p := filepath.Join(d, name); exists(p) {
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
