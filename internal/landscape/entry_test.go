package landscape

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// one reads a single entry of a plugin list.
func one(t *testing.T, e any) *call {
	t.Helper()
	ss, err := specs([]any{e})
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 1 {
		t.Fatalf("%v: %d specs", e, len(ss))
	}
	c, err := callOf(ss[0])
	if err != nil {
		t.Fatal(err)
	}
	return c
}

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
		{"list form", []any{"p", "k:", "a"}, "k", "", []string{"a"}},
		{"execution spec", map[string]any{"name": "p", "path": "x.y"}, "x.y", "x.y", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := one(t, tc.entry)
			c.resolveKey()
			if c.Key != tc.key || c.Path != tc.path || !(len(c.Args) == 0 && len(tc.args) == 0 || reflect.DeepEqual(c.Args, tc.args)) {
				t.Errorf("got key %q path %q args %q, want %q %q %q", c.Key, c.Path, c.Args, tc.key, tc.path, tc.args)
			}
		})
	}
}

// TestSpecs checks sow's normalization of a plugin list: a mapping of
// several plugins is several entries in key order; a single entry or a
// mapping stands for a list of one.
func TestSpecs(t *testing.T) {
	ss, err := specs([]any{map[string]any{"b": "x", "a": []any{"y"}}, "c", []any{"d", "1"}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range ss {
		names = append(names, s["name"].(string))
	}
	if strings.Join(names, ",") != "a,b,c,d" {
		t.Errorf("got %v", names)
	}
	if ss, err := specs(map[string]any{"echo": "hi"}); err != nil || len(ss) != 1 {
		t.Errorf("a single mapping: %v %v", ss, err)
	}
}

// TestSpecsRejects checks the shapes an entry cannot take.
func TestSpecsRejects(t *testing.T) {
	for _, e := range []any{
		[]any{[]any{}},
		[]any{map[string]any{}},
		[]any{map[string]any{"p": []any{map[string]any{"x": 1}}}},
		[]any{"-"},
		[]any{3.5},
	} {
		ss, err := specs(e)
		if err == nil {
			for _, s := range ss {
				if _, err = callOf(s); err != nil {
					break
				}
			}
		}
		if err == nil {
			t.Errorf("%v: no error", e)
		}
	}
}

// TestShape checks the plan's view of a partly evaluated list: names and
// nesting known, keys where they are, errUnresolved where the entries
// themselves are not known.
func TestShape(t *testing.T) {
	list := []any{
		map[string]any{"echo": Unresolved},
		map[string]any{"show": []any{Unresolved, "a"}},
		map[string]any{"show": []any{"k:", Unresolved}},
		map[string]any{"pinned": []any{"x", map[string]any{"-y": "inst"}}},
	}
	got, err := shapeOf(list)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Key != "" || got[0].KeyUnknown || !got[1].KeyUnknown || got[2].Key != "k" || got[2].KeyUnknown {
		t.Errorf("keys: %+v %+v %+v", got[0], got[1], got[2])
	}
	if c := got[3].Children; len(c) != 2 || c[0].Key != "x" || c[1].Name != "y" || !c[1].Hidden || c[1].Key != "inst" {
		t.Errorf("children: %+v", got[3].Children)
	}
	for _, l := range []any{Unresolved, []any{Unresolved}, []any{map[string]any{"pinned": Unresolved}}, []any{[]any{Unresolved, "a"}}} {
		if _, err := shapeOf(l); !errors.Is(err, errUnresolved) {
			t.Errorf("%v: got %v, want errUnresolved", l, err)
		}
	}
}

// TestFits checks a list evaluated at run time against its plan: keys the
// plan did not know match any, everything else must be the same.
func TestFits(t *testing.T) {
	planned, _ := shapeOf([]any{map[string]any{"show": []any{Unresolved}}, map[string]any{"parallel": []any{"a", "b"}}})
	for _, tc := range []struct {
		now any
		ok  bool
	}{
		{[]any{map[string]any{"show": "k"}, map[string]any{"parallel": []any{"a", "b"}}}, true},
		{[]any{map[string]any{"show": "k"}, map[string]any{"parallel": []any{"a", "c"}}}, false},
		{[]any{map[string]any{"show": "k"}, map[string]any{"pinned": []any{"a", "b"}}}, false},
		{[]any{map[string]any{"show": "k"}}, false},
	} {
		now, err := shapeOf(tc.now)
		if err != nil {
			t.Fatal(err)
		}
		if err := fits(planned, now, ""); (err == nil) != tc.ok {
			t.Errorf("%v: got %v, want ok=%v", tc.now, err, tc.ok)
		}
	}
}

// TestCallAt finds an entry by its position in nested lists.
func TestCallAt(t *testing.T) {
	list := []any{"a", map[string]any{"pinned": []any{"b", map[string]any{"parallel": []any{"c", map[string]any{"d": "k"}}}}}}
	c, err := callAt(list, []int{1, 1, 1})
	if err != nil || c.Name != "d" || c.Args[0] != "k" {
		t.Fatalf("got %+v, %v", c, err)
	}
	if _, err := callAt(list, []int{1, 5}); err == nil {
		t.Error("no error for a position out of the list")
	}
}

// FuzzSpecs feeds plugin entries of any shape: never a panic.
func FuzzSpecs(f *testing.F) {
	f.Add("p", "k:path", "a")
	f.Add("-echo", "", "")
	f.Add("pinned", ":", "x")
	f.Fuzz(func(t *testing.T, name, first, second string) {
		for _, e := range []any{name, map[string]any{name: first}, map[string]any{name: []any{first, second}},
			[]any{name, first}, map[string]any{name: map[string]any{"key": first, "path": second, "args": []any{first}}}} {
			if sh, err := shapeOf([]any{e}); err == nil {
				_ = fits(sh, sh, "")
			}
			if c, err := callAt([]any{e}, []int{0}); err == nil {
				c.resolveKey()
				_, _ = valueAt(map[string]any{"a": []any{1}}, c.Path)
			}
		}
	})
}

// TestShapeRefusesKeysLeadingOut: an instance key is a folder below the
// component's gen/ and state/ folders; one that climbs out or is absolute
// is an error of the list, before anything runs.
func TestShapeRefusesKeysLeadingOut(t *testing.T) {
	for _, tc := range []struct {
		entry any
		ok    bool
	}{
		{map[string]any{"p": "../../../outside:"}, false},
		{map[string]any{"p": map[string]any{"key": "a/../../x"}}, false},
		{map[string]any{"p": map[string]any{"path": "/abs"}}, false},
		{map[string]any{"parallel": []any{map[string]any{"p": []any{"..", "x"}}}}, false},
		{"..", false},
		{map[string]any{"p": "nested/inst:cfg"}, true},
		{map[string]any{"p": map[string]any{"key": "k", "args": []any{"../not-a-key"}}}, true},
		{map[string]any{"echo": "../../x"}, true},
	} {
		_, err := shapeOf([]any{tc.entry})
		if (err == nil) != tc.ok || err != nil && !strings.Contains(err.Error(), "stays inside the component's folders") {
			t.Errorf("%v: got %v, want ok=%v", tc.entry, err, tc.ok)
		}
	}
}
