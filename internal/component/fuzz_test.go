package component

import (
	"testing"

	"github.com/gantry-dev/gantry/internal/params"
)

// FuzzRender renders arbitrary templates of every kind, and reads the names
// they read as a plan does: errors are fine, panics and hangs are not, and the render's bounds hold (lowered, so that
// an input reaching them takes milliseconds).
func FuzzRender(f *testing.F) {
	smallLimits(f)
	for _, s := range []string{
		"${db.host}", "{{db.host}}", "{{#on}}x{{/on}}", "{{ .db.host }}", "{{ range .db }}{{.}}{{ end }}",
		"${x/base64}", "#{1 + 1}", "{{{db.host}}}", "{{!c}}", "{{ default \"a\" .b }}",
		"{{ range until 9 }}{{ range until 9 }}{{ . }}{{ end }}{{ end }}", `{{ printf "%[1]9v" (list 1 (list 2)) }}`,
		`{{ define "a" }}{{ template "a" . }}{{ end }}{{ template "a" . }}`, `{{ if .db.host | eq "h" }}{{ index . "db" }}{{ end }}`,
	} {
		f.Add(s)
	}
	exp := expanded(f, "db.host", "h", "on", "true")
	f.Fuzz(func(t *testing.T, src string) {
		for _, kind := range []string{TemplateCurly, TemplateMustache, TemplateGo} {
			_, _ = RenderString("fuzz.template", src, kind, exp, nil)
		}
		// What a plan reads of a template's names, before it renders.
		_, _, _ = params.RefsOf(src), mustacheRefs(src), goRefs("fuzz.gotemplate", src)
	})
}
