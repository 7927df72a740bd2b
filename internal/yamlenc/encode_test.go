package yamlenc

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/goccy/go-yaml"
)

// goccy is the encoder yamlenc stands in for, with the options gantry uses.
func goccy(v any) ([]byte, error) {
	return yaml.MarshalWithOptions(v, yaml.IndentSequence(true), yaml.Indent(2))
}

type inner struct {
	Name  string         `yaml:"name"`
	Tags  []string       `yaml:"tags,omitempty"`
	Extra map[string]any `yaml:"extra,omitempty"`
}

type Base struct {
	Kind    string `yaml:"kind"`
	Version int    `yaml:"version,omitempty"`
}

type withInline struct {
	Base    `yaml:",inline"`
	Kind    string            `yaml:"kind,omitempty"` // shadows the inline one's key
	Inner   inner             `yaml:"inner,omitempty"`
	Ptr     *inner            `yaml:"ptr,omitempty"`
	Items   []inner           `yaml:"items"`
	Nested  [][]string        `yaml:"nested,omitempty"`
	Labels  map[string]string `yaml:"labels"`
	Any     any               `yaml:"any"`
	Float   float64           `yaml:"float,omitempty"`
	Flag    *bool             `yaml:"flag,omitempty"`
	Untag   string
	private int
}

// Exported embedded, inline.
type Meta struct {
	Name        string            `yaml:"name"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

type doc struct {
	Meta  `yaml:",inline"`
	Steps []step `yaml:"steps,omitempty"`
}

// step writes itself in another shape, as manifest.Step does.
type step struct{ Run string }

func (s step) MarshalYAML() (any, error) {
	if s.Run == "" {
		return nil, nil
	}
	return map[string]any{"run": s.Run, "timeout": "5m"}, nil
}

type zeroable struct{ N int }

func (z zeroable) IsZero() bool { return z.N < 0 }

type withZeroer struct {
	Z zeroable `yaml:"z,omitempty"`
}

type withAnyZero struct {
	X any `yaml:"x,omitempty"`
}

// nilSafe marshals itself even as a nil pointer.
type nilSafe struct{}

func (*nilSafe) MarshalYAML() (any, error) { return "was nil", nil }

// formatted is a key type fmt.Sprint (goccy's sort) prints otherwise.
type formatted string

func (f formatted) Format(s fmt.State, _ rune) { fmt.Fprint(s, len(f)) }

func TestMarshalMatchesGoccy(t *testing.T) {
	yes := true
	cases := []struct {
		name string
		v    any
	}{
		{"scalars", map[string]any{"s": "plain", "q": "needs: quote", "e": "", "n": 3, "f": 1.5, "g": 2.0, "b": true, "nil": nil, "num": "123", "kw": "true", "dash": "-", "hash": "a #b", "brace": "{x}", "inf": math.Inf(1), "ninf": math.Inf(-1), "nan": math.NaN(), "u": uint8(7), "f32": float32(0.25)}},
		{"nested maps", map[string]any{"a": map[string]any{"b": map[string]any{"c": 1}, "d": map[string]any{}}, "z": []any{}}},
		{"sequences", []any{"a", 1, nil, []any{"x", []any{"y", "z"}}, map[string]any{"k": "v", "l": []any{1, 2}}, map[string]any{}, []any{}}},
		{"sequence of maps in map", map[string]any{"items": []any{map[string]any{"a": 1, "b": map[string]any{"c": []any{"d"}}}, map[string]any{"x": nil}}}},
		{"struct", withInline{Base: Base{Kind: "k", Version: 2}, Inner: inner{Name: "i", Tags: []string{"t1", "t 2"}}, Ptr: &inner{Name: "p", Extra: map[string]any{"e": []any{map[string]any{"f": "g"}}}}, Items: []inner{{Name: "a"}, {Name: "b", Tags: []string{"x"}}}, Nested: [][]string{{"a", "b"}, {}}, Labels: map[string]string{"b": "2", "a": "1", "needs quote:": "x"}, Any: []any{1}, Float: 3, Flag: &yes, Untag: "u"}},
		{"struct with inline shadowed", withInline{Base: Base{Kind: "base"}, Kind: "outer"}},
		{"empty struct", withInline{}},
		{"inline exported", doc{Meta: Meta{Name: "n", Annotations: map[string]string{"x/y": "z"}}, Steps: []step{{Run: "echo"}, {}}}},
		{"zeroer", []withZeroer{{Z: zeroable{N: -1}}, {Z: zeroable{N: 0}}}},
		{"scalar document", "just a string"},
		{"null document", nil},
		{"empty map document", map[string]any{}},
		{"empty sequence document", []string{}},
		{"blocks", map[string]any{"k": "line1\n  line2\n\nline4\n", "o": map[string]any{"p": "x\ny", "s": []any{"a\n\nb\n\n", []any{"c\nd", map[string]any{"q": "e\n\nf"}}}}, "t": "ends\n\n", "w": "\n", "x": "a\n b", "y": "  lead\nx", "z": "tail\n   ", "u": "sp  \nx"}},
		{"block lines in items", []any{map[string]any{"k": "a\n  \n"}, map[string]any{"k": "a\n      \n"}, map[string]any{"s": []any{[]any{map[string]any{"k": "a\n  \n", "j": "x\n \n"}}}}, "a\n  \n", "b\n \n"}},
		{"zeroer behind any", []withAnyZero{{X: zeroable{N: -1}}, {X: zeroable{N: 1}}, {}}},
		{"block items", []any{"a\nb", "\n", "x\n\n\ny\n", map[string]any{"k": "v\n\nw"}}},
		{"map slice", map[string]any{"plugins": []any{yaml.MapSlice{{Key: "kubernetes", Value: yaml.MapSlice{{Key: "key", Value: "ns"}, {Key: "config", Value: map[string]any{"manifests": []string{"a.yaml"}}}}}}, yaml.MapSlice{}}, "inline": doc{}}},
		{"block document", "top\nlevel\n"},
		{"odd strings", []string{"a\tb", " lead", "trail ", "x: y", "- z", "'q'", "\"d\"", "@a", "`b", "%c", "!t", "&a", "*r", "|", ">", "a#b", "a\\b", "2024-01-02", "0x1F", "1e3", ".5", "~", "null", "Null", "yes", "on", "é"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want, err := goccy(tc.v)
			if err != nil {
				t.Fatalf("goccy: %v", err)
			}
			got, err := Marshal(tc.v)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if string(got) != string(want) {
				t.Errorf("Marshal differs from goccy\n--- got\n%s--- want\n%s", got, want)
			}
		})
	}
}

