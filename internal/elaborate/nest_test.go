package elaborate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// writeFiles lays out files (path → content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const nestComp = "version: 1\nkind: component\nmeta: {name: comp}\nparameters:\n  - name: who\n"

func TestNestedSpread(t *testing.T) {
	inner := "version: 1\nkind: stack\nmeta: {name: inner}\nconfig:\n  parameter:\n    a: {type: string, default: inner-a}\n    b: {type: string, default: inner-b}\n" +
		"components:\n  - name: leaf\n    source: {dir: ../comp}\nparameters:\n  - name: who\n    value: \"${config.parameter.a}-${config.parameter.b}\"\n"
	tests := []struct {
		name   string
		passed string // the config: the top passes to inner
		want   string // who|mid.leaf
		errs   []string
	}{
		{name: "inner defaults fill", passed: "{}", want: "inner-a-inner-b"},
		{name: "outer value wins", passed: "{parameter: {a: outer}}", want: "outer-inner-b"},
		{name: "unknown field", passed: "{parameter: {c: x}}", errs: []string{`top.mid.config.parameter.c: unknown field "c"`}},
		{name: "wrong type", passed: "{parameter: {a: [1]}}", errs: []string{"top.mid.config.parameter.a: expected a string, got"}},
		{name: "unknown section", passed: "{paramter: {}}", errs: []string{`top.mid.config.paramter: unknown field "paramter" (did you mean "parameter"?)`}},
		{name: "outputs refused", passed: "{parameter: {a: \"${x:y}\"}}", errs: []string{"config values cannot read outputs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"hub.yaml":                "version: 1\nkind: stack\nmeta: {name: top}\ncomponents:\n  - name: mid\n    source: {stack: inner}\n    config: " + tt.passed + "\n",
				"inner/hub.yaml":          inner,
				"comp/hub-component.yaml": nestComp,
			})
			res, diags := Elaborate(filepath.Join(dir, "hub.yaml"), Options{})
			if len(tt.errs) > 0 {
				got := diagText(diags.Errors())
				for _, e := range tt.errs {
					if !strings.Contains(got, e) {
						t.Errorf("errors %q lack %q", got, e)
					}
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if len(res.Components) != 1 || res.Components[0].Meta.Name != "mid.leaf" || res.Stack.Components[0].Up != "mid" {
				t.Fatalf("solution: %+v", res.Stack.Components)
			}
			got := ""
			for _, p := range res.Stack.Parameters {
				if p.Name == "who" && p.Component == "mid.leaf" {
					got = string(p.Value)
				}
			}
			if got != tt.want {
				t.Errorf("who|mid.leaf = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestNestingDepthBounded: a chain of distinct folders deeper than the
// bound is one error, though each level nests the next twice (said once per
// branch, it was tens of thousands), and a nested stack off that chain is
// still read, so what depends on it is not an unknown component.
func TestNestingDepthBounded(t *testing.T) {
	chain := "version: 1\nkind: stack\nmeta: {name: s}\ncomponents:\n  - name: n\n    source: {stack: n}\n  - name: m\n    source: {stack: n}\n"
	tests := []struct {
		name string
		top  string // the top stack, beside the chain's folder n
	}{
		{name: "nested twice per level", top: chain},
		{name: "siblings read", top: "version: 1\nkind: stack\nmeta: {name: s}\ncomponents:\n  - name: deep\n    source: {stack: n}\n" +
			"  - name: ok\n    source: {stack: small}\n  - name: z\n    source: {dir: comp}\n    depends: [ok]\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{
				"hub.yaml":                tt.top,
				"comp/hub-component.yaml": nestComp,
				"small/hub.yaml":          "version: 1\nkind: stack\nmeta: {name: small}\ncomponents:\n  - name: leaf\n    source: {dir: ../comp}\n",
			}
			path := "n"
			for i := 0; i <= MaxNestingDepth; i++ {
				files[filepath.Join(path, "hub.yaml")] = chain
				path = filepath.Join(path, "n")
			}
			writeFiles(t, dir, files)
			_, diags := Elaborate(filepath.Join(dir, "hub.yaml"), Options{})
			errs := diags.Errors()
			if len(errs) != 1 || !strings.Contains(errs[0].Msg, "stacks nest deeper than 32 levels") {
				t.Fatalf("%d errors: %.2000s", len(errs), diagText(errs))
			}
			if !strings.HasPrefix(errs[0].Field, "s.") || !strings.HasSuffix(errs[0].Field, ".n.components[0].source.stack") {
				t.Errorf("field %q: want the stack's path, then components[0].source.stack", errs[0].Field)
			}
		})
	}
}

// TestNestingCycleThroughSymlink: a stack that includes itself through a
// symbolic link (self -> .) is the cycle it is, said once per place it is
// reached, not a chain nested until the depth bound.
func TestNestingCycleThroughSymlink(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		link  string // the link made to "."
		want  []string
	}{
		{
			name:  "top includes itself",
			files: map[string]string{"hub.yaml": "version: 1\nkind: stack\nmeta: {name: s}\ncomponents:\n  - name: a\n    source: {stack: self}\n  - name: b\n    source: {stack: self}\n"},
			link:  "self",
			want: []string{
				"s.components[0].source.stack: nested stack cycle: s → s.a (s.a is s again, which includes itself)",
				"s.components[1].source.stack: nested stack cycle: s → s.b (s.b is s again, which includes itself)",
			},
		},
		{
			name: "nested stack includes itself",
			files: map[string]string{
				"hub.yaml":   "version: 1\nkind: stack\nmeta: {name: top}\ncomponents:\n  - name: x\n    source: {stack: s}\n",
				"s/hub.yaml": "version: 1\nkind: stack\nmeta: {name: s}\ncomponents:\n  - name: a\n    source: {stack: self}\n",
			},
			link: "s/self",
			want: []string{"top.x.components[0].source.stack: nested stack cycle: top.x → top.x.a (top.x.a is top.x again, which includes itself)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			if err := os.Symlink(".", filepath.Join(dir, tt.link)); err != nil {
				t.Skip("no symbolic links here:", err)
			}
			_, diags := Elaborate(filepath.Join(dir, "hub.yaml"), Options{})
			errs := diags.Errors()
			if len(errs) != len(tt.want) {
				t.Fatalf("%d errors, want %d: %.2000s", len(errs), len(tt.want), diagText(errs))
			}
			for i, w := range tt.want {
				if got := errs[i].Field + ": " + errs[i].Msg; got != w {
					t.Errorf("error %d: %s\nwant %s", i, got, w)
				}
			}
		})
	}
}

// TestSolutionPartsBounded: stacks that each nest the next twice flatten to
// 2^depth leaves from a few small files; the flattening stops at the bound
// with one error and leaves no components to check; a solution within it
// flattens whole.
func TestSolutionPartsBounded(t *testing.T) {
	saved := solutionParts
	solutionParts = 1000
	t.Cleanup(func() { solutionParts = saved })
	layout := func(depth int) string {
		dir := t.TempDir()
		files := map[string]string{"comp/hub-component.yaml": nestComp}
		for i := 0; i < depth; i++ {
			files[fmt.Sprintf("s%d/hub.yaml", i)] = fmt.Sprintf("version: 1\nkind: stack\nmeta: {name: s%d}\ncomponents:\n  - name: l\n    source: {stack: ../s%d}\n  - name: r\n    source: {stack: ../s%d}\n", i, i+1, i+1)
		}
		files[fmt.Sprintf("s%d/hub.yaml", depth)] = "version: 1\nkind: stack\nmeta: {name: leaf}\ncomponents:\n  - name: app\n    source: {dir: ../comp}\n"
		writeFiles(t, dir, files)
		return filepath.Join(dir, "s0", "hub.yaml")
	}
	res, diags := Elaborate(layout(16), Options{Partial: true})
	errs := diags.Errors()
	if len(errs) != 1 || !strings.Contains(errs[0].Msg, "the solution has more than 1000 components and nested stacks") {
		t.Fatalf("errors: %s", diagText(errs))
	}
	if res != nil && len(res.Components) != 0 {
		t.Errorf("%d components left to check", len(res.Components))
	}
	res, diags = Elaborate(layout(8), Options{})
	if diags.HasErrors() || len(res.Components) != 256 {
		t.Fatalf("depth 8: %d components, errors %s", len(res.Components), diagText(diags.Errors()))
	}
}

func TestSubstituteConfigKeepsOtherReferences(t *testing.T) {
	cfg := &levelConfig{values: map[string]configValue{"config.parameter.port": {text: "80"}}}
	var diags manifest.Diagnostics
	n := &nester{diags: &diags}
	var used []configRef
	got, ok := n.substituteConfig("${host}:${config.parameter.port}/$${x}#{int(config.parameter.port) * 2}", cfg, manifest.Pos{}, "f", &used)
	if want := "${host}:80/$${x}160"; !ok || got != want || diags.HasErrors() {
		t.Fatalf("got %q %v %v, want %q", got, ok, diags, want)
	}
}

func TestSpreadSourceNamesTheWinningLevel(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"hub.yaml": "version: 1\nkind: stack\nmeta: {name: top}\nconfig:\n  parameter:\n    a: {type: string, default: top-a}\n" +
			"components:\n  - name: mid\n    source: {stack: inner}\n    config: {parameter: {a: \"${config.parameter.a}\"}}\n",
		"inner/hub.yaml": "version: 1\nkind: stack\nmeta: {name: inner}\nconfig:\n  parameter:\n    a: {type: string, default: inner-a}\n" +
			"components:\n  - name: leaf\n    source: {dir: ../comp}\nparameters:\n  - name: who\n    value: \"${config.parameter.a}\"\n",
		"comp/hub-component.yaml": nestComp,
	})
	res, diags := Elaborate(filepath.Join(dir, "hub.yaml"), Options{})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	def := filepath.Join(dir, "inner/hub.yaml") + ":11"
	got, ok := res.SpreadSource("who|mid.leaf", def)
	if want := filepath.Join(dir, "hub.yaml") + ":6 (default of top)"; !ok || got != want {
		t.Fatalf("SpreadSource = %q %v, want %q", got, ok, want)
	}
	if _, ok := res.SpreadSource("who|mid.leaf", "env:WHO"); ok {
		t.Fatal("a value from the environment is not config's")
	}
}

