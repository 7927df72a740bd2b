package dag

import (
	"strings"
	"testing"
)

// TestRenderNodeStyles: NodeStyle gives DOT a style attribute and Mermaid
// a style line per node, dashed or bold; plain nodes get neither.
func TestRenderNodeStyles(t *testing.T) {
	g := build("a b c", "a>b", "b>c")
	styles := map[string]string{"a": "dashed", "b": "bold"}
	o := RenderOptions{NodeStyle: func(n string) string { return styles[n] }, EdgeLabel: func(from, to string) string { return from + to }}
	tests := []struct {
		name   string
		render func(*strings.Builder) error
		want   []string
		not    []string
	}{
		{"dot", func(b *strings.Builder) error { return g.WriteDOT(b, "g", o) },
			[]string{`"a" [label="a", style=dashed];`, `"b" [label="b", style=bold];`, `"c" [label="c"];`, `"a" -> "b" [label="ab"];`}, nil},
		{"mermaid", func(b *strings.Builder) error { return g.WriteMermaid(b, o) },
			[]string{"  style n0 stroke-dasharray: 5 5\n", "  style n1 stroke-width: 3px\n", `n0 -->|"ab"| n1`}, []string{"style n2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := tt.render(&b); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("missing %q in:\n%s", w, b.String())
				}
			}
			for _, w := range tt.not {
				if strings.Contains(b.String(), w) {
					t.Errorf("unexpected %q in:\n%s", w, b.String())
				}
			}
		})
	}
}
