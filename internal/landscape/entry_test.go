package landscape

import (
	"reflect"
	"testing"
)

// TestResolveKey checks sow's key, path and argument rules.
func TestResolveKey(t *testing.T) {
	for _, tc := range []struct {
		name  string
		entry any
		key   string
		path  string
		args  []string
	}{
		{"bare name", "p", "p", "p", nil},
		{"key with empty path", map[string]any{"p": []any{"k:", "a"}}, "k", "", []string{"a"}},
		{"key and path", map[string]any{"p": []any{"k:cfg.node", "a"}}, "k", "cfg.node", []string{"a"}},
		{"first argument is key and path", map[string]any{"p": "inst"}, "inst", "inst", nil},
		{"empty key means the name", map[string]any{"p": []any{":node"}}, "p", "node", nil},
		{"config takes the first argument as key", map[string]any{"p": map[string]any{"config": map[string]any{"x": 1}, "args": []any{"x", "y"}}}, "x", "", []string{"y"}},
		{"path makes the instance", map[string]any{"p": map[string]any{"path": "n"}}, "n", "n", nil},
		{"explicit key", map[string]any{"p": map[string]any{"key": "k", "args": []any{"a"}}}, "k", "", []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseEntry(tc.entry)
			if err != nil {
				t.Fatal(err)
			}
			c.resolveKey()
			if c.Key != tc.key || c.Path != tc.path || !(len(c.Args) == 0 && len(tc.args) == 0 || reflect.DeepEqual(c.Args, tc.args)) {
				t.Errorf("got key %q path %q args %q, want %q %q %q", c.Key, c.Path, c.Args, tc.key, tc.path, tc.args)
			}
		})
	}
}

// TestParseEntryRejects checks the shapes an entry cannot take.
func TestParseEntryRejects(t *testing.T) {
	for _, e := range []any{
		map[string]any{"a": 1, "b": 2},
		[]any{"x"},
		map[string]any{"pinned": "x"},
		map[string]any{"p": []any{map[string]any{"x": 1}}},
		"-",
	} {
		if _, err := parseEntry(e); err == nil {
			t.Errorf("%v: no error", e)
		}
	}
}

// FuzzParseEntry feeds plugin entries of any shape: never a panic.
func FuzzParseEntry(f *testing.F) {
	f.Add("p", "k:path", "a")
	f.Add("-echo", "", "")
	f.Add("pinned", ":", "x")
	f.Fuzz(func(t *testing.T, name, first, second string) {
		for _, e := range []any{name, map[string]any{name: first}, map[string]any{name: []any{first, second}},
			map[string]any{name: map[string]any{"key": first, "path": second, "args": []any{first}}}} {
			if c, err := parseEntry(e); err == nil {
				c.resolveKey()
				_, _ = valueAt(map[string]any{"a": []any{1}}, c.Path)
			}
		}
	})
}
