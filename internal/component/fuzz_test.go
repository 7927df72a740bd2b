package component

import "testing"

// FuzzRender renders arbitrary templates of every kind: errors are fine,
// panics and hangs are not.
func FuzzRender(f *testing.F) {
	for _, s := range []string{
		"${db.host}", "{{db.host}}", "{{#on}}x{{/on}}", "{{ .db.host }}", "{{ range .db }}{{.}}{{ end }}",
		"${x/base64}", "#{1 + 1}", "{{{db.host}}}", "{{!c}}", "{{ default \"a\" .b }}",
	} {
		f.Add(s)
	}
	exp := expanded(f, "db.host", "h", "on", "true")
	f.Fuzz(func(t *testing.T, src string) {
		for _, kind := range []string{TemplateCurly, TemplateMustache, TemplateGo} {
			_, _ = RenderString("fuzz.template", src, kind, exp, nil)
		}
	})
}
