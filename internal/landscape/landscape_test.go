package landscape

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// TestDefinitionsFound: components and templates are found below every
// product's folders, named by their path there; a name defined twice and
// a definition directly in components/ or templates/ are errors, all
// reported.
func TestDefinitionsFound(t *testing.T) {
	root := t.TempDir()
	for file, text := range map[string]string{
		"acre.yaml":                                         "landscape: {}\n",
		"crop/components/a/component.yaml":                  "component: {}\n",
		"crop/components/nested/b/component.yaml":           "component: {}\n",
		"crop/components/component.yaml":                    "component: {}\n",
		"crop/greenhouses/gh/components/a/component.yaml":   "component: {}\n",
		"crop/templates/t/template.yaml":                    "template: {}\n",
		"crop/greenhouses/gh/templates/t/template.yaml":     "template: {}\n",
		"crop/greenhouses/gh/templates/template.yaml":       "template: {}\n",
		"crop/greenhouses/gh/templates/other/template.yaml": "template: {}\n",
		"crop/greenhouses/gh/components/c/component.yaml":   "component: {}\n",
		"crop/greenhouses/gh/components/c/more/notes.txt":   "not a definition\n",
		"crop/greenhouses/gh/components/c/d/component.yaml": "component: {}\n",
	} {
		p := filepath.Join(root, file)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, p, text)
	}
	l := &Landscape{Root: root, byName: map[string]*Component{}, templates: map[string]*Template{}}
	var diags manifest.Diagnostics
	l.findProducts(l.RootProductDir(), mainProduct, nil, &diags)
	l.findComponents(&diags)
	l.findTemplates(&diags)
	var names []string
	for _, c := range l.Components {
		names = append(names, c.Product.Name+":"+c.Name)
	}
	if got := strings.Join(names, " "); got != "<main>:a gh:c gh:c/d <main>:nested/b" {
		t.Errorf("components: %s", got)
	}
	names = nil
	for _, tm := range l.Templates {
		names = append(names, tm.Product.Name+":"+tm.Name)
	}
	if got := strings.Join(names, " "); got != "gh:other <main>:t" {
		t.Errorf("templates: %s", got)
	}
	text := diags.Err().Error()
	for _, want := range []string{
		"crop/greenhouses/gh/components/a/component.yaml: component a is defined twice (also in " + filepath.Join(root, "crop/components/a/component.yaml") + ")",
		"crop/components/component.yaml: a component.yaml directly in " + filepath.Join(root, "crop/components") + ": components live in folders below it",
		"crop/greenhouses/gh/templates/t/template.yaml: template t is defined twice",
		"crop/greenhouses/gh/templates/template.yaml: a template.yaml directly in",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in:\n%s", want, text)
		}
	}
	if _, diags := Open(context.Background(), root, Options{Graph: true}); !diags.HasErrors() {
		t.Error("Open took a landscape with names defined twice")
	}
}
