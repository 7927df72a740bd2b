package elaborate

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// TemplateFile marks a template (blueprint) folder.
const TemplateFile = "template.yaml"

// findTemplate looks for templates/<name>/template.yaml in the search folders.
func findTemplate(name string, search []string) string {
	for _, d := range search {
		p := filepath.Join(d, "templates", filepath.FromSlash(name), TemplateFile)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// applyTemplate fills a component in from its template chain (sow's
// templates): the base-most template first, then each template on it, then
// the component; later ones override earlier ones. It returns the merged
// component and the chain's folders, nearest first.
func applyTemplate(c *manifest.Component, search []string, diags *manifest.Diagnostics) (*manifest.Component, []string) {
	var chain []*manifest.Component
	var dirs []string
	seen := map[string]bool{}
	name, from := c.Template, c.Pos
	for name != "" {
		path := findTemplate(name, search)
		if path == "" {
			var tried []string
			for _, d := range search {
				tried = append(tried, filepath.Join(d, "templates", name, TemplateFile))
			}
			diags.Errorf(from, "template", "template %q not found (looked for %s)", name, strings.Join(tried, ", "))
			return c, nil
		}
		if seen[path] {
			diags.Errorf(from, "template", "template cycle through %q", name)
			return c, nil
		}
		seen[path] = true
		t, ds := manifest.LoadTemplate(path)
		*diags = append(*diags, ds...)
		if t == nil {
			return c, nil
		}
		chain = append(chain, t)
		dirs = append(dirs, filepath.Dir(path))
		name, from = t.Template, t.Pos
	}
	merged := &manifest.Component{}
	for i := len(chain) - 1; i >= 0; i-- {
		overlay(merged, chain[i])
	}
	overlay(merged, c)
	merged.Pos, merged.File, merged.Dir, merged.Template = c.Pos, c.File, c.Dir, c.Template
	return merged, append([]string{c.Dir}, dirs...)
}

// overlay lays src over dst: parameters and outputs merge by name (src wins),
// capabilities add up, every other field of src that is set replaces dst's.
func overlay(dst, src *manifest.Component) {
	dst.Version, dst.Kind = 1, manifest.KindComponent
	dst.Parameters = mergeParams(dst.Parameters, src.Parameters)
	dst.Outputs = mergeOutputs(dst.Outputs, src.Outputs)
	dst.Requires = appendUnique(dst.Requires, src.Requires...)
	dst.Provides = appendUnique(dst.Provides, src.Provides...)
	if len(src.Plugins) > 0 {
		dst.Plugins = src.Plugins
	}
	if len(src.SetupPlugins) > 0 {
		dst.SetupPlugins = src.SetupPlugins
	}
	if src.Templates != nil {
		dst.Templates = src.Templates
	}
	m := reflect.ValueOf(&dst.Meta).Elem()
	sm := reflect.ValueOf(src.Meta)
	for i := 0; i < sm.NumField(); i++ {
		if f := sm.Field(i); !f.IsZero() {
			m.Field(i).Set(f)
		}
	}
	l := reflect.ValueOf(&dst.Lifecycle).Elem()
	sl := reflect.ValueOf(src.Lifecycle)
	for i := 0; i < sl.NumField(); i++ {
		if f := sl.Field(i); !f.IsZero() {
			l.Field(i).Set(f)
		}
	}
}

// mergeParams merges a template's parameters with those laid over them by
// name, field by field: what the later one sets wins, the rest (env:, say)
// stays.
func mergeParams(dst, src []manifest.Parameter) []manifest.Parameter {
	out := append([]manifest.Parameter(nil), dst...)
	for _, p := range src {
		merged := false
		for i := range out {
			if out[i].Name == p.Name {
				mergeParameter(&out[i], &p)
				out[i].Pos = p.Pos
				merged = true
				break
			}
		}
		if !merged {
			out = append(out, p)
		}
	}
	return out
}
