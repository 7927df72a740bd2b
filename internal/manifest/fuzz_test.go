package manifest

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to the parser and every decoder: whatever the
// input, loading must return diagnostics, never panic or hang.
func FuzzLoad(f *testing.F) {
	seeds, _ := filepath.Glob("../../testdata/script/*.txtar")
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("version: 1\nkind: stack\nmeta: {name: x}\ncomponents: [{name: a, source: {dir: a}}]\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("x: &x {<<: *x}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, diags := ParseBytes("fuzz.yaml", data)
		if diags.HasErrors() {
			for _, d := range diags {
				_ = d.String()
			}
			return
		}
		for _, doc := range docs {
			var ds Diagnostics
			DecodeStack(doc, &ds)
			DecodeComponent(doc, &ds)
			for _, d := range ds {
				if d.Msg == "" {
					t.Fatalf("diagnostic without a message: %+v", d)
				}
			}
		}
		var ds Diagnostics
		DecodeParams(docs, &ds)
	})
}
