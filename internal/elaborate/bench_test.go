package elaborate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/gantry-dev/gantry/internal/yamlenc"
)

// writeStack generates a stack of n components, each with user and tech
// parameters, outputs and a dependency on the one before, and returns the path
// of its hub.yaml.
func writeStack(tb testing.TB, n int) string {
	tb.Helper()
	dir := tb.TempDir()
	var hub strings.Builder
	hub.WriteString("version: 1\nkind: stack\nmeta: {name: big}\ncomponents:\n")
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("c%04d", i)
		fmt.Fprintf(&hub, "  - name: %s\n    source: {dir: components/%s}\n", name, name)
		if i > 0 {
			fmt.Fprintf(&hub, "    depends: [c%04d]\n", i-1)
		}
		comp := fmt.Sprintf(`version: 1
kind: component
meta: {name: %s}
requires: [kubernetes]
provides: [%s]
parameters:
  - name: %s.size
    kind: user
    default: "10"
  - name: %s.replicas
    value: 3
  - name: dns.domain
  - name: %s.url
    value: "https://${%s.size}.${dns.domain}"
outputs:
  - name: %s.endpoint
`, name, name, name, name, name, name, name)
		d := filepath.Join(dir, "components", name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "hub-component.yaml"), []byte(comp), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	hub.WriteString("parameters:\n  - name: dns.domain\n    value: example.com\n")
	path := filepath.Join(dir, "hub.yaml")
	if err := os.WriteFile(path, []byte(hub.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkElaborate1000 elaborates and marshals a stack of 1,000 components.
func BenchmarkElaborate1000(b *testing.B) {
	path := writeStack(b, 1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, diags := Elaborate(path, Options{})
		if diags.HasErrors() {
			b.Fatal(diags.Err())
		}
		if _, err := Marshal(res, filepath.Dir(path)); err != nil {
			b.Fatal(err)
		}
	}
}

func TestElaborateLargeStack(t *testing.T) {
	path := writeStack(t, 50)
	res, diags := Elaborate(path, Options{})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	if len(res.Components) != 50 || len(res.Stack.Parameters) != 51 {
		t.Fatalf("got %d components and %d parameters, want 50 and 51", len(res.Components), len(res.Stack.Parameters))
	}
	a, _ := Marshal(res, filepath.Dir(path))
	res2, _ := Elaborate(path, Options{})
	b, _ := Marshal(res2, filepath.Dir(path))
	if string(a) != string(b) {
		t.Fatal("two elaborations of the same stack differ")
	}
}

// BenchmarkElaborateOnly1000 elaborates a stack of 1,000 components without
// writing it.
func BenchmarkElaborateOnly1000(b *testing.B) {
	path := writeStack(b, 1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, diags := Elaborate(path, Options{}); diags.HasErrors() {
			b.Fatal(diags.Err())
		}
	}
}

// BenchmarkEncodeDocs1000 encodes the 1,001 documents of an elaborated
// stack of 1,000 components one after the other, with yamlenc and, as the
// baseline, with goccy/go-yaml.
func BenchmarkEncodeDocs1000(b *testing.B) {
	res, diags := Elaborate(writeStack(b, 1000), Options{})
	if diags.HasErrors() {
		b.Fatal(diags.Err())
	}
	docs := []any{res.Stack}
	for _, c := range res.Components {
		docs = append(docs, c)
	}
	for name, encode := range map[string]func(any) ([]byte, error){
		"yamlenc": yamlenc.Marshal,
		"goccy": func(v any) ([]byte, error) {
			return yaml.MarshalWithOptions(v, yaml.IndentSequence(true), yaml.Indent(2))
		},
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, d := range docs {
					if _, err := encode(d); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
