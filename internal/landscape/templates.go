package landscape

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// Template is a component blueprint (seed 002, "Templates"): a folder
// holding a template.yaml below a product's templates/ folder. It brings
// stubs, a deployment.yaml and an export.yaml, and may itself use a
// template.
type Template struct {
	Name    string // its path below its product's templates/ folder
	Dir     string
	Product *Product
	File    string // its template.yaml
	// Meta is the effective template.yaml, as JSON.
	Meta []byte
	// Parent is the template it uses ("" for a base template), Stubs its
	// template.stubs.
	Parent    string
	ParentPos manifest.Pos
	Stubs     []stubRef
	// broken says its template.yaml could not be read: the components
	// using it are not planned.
	broken bool
}

// findTemplates walks each product's templates/ folder for template.yaml
// files; a template is named by its path there, across products.
func (l *Landscape) findTemplates(diags *manifest.Diagnostics) {
	for _, p := range l.Products {
		findDefs(filepath.Join(p.Dir, templatesDir), templateFile, "template", diags, func(name, dir, path string) string {
			if o := l.templates[name]; o != nil {
				return o.File
			}
			t := &Template{Name: name, Dir: dir, Product: p, File: path}
			l.templates[name] = t
			l.Templates = append(l.Templates, t)
			return ""
		})
	}
	sort.Slice(l.Templates, func(i, j int) bool { return l.Templates[i].Name < l.Templates[j].Name })
}

// readTemplateMeta takes the fields sow reads from the template node:
// template (the template it uses) and stubs.
func (l *Landscape) readTemplateMeta(t *Template, pos *positions, diags *manifest.Diagnostics) {
	var doc struct {
		Template map[string]any `json:"template"`
	}
	if err := json.Unmarshal(t.Meta, &doc); err != nil {
		diags.Errorf(pos.at(t.File, nil), "", "template.yaml: expected a mapping with a template node: %v", err)
		return
	}
	at := func(field ...string) manifest.Pos { return pos.at(t.File, append([]string{"template"}, field...)) }
	switch v := doc.Template["template"].(type) {
	case nil:
	case string:
		t.Parent, t.ParentPos = v, at("template")
	default:
		diags.Errorf(at("template"), "template.template", "expected a template name, got %s", describe(v))
	}
	if _, ok := doc.Template["imports"]; ok {
		diags.Errorf(at("imports"), "template.imports", "a template has no imports: the components using it import")
	}
	t.Stubs = stubRefs(doc.Template["stubs"], "template.stubs", at, diags)
}

// chainTemplates resolves each active component's template chain: the
// template it names, the one that one names, and so on to a base
// template. An unknown template or a cycle is an error.
func (l *Landscape) chainTemplates(diags *manifest.Diagnostics) {
	for _, c := range l.Components {
		if !c.Active || c.Template == "" {
			continue
		}
		name, at, seen := c.Template, c.TemplatePos, map[string]bool{}
		for name != "" {
			t := l.templates[name]
			if t == nil {
				diags.Errorf(at, "template", "component %s uses template %q, which no templates/ folder of the landscape holds%s", c.Name, name, l.suggestTemplate(name))
				c.broken = true
				break
			}
			if seen[name] {
				var names []string
				for _, x := range c.Chain {
					names = append(names, x.Name)
				}
				diags.Errorf(at, "template", "template cycle: %s → %s", strings.Join(names, " → "), name)
				c.broken = true
				break
			}
			seen[name] = true
			c.Chain = append(c.Chain, t)
			c.broken = c.broken || t.broken
			name, at = t.Parent, t.ParentPos
		}
	}
}

func (l *Landscape) suggestTemplate(name string) string {
	for _, t := range l.Templates {
		if strings.HasSuffix(t.Name, "/"+name) || filepath.Base(t.Name) == name {
			return " (did you mean " + t.Name + "?)"
		}
	}
	return ""
}

// TemplateDirs are env.TEMPLATES: the folders of the component's template
// chain, the base template first (sow's order).
func (c *Component) TemplateDirs() []string {
	if c.Gone != "" {
		return c.recordedTemplates
	}
	out := make([]string, 0, len(c.Chain))
	for i := len(c.Chain) - 1; i >= 0; i-- {
		out = append(out, c.Chain[i].Dir)
	}
	return out
}

// chainFiles are the versions of a control file (deployment.yaml,
// export.yaml) along the component's chain, as spiff processes them: the
// base template's is the template, the others are stubs in front of all
// other stubs, the nearer the later (seed 002: "the files in template2
// will be the processing template followed by the versions from
// template1 and component1").
func (c *Component) chainFiles(file string) []string {
	var out []string
	for i := len(c.Chain) - 1; i >= 0; i-- {
		if p := filepath.Join(c.Chain[i].Dir, file); isFile(p) {
			out = append(out, p)
		}
	}
	if p := filepath.Join(c.Dir, file); isFile(p) {
		out = append(out, p)
	}
	return out
}

// readDeployed reads what sow's state folder says of a component: whether
// it is deployed (state.info) and, for a product with a SPEC-VERSION, the
// version it was deployed with.
func (l *Landscape) readDeployed(c *Component, diags *manifest.Diagnostics) {
	dir := l.StateDir(c.Name)
	c.Deployed = l.isDeployed(c)
	if !c.Deployed || c.Product.SpecVersion == "" {
		return
	}
	c.DeployedVersion = "0"
	p := filepath.Join(dir, specVersion)
	data, err := l.view.readFile(p)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			diags.Errorf(manifest.Pos{File: p}, "", "component %s: read the specification version it was deployed with: %v", c.Name, err)
		}
		return
	}
	v := strings.TrimSpace(string(data))
	if _, err := strconv.Atoi(v); err != nil {
		diags.Errorf(manifest.Pos{File: p, Line: 1, Col: 1}, "", "component %s: the specification version it was deployed with, %q, is no number", c.Name, v)
		return
	}
	c.DeployedVersion = v
}
