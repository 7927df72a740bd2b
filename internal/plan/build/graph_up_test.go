package build

import (
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/manifest"
)

// TestUpEdges: the leaves of a nested stack run after the components of
// the stack they are up to, at every level, unless a path orders them the
// other way; a stack without nesting gets no such edge.
func TestUpEdges(t *testing.T) {
	tests := []struct {
		name string
		// comps are name:up:depends,depends
		comps []string
		order []string
		ups   []string // the edges labelled up, "a>b up web"
	}{
		{
			name:  "no nesting",
			comps: []string{"a::", "b::"},
			order: []string{"a", "b"},
		},
		{
			name:  "listed first, deployed after",
			comps: []string{"web.app:web:", "db::"},
			order: []string{"db", "web.app"},
			ups:   []string{"db>web.app up web"},
		},
		{
			name:  "two levels",
			comps: []string{"web.edge.proxy:web.edge:", "web.app:web:", "db::"},
			order: []string{"db", "web.app", "web.edge.proxy"},
			ups:   []string{"db>web.app up web", "web.app>web.edge.proxy up web.edge"},
		},
		{
			name:  "a depends the other way wins",
			comps: []string{"web.edge.proxy:web.edge:", "web.app:web:web.edge.proxy", "db::", "api::web.app,web.edge.proxy"},
			order: []string{"db", "web.edge.proxy", "web.app", "api"},
			ups:   []string{"db>web.edge.proxy up web"},
		},
		{
			name:  "two nested stacks side by side",
			comps: []string{"a.x:a:", "b.y:b:", "top::"},
			order: []string{"top", "a.x", "b.y"},
			ups:   []string{"top>a.x up a", "top>b.y up b"},
		},
		{
			name:  "a nested stack of nested stacks only",
			comps: []string{"w.e.p:w.e:", "top::"},
			order: []string{"top", "w.e.p"},
			ups:   []string{"top>w.e.p up w"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &elaborate.Result{Stack: &manifest.Stack{Meta: manifest.Meta{Name: "shop"}}}
			for _, c := range tt.comps {
				parts := strings.Split(c, ":")
				ref := manifest.ComponentRef{Name: parts[0], Up: parts[1]}
				if parts[2] != "" {
					ref.Depends = strings.Split(parts[2], ",")
				}
				res.Stack.Components = append(res.Stack.Components, ref)
			}
			g, diags := BuildGraph(res)
			if diags.HasErrors() {
				t.Fatal(diags.Err())
			}
			if diff := cmp.Diff(tt.order, g.Order); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			var ups []string
			for _, e := range g.DAG.Edges() {
				for _, r := range g.Reasons(e[0], e[1]) {
					if strings.HasPrefix(r, "up ") {
						ups = append(ups, e[0]+">"+e[1]+" "+r)
					}
				}
			}
			sort.Strings(ups)
			if diff := cmp.Diff(tt.ups, ups); diff != "" {
				t.Errorf("up edges (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNestedLeaves: a nested stack's name stands for its leaves at any
// depth; a component of the top stack whose name has a dot is no nested
// stack.
func TestNestedLeaves(t *testing.T) {
	res := &elaborate.Result{Stack: &manifest.Stack{Components: []manifest.ComponentRef{
		{Name: "web.app", Up: "web"}, {Name: "web.edge.proxy", Up: "web.edge"}, {Name: "webx.a", Up: "webx"}, {Name: "lib.v2"},
	}}}
	g, _ := BuildGraph(res)
	for name, want := range map[string][]string{
		"web": {"web.app", "web.edge.proxy"}, "web.edge": {"web.edge.proxy"}, "lib": nil, "we": nil,
	} {
		if got := g.NestedLeaves(g.Order, name); !cmp.Equal(got, want) {
			t.Errorf("NestedLeaves(%s) = %v, want %v", name, got, want)
		}
	}
}

// TestUpEdgesFromTheLast: only the level's last components tie to a nested
// stack's first leaves; the others come before those anyway.
func TestUpEdgesFromTheLast(t *testing.T) {
	res := &elaborate.Result{Stack: &manifest.Stack{Components: []manifest.ComponentRef{
		{Name: "a"}, {Name: "b", Depends: []string{"a"}}, {Name: "c"},
		{Name: "w.x", Up: "w"}, {Name: "w.y", Up: "w", Depends: []string{"w.x"}},
	}}}
	g, diags := BuildGraph(res)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	if got, want := g.Dependencies("w.x"), []string{"b", "c"}; !cmp.Equal(got, want) {
		t.Errorf("w.x runs after %v, want %v", got, want)
	}
	if got, want := g.Dependencies("w.y"), []string{"w.x"}; !cmp.Equal(got, want) {
		t.Errorf("w.y runs after %v, want %v", got, want)
	}
	for _, before := range []string{"a", "b", "c"} {
		if !g.IsAncestor(before, "w.y") {
			t.Errorf("%s does not come before w.y", before)
		}
	}
}
