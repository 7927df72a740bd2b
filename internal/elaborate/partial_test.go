package elaborate

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestPartialLeavesOutBrokenComponents: validate elaborates past errors.
// When only component manifests are broken, what is left is a stack that can
// be planned (Result.Partial); errors in the stack's own files leave nothing
// to plan.
func TestPartialLeavesOutBrokenComponents(t *testing.T) {
	for _, tc := range []struct {
		name    string
		stack   string
		files   map[string]string
		kept    []string
		partial bool
	}{{
		name:  "a component manifest is broken",
		stack: "components:\n  - {name: a, source: {dir: a}}\n  - {name: b, source: {dir: b}, depends: [a]}\n",
		files: map[string]string{
			"a/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: a}\ncolour: blue\n",
			"b/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: b}\n",
		},
		kept: []string{"b"}, partial: true,
	}, {
		name:  "a component manifest is no YAML",
		stack: "components:\n  - {name: a, source: {dir: a}}\n  - {name: b, source: {dir: b}, depends: [a]}\n",
		files: map[string]string{
			"a/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: a\n",
			"b/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: b}\n",
		},
		kept: []string{"b"}, partial: true,
	}, {
		name:  "a component manifest is of another kind",
		stack: "components:\n  - {name: a, source: {dir: a}}\n  - {name: b, source: {dir: b}, depends: [a]}\n",
		files: map[string]string{
			"a/hub-component.yaml": "version: 1\nkind: stack\nmeta: {name: a}\n",
			"b/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: b}\n",
		},
		kept: []string{"b"}, partial: true,
	}, {
		name:  "two of three broken",
		stack: "components:\n  - {name: a, source: {dir: a}}\n  - {name: b, source: {dir: b}, depends: [a]}\n  - {name: c, source: {dir: c}, depends: [b]}\n",
		files: map[string]string{
			"a/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: a\n",
			"b/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: b}\n",
			"c/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: c}\ncolour: red\n",
		},
		kept: []string{"b"}, partial: true,
	}, {
		name:  "the stack has an error too",
		stack: "colour: blue\ncomponents:\n  - {name: a, source: {dir: a}}\n  - {name: b, source: {dir: b}}\n",
		files: map[string]string{
			"a/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: a}\ncolour: blue\n",
			"b/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: b}\n",
		},
		kept: []string{"b"}, partial: false,
	}, {
		name:  "a component manifest is missing",
		stack: "components:\n  - {name: a, source: {dir: a}}\n  - {name: b, source: {dir: b}}\n",
		files: map[string]string{
			"b/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: b}\n",
		},
		kept: []string{"b"}, partial: false, // said at the stack's source.dir
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{"hub.yaml": "version: 1\nkind: stack\nmeta: {name: s}\n" + tc.stack}
			for k, v := range tc.files {
				files[k] = v
			}
			writeFiles(t, dir, files)
			res, diags := Elaborate(filepath.Join(dir, "hub.yaml"), Options{Partial: true})
			if !diags.HasErrors() || res == nil {
				t.Fatalf("want errors and a result, got %v and %v", diags, res)
			}
			var kept []string
			for _, ref := range res.Stack.Components {
				kept = append(kept, ref.Name)
			}
			if !slices.Equal(kept, tc.kept) || len(res.Components) != len(kept) {
				t.Errorf("kept %v (%d manifests), want %v", kept, len(res.Components), tc.kept)
			}
			for i, c := range res.Components {
				if c.Meta.Name != kept[i] {
					t.Errorf("manifest %d is %s's, want %s's", i, c.Meta.Name, kept[i])
				}
			}
			if res.Partial != tc.partial {
				t.Errorf("Partial = %v, want %v; errors:\n%v", res.Partial, tc.partial, diags.Err())
			}
			for _, ref := range res.Stack.Components {
				if len(ref.Depends) != 0 {
					t.Errorf("%s keeps its reference to a component left out: %v", ref.Name, ref.Depends)
				}
			}
		})
	}
}