func TestMarshalLeavesToGoccy(t *testing.T) {
	type flow struct {
		L []string `yaml:"l,flow"`
	}
	type anchored struct {
		A *inner `yaml:"a,anchor"`
	}
	for name, v := range map[string]any{
		"carriage return":                []any{"a\rb"},
		"multi-line key":                 map[string]any{"a\nb": 1},
		"flow field":                     flow{L: []string{"a"}},
		"anchor field":                   anchored{A: &inner{}},
		"int keys":                       map[int]string{1: "a"},
		"bare map items":                 []yaml.MapItem{{Key: "a", Value: 1}},
		"typed nil marshaler behind any": map[string]any{"n": (*nilSafe)(nil)},
		"time behind any":                map[string]any{"t": time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)},
		"uintptr":                        map[string]any{"p": uintptr(5)},
		"key with Format":                map[formatted]int{"bbb": 1, "a": 2, "cc": 3},
		"inline scalar": struct {
			S string `yaml:",inline"`
		}{S: "x"},
		"unexported embedded": struct {
			inner `yaml:",inline"`
		}{},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := Marshal(v); !errors.Is(err, ErrUnsupported) {
				t.Fatalf("Marshal = %v, want ErrUnsupported", err)
			}
		})
	}
}

type Looped struct {
	*Looped `yaml:",inline"`
	N       int `yaml:"n"`
}

// TestMarshalCycle: a value that refers to itself is refused, not followed.
func TestMarshalCycle(t *testing.T) {
	m := map[string]any{}
	m["self"] = m
	s := []any{nil}
	s[0] = s
	l := &Looped{}
	l.Looped = l
	for name, v := range map[string]any{"map": m, "slice": s, "inline": l} {
		if _, err := Marshal(v); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: Marshal = %v, want ErrUnsupported", name, err)
		}
	}
}
