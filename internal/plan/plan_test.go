package plan

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func chain(ids ...string) *Plan {
	p := New("test", VerbDeploy)
	for _, id := range ids {
		p.Add(&Node{ID: id, Label: id, Spec: Setup{}})
	}
	return p
}

func TestConnectRefusesCycles(t *testing.T) {
	p := chain("a", "b", "c")
	for _, e := range [][2]string{{"a", "b"}, {"b", "c"}} {
		if err := p.Connect(e[0], e[1], OnSuccess); err != nil {
			t.Fatal(err)
		}
	}
	err := p.Connect("c", "a", OnComplete)
	var ce *CycleError
	if !errors.As(err, &ce) {
		t.Fatalf("want a cycle error, got %v", err)
	}
	if diff := cmp.Diff([]string{"c", "a", "b", "c"}, ce.Path); diff != "" {
		t.Errorf("cycle (-want +got):\n%s", diff)
	}
	if len(p.Edges) != 2 {
		t.Errorf("the refused edge was kept: %v", p.Edges)
	}
	if err := p.Connect("a", "a", OnSuccess); err == nil {
		t.Error("a self loop was accepted")
	}
	if err := p.Connect("a", "nowhere", OnSuccess); err == nil || !strings.Contains(err.Error(), "unknown steps") {
		t.Errorf("an edge to an unknown step: %v", err)
	}
	// Going back in the order of addition is fine when no cycle closes.
	p.Add(&Node{ID: "d", Spec: Setup{}})
	if err := p.Connect("d", "a", OnSuccess); err != nil {
		t.Errorf("d → a closes no cycle: %v", err)
	}
	if !p.Precedes("d", "c") || p.Precedes("c", "d") {
		t.Error("Precedes does not follow the edges")
	}
}

func TestValidateInputs(t *testing.T) {
	tests := []struct {
		name   string
		inputs map[string][]string
		edges  [][2]string
		want   string
	}{
		{"input before", map[string][]string{"c": {"a"}}, [][2]string{{"a", "b"}, {"b", "c"}}, ""},
		{"input after", map[string][]string{"a": {"c"}}, [][2]string{{"a", "b"}, {"b", "c"}}, "reads step c, which does not come before it"},
		{"input beside", map[string][]string{"c": {"b"}}, [][2]string{{"a", "b"}, {"a", "c"}}, "reads step b, which does not come before it"},
		{"unknown input", map[string][]string{"c": {"zz"}}, nil, "reads unknown step zz"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := chain("a", "b", "c")
			for id, in := range tt.inputs {
				p.Node(id).Inputs = in
			}
			for _, e := range tt.edges {
				if err := p.Connect(e[0], e[1], OnSuccess); err != nil {
					t.Fatal(err)
				}
			}
			err := p.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestValidateWantsSpecs(t *testing.T) {
	p := New("test", VerbDeploy)
	p.Add(&Node{ID: "x"})
	if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "step x has no spec") {
		t.Errorf("got %v", err)
	}
}

func TestSourcesAndSinks(t *testing.T) {
	p := chain("a", "b", "c", "d")
	_ = p.Connect("a", "b", OnSuccess)
	_ = p.Connect("a", "c", OnSuccess)
	ids := func(ns []*Node) []string {
		var out []string
		for _, n := range ns {
			out = append(out, n.ID)
		}
		return out
	}
	if diff := cmp.Diff([]string{"a", "d"}, ids(p.Sources())); diff != "" {
		t.Errorf("sources (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"b", "c", "d"}, ids(p.Sinks())); diff != "" {
		t.Errorf("sinks (-want +got):\n%s", diff)
	}
}