// diagText joins diagnostics, one a line, for substring checks.
func diagText(ds manifest.Diagnostics) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.String() + "\n")
	}
	return b.String()
}

// TestNestingFileLinkedIntoFolders: one hub.yaml linked into nested folders,
// each with its own components, is a stack per folder (its relative sources
// read from there), not a cycle; a folder linked to itself still is one.
func TestNestingFileLinkedIntoFolders(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"top.yaml":                             "version: 1\nkind: stack\nmeta: {name: top}\ncomponents:\n  - name: cell\n    source: {stack: d0}\n",
		"tmpl/hub.yaml":                        "version: 1\nkind: stack\nmeta: {name: cell}\ncomponents:\n  - name: leaf\n    source: {dir: comp}\n  - name: next\n    source: {stack: next}\n",
		"d0/comp/hub-component.yaml":           nestComp,
		"d0/next/comp/hub-component.yaml":      nestComp,
		"d0/next/next/hub.yaml":                "version: 1\nkind: stack\nmeta: {name: end}\ncomponents:\n  - name: last\n    source: {dir: comp}\n",
		"d0/next/next/comp/hub-component.yaml": nestComp,
	})
	for link, target := range map[string]string{"d0/hub.yaml": "../tmpl/hub.yaml", "d0/next/hub.yaml": "../../tmpl/hub.yaml"} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Skip("no symbolic links here:", err)
		}
	}
	res, diags := Elaborate(filepath.Join(dir, "top.yaml"), Options{})
	if diags.HasErrors() {
		t.Fatal(diagText(diags.Errors()))
	}
	var names []string
	for _, c := range res.Stack.Components {
		names = append(names, c.Name)
	}
	if want := "cell.leaf cell.next.leaf cell.next.next.last"; strings.Join(names, " ") != want {
		t.Errorf("leaves %v, want %s", names, want)
	}
}
