package landscape

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOrphanEnv: an orphan's product and templates come from its
// gen/<comp>/env.json as gantry writes it (JSON) and as sow writes it (a
// YAML fragment, "env": {...} without braces around it), the paths it
// recorded below the landscape's folder of then taken below its folder now.
func TestOrphanEnv(t *testing.T) {
	for _, tc := range []struct{ name, env string }{
		{"gantry", `{"env":{"<<":"(( &temporary &inject ))","ROOTDIR":"/then","PRODUCT":"gh","PRODUCTDIR":"/then/crop/greenhouses/gh","TEMPLATES":["/then/crop/templates/t"]}}`},
		{"sow", `"env": { "<<": "(( &temporary &inject ))", "ROOTDIR": "/then", "PRODUCT": "gh", "PRODUCTDIR": "/then/crop/greenhouses/gh", "TEMPLATES": ["/then/crop/templates/t"], "lookupfile": "(( |f|->lookup_file(f,__ctx.DIR, reverse(_.TEMPLATES) || [])[0] ))", "MIGRATE": true }` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			crop := &Product{Name: mainProduct, Dir: filepath.Join(root, "crop")}
			gh := &Product{Name: "gh", Dir: filepath.Join(root, "crop", "greenhouses", "gh"), Parent: crop}
			l := &Landscape{Root: root, Products: []*Product{crop, gh}}
			if err := os.MkdirAll(l.GenDir("c"), 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(l.GenDir("c"), "env.json"), tc.env)
			c, err := l.orphan("c")
			if err != nil {
				t.Fatal(err)
			}
			if c.Product != gh {
				t.Errorf("product %+v, want gh", c.Product)
			}
			if want := filepath.Join(gh.Dir, componentsDir, "c"); c.Gone != want {
				t.Errorf("gone %s, want %s", c.Gone, want)
			}
			if want := filepath.Join(root, "crop", "templates", "t"); len(c.recordedTemplates) != 1 || c.recordedTemplates[0] != want {
				t.Errorf("templates %v, want [%s]", c.recordedTemplates, want)
			}
		})
	}
}
