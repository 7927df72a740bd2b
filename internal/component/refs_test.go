package component

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/google/go-cmp/cmp"
)

// TestTemplateRefs: the names a template reads, as a plan knows them from
// its text, for each kind; a Go template's own fields and its calls with
// computed arguments read nothing that can be known before it renders.
func TestTemplateRefs(t *testing.T) {
	ref := func(comp, name string) params.Part { return params.Part{Kind: params.Ref, Component: comp, Name: name} }
	tests := []struct {
		name, file, text string
		kind             string
		want             []params.Part
	}{
		{"curly", "a.conf.template", "x=${db:host} y=${greeting/base64} z=#{size + 1}", "",
			[]params.Part{ref("db", "host"), ref("", "greeting"), ref("", "size")}},
		{"curly without references", "b.conf.template", "plain $ text #", "", nil},
		{"mustache", "c.conf.template", "{{a}} {{{b}}} {{&c}} {{#d}}{{e/base64}}{{/d}}{{^f}}{{/f}}{{! g }}", "mustache",
			[]params.Part{ref("", "a"), ref("", "b"), ref("", "c"), ref("", "d"), ref("", "e"), ref("", "f")}},
		{"go", "d.conf.gotemplate", `{{ .own }} {{ param "greeting" }} {{ output "db" "host" | upper }} {{ if true }}{{ param "inner" }}{{ end }} {{ param .own }} {{ with $x := "n" }}{{ param $x }}{{ end }} {{ (param "chained").x }}`, "",
			[]params.Part{ref("", "greeting"), ref("db", "host"), ref("", "inner"), ref("", "chained")}},
		{"go that does not parse", "e.conf.gotemplate", `{{ param "x" `, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, tt.file), []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			got := TemplateRefs(dir, &manifest.Templates{Kind: tt.kind, Files: []string{"*.template", "*.gotemplate"}})
			// What a reference names; where it is and how it encodes are
			// the render's.
			names := cmp.Transformer("names", func(p params.Part) string { return params.ReadKey(p.Component, p.Name) })
			if diff := cmp.Diff(tt.want, got, names); diff != "" {
				t.Errorf("refs (-want +got):\n%s", diff)
			}
		})
	}
}
