package elaborate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gantry-dev/gantry/internal/manifest"
)

func param(name, comp, kind, value string) manifest.Parameter {
	return manifest.Parameter{Name: name, Component: comp, Kind: kind, Value: manifest.Scalar(value)}
}

func TestParamSetMerge(t *testing.T) {
	tests := []struct {
		name      string
		in        []manifest.Parameter
		want      []manifest.Parameter
		wantWarns int
	}{
		{
			name: "user beats tech",
			in:   []manifest.Parameter{param("a", "", "user", ""), param("a", "", "tech", "")},
			want: []manifest.Parameter{param("a", "", "user", "")},
		},
		{
			name: "tech then user",
			in:   []manifest.Parameter{param("a", "", "tech", ""), param("a", "", "user", "")},
			want: []manifest.Parameter{param("a", "", "user", "")},
		},
		{
			name: "a parameter without a kind keeps none",
			in:   []manifest.Parameter{param("a", "", "", "1")},
			want: []manifest.Parameter{param("a", "", "", "1")},
		},
		{
			name: "fromEnv or fromFile without a kind makes a user parameter",
			in:   []manifest.Parameter{{Name: "e", FromEnv: "E"}, {Name: "f", FromFile: "f.txt"}, {Name: "t", Kind: "tech", FromEnv: "T"}},
			want: []manifest.Parameter{{Name: "e", Kind: "user", FromEnv: "E"}, {Name: "f", Kind: "user", FromFile: "f.txt"}, {Name: "t", Kind: "tech", FromEnv: "T"}},
		},
		{
			name: "later non-empty value wins, empty keeps",
			in:   []manifest.Parameter{param("a", "", "", "1"), param("a", "", "", "2"), param("a", "", "", "")},
			want: []manifest.Parameter{param("a", "", "", "2")},
		},
		{
			name: "empty: allow given once stays",
			in:   []manifest.Parameter{{Name: "a", Value: "x", Empty: "allow"}},
			want: []manifest.Parameter{{Name: "a", Value: "x", Empty: "allow"}},
		},
		{
			name: "empty: allow dropped by a merge that leaves a value",
			in:   []manifest.Parameter{{Name: "a", Empty: "allow"}, {Name: "a", Value: "x"}, {Name: "b", Value: "x", Empty: "allow"}, {Name: "b", Brief: "B"}},
			want: []manifest.Parameter{{Name: "a", Value: "x"}, {Name: "b", Value: "x", Brief: "B"}},
		},
		{
			name: "empty: allow kept by a merge without a value",
			in:   []manifest.Parameter{{Name: "a", Empty: "allow"}, {Name: "a", Brief: "A"}},
			want: []manifest.Parameter{{Name: "a", Brief: "A", Empty: "allow"}},
		},
		{
			name:      "unqualified merges into earlier qualified, with a warning when the value changes",
			in:        []manifest.Parameter{param("a", "x", "user", "1"), param("a", "y", "user", ""), param("a", "", "", "2")},
			want:      []manifest.Parameter{param("a", "", "", "2"), param("a", "x", "user", "2"), param("a", "y", "user", "2")},
			wantWarns: 1,
		},
		{
			name: "unqualified does not merge into a parameter qualified for another stack's component",
			in:   []manifest.Parameter{param("a", "nope", "user", "1"), param("a", "", "", "2")},
			want: []manifest.Parameter{param("a", "", "", "2"), param("a", "nope", "user", "1")},
		},
		{
			name: "qualified after unqualified is left alone",
			in:   []manifest.Parameter{param("a", "", "", "2"), param("a", "x", "user", "1")},
			want: []manifest.Parameter{param("a", "", "", "2"), param("a", "x", "user", "1")},
		},
		{
			name: "same value: no warning",
			in:   []manifest.Parameter{param("a", "x", "user", "1"), param("a", "", "", "1")},
			want: []manifest.Parameter{param("a", "", "", "1"), param("a", "x", "user", "1")},
		},
		{
			name: "sorted by qualified name, byte by byte",
			in:   []manifest.Parameter{param("b", "", "", "1"), param("a", "z", "user", "1"), param("a", "c", "user", "1"), param("a", "", "", ""), param("a.b", "", "", "1"), param("ab", "", "", "1")},
			want: []manifest.Parameter{param("a", "", "", ""), param("a.b", "", "", "1"), param("ab", "", "", "1"), param("a", "c", "user", "1"), param("a", "z", "user", "1"), param("b", "", "", "1")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var diags manifest.Diagnostics
			s := newParamSet([]manifest.ComponentRef{{Name: "c"}, {Name: "x"}, {Name: "y"}, {Name: "z"}}, &diags)
			for _, p := range tt.in {
				s.add(p)
			}
			got := s.sorted()
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(manifest.Parameter{}, "Pos", "Origin")); diff != "" {
				t.Errorf("merge (-want +got):\n%s", diff)
			}
			if n := len(diags.Warnings()); n != tt.wantWarns {
				t.Errorf("got %d warnings, want %d: %v", n, tt.wantWarns, diags)
			}
		})
	}
}

func TestMergeParameterFields(t *testing.T) {
	cur := manifest.Parameter{Name: "p", Value: "v1", Default: "d1", FromEnv: "E1", Env: "X1", Brief: "b1"}
	add := manifest.Parameter{Name: "p", Default: "d2", Env: "X2", Pos: manifest.Pos{File: "f", Line: 3}}
	mergeParameter(&cur, &add)
	want := manifest.Parameter{Name: "p", Value: "v1", Default: "d2", FromEnv: "E1", Env: "X2", Brief: "b1", Origin: manifest.Pos{File: "f", Line: 3}}
	if diff := cmp.Diff(want, cur); diff != "" {
		t.Errorf("mergeParameter (-want +got):\n%s", diff)
	}
}

// TestOverrideWarningHidesSecrets: the warning that an unqualified parameter
// overrides a qualified one's value shows neither value when either
// declaration makes it secret.
func TestOverrideWarningHidesSecrets(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name        string
		first, then manifest.Parameter
		shown       bool
	}{
		{"neither secret", param("conn", "x", "", "OldValue1"), param("conn", "", "", "NewValue2"), true},
		{"the later says secret: true", param("conn", "x", "", "OldValue1"), manifest.Parameter{Name: "conn", Value: "NewValue2", Secret: &yes}, false},
		{"the earlier says secret: true", manifest.Parameter{Name: "conn", Component: "x", Value: "OldValue1", Secret: &yes}, param("conn", "", "", "NewValue2"), false},
		{"a secret name, the later says secret: false", param("db.password", "x", "", "OldValue1"), manifest.Parameter{Name: "db.password", Value: "NewValue2", Secret: &no}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var diags manifest.Diagnostics
			s := newParamSet([]manifest.ComponentRef{{Name: "x"}}, &diags)
			s.add(tt.first)
			s.add(tt.then)
			ws := diags.Warnings()
			if len(ws) != 1 {
				t.Fatalf("got %d warnings, want 1: %v", len(ws), diags)
			}
			msg := ws[0].String()
			for _, v := range []string{"OldValue1", "NewValue2"} {
				if got := strings.Contains(msg, v); got != tt.shown {
					t.Errorf("%q in the warning: %v, want %v: %s", v, got, tt.shown, msg)
				}
			}
		})
	}
}
