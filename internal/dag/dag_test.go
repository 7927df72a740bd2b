package dag

import (
	"errors"
	"math/rand"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func build(nodes string, edges ...string) *Graph {
	g := New()
	for _, n := range strings.Fields(nodes) {
		g.AddNode(n)
	}
	for _, e := range edges {
		a, b, _ := strings.Cut(e, ">")
		g.AddEdge(a, b)
	}
	return g
}

func TestTopoOrder(t *testing.T) {
	tests := []struct {
		name  string
		g     *Graph
		want  []string
		cycle []string
	}{
		{"empty", build(""), []string{}, nil},
		{"ties by position", build("c b a"), []string{"c", "b", "a"}, nil},
		{"edge moves a later node first", build("a b c", "c>a"), []string{"b", "c", "a"}, nil},
		{"chain", build("a b c", "a>b", "b>c"), []string{"a", "b", "c"}, nil},
		{"diamond keeps positions", build("d c b a", "a>b", "a>c", "b>d", "c>d"), []string{"a", "c", "b", "d"}, nil},
		{"cycle", build("a b c d", "a>b", "b>c", "c>a", "c>d"), nil, []string{"a → b → c → a"}},
		{"self loop", build("a b", "b>b"), nil, []string{"b → b"}},
		{"two cycles", build("a b c d", "a>b", "b>a", "c>d", "d>c"), nil, []string{"a → b → a", "c → d → c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.g.TopoOrder()
			if tt.cycle != nil {
				var ce *CycleError
				if !errors.As(err, &ce) {
					t.Fatalf("want a cycle error, got %v", err)
				}
				var paths []string
				for _, c := range ce.Cycles {
					paths = append(paths, strings.Join(c, " → "))
				}
				if diff := cmp.Diff(tt.cycle, paths); diff != "" {
					t.Errorf("cycles (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 {
				got = []string{}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReduce(t *testing.T) {
	g := build("a b c d", "a>b", "b>c", "a>c", "c>d", "a>d", "b>d")
	r, err := g.Reduce()
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"a", "b"}, {"b", "c"}, {"c", "d"}}
	if diff := cmp.Diff(want, r.Edges()); diff != "" {
		t.Errorf("reduced edges (-want +got):\n%s", diff)
	}
}

// TestRandomOrdersRespectEdges checks the order against every edge of random DAGs.
func TestRandomOrdersRespectEdges(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 50; round++ {
		g := New()
		n := 1 + rng.Intn(60)
		for i := 0; i < n; i++ {
			g.AddNode(string(rune('A' + i)))
		}
		for i := 0; i < n*2; i++ {
			a, b := rng.Intn(n), rng.Intn(n)
			if a < b {
				g.AddEdge(string(rune('A'+a)), string(rune('A'+b)))
			}
		}
		order, err := g.TopoOrder()
		if err != nil {
			t.Fatal(err)
		}
		pos := map[string]int{}
		for i, v := range order {
			pos[v] = i
		}
		for _, e := range g.Edges() {
			if pos[e[0]] >= pos[e[1]] {
				t.Fatalf("edge %s→%s violated by order %v", e[0], e[1], order)
			}
		}
		red, _ := g.Reduce()
		for _, e := range g.Edges() {
			if !red.HasEdge(e[0], e[1]) && !contains(red.Reachable(e[0]), e[1]) {
				t.Fatalf("reduction lost reachability %s→%s", e[0], e[1])
			}
		}
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func TestRender(t *testing.T) {
	g := build("a b", "a>b")
	var dot, mm strings.Builder
	o := RenderOptions{Cluster: func(n string) string { return "group" }, EdgeStyle: func(string, string) string { return "dashed" }}
	if err := g.WriteDOT(&dot, "plan", o); err != nil {
		t.Fatal(err)
	}
	if err := g.WriteMermaid(&mm, o); err != nil {
		t.Fatal(err)
	}
	wantDOT := "digraph \"plan\" {\n  rankdir=LR;\n  node [shape=box];\n  subgraph cluster_0 {\n    label=\"group\";\n    \"a\" [label=\"a\"];\n    \"b\" [label=\"b\"];\n  }\n  \"a\" -> \"b\" [style=dashed];\n}\n"
	if dot.String() != wantDOT {
		t.Errorf("DOT:\n%s\nwant:\n%s", dot.String(), wantDOT)
	}
	wantMM := "flowchart LR\n  subgraph c0[\"group\"]\n    n0[\"a\"]\n    n1[\"b\"]\n  end\n  n0 -.-> n1\n"
	if mm.String() != wantMM {
		t.Errorf("Mermaid:\n%s\nwant:\n%s", mm.String(), wantMM)
	}
}

func TestReachableFrom(t *testing.T) {
	g := build("a b c d e", "a>b", "b>c", "d>e", "c>a")
	tests := []struct {
		from []string
		want []string
	}{
		{[]string{"d"}, []string{"e"}},
		{[]string{"b", "c"}, []string{"a", "b", "c"}}, // the cycle leads back to both
		{[]string{"d", "e"}, []string{"e"}},           // e is reached from d
		{[]string{"zz"}, []string{}},
		{nil, []string{}},
	}
	for _, tt := range tests {
		got := g.ReachableFrom(tt.from...)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ReachableFrom(%v) (-want +got):\n%s", tt.from, diff)
		}
	}
	ancestors := []struct {
		of   []string
		want []string
	}{
		{[]string{"e"}, []string{"d"}},
		{[]string{"b", "c"}, []string{"a", "b", "c"}}, // the cycle leads to both
		{[]string{"d", "e"}, []string{"d"}},           // d leads to e
		{[]string{"zz"}, []string{}},
		{nil, []string{}},
	}
	for _, tt := range ancestors {
		if diff := cmp.Diff(tt.want, g.AncestorsOf(tt.of...)); diff != "" {
			t.Errorf("AncestorsOf(%v) (-want +got):\n%s", tt.of, diff)
		}
	}
	// Reachable and Ancestors leave their start out, even on a cycle.
	if got := g.Reachable("a"); !cmp.Equal(got, []string{"b", "c"}) {
		t.Errorf("Reachable(a) = %v", got)
	}
	if got := g.Ancestors("a"); !cmp.Equal(got, []string{"b", "c"}) {
		t.Errorf("Ancestors(a) = %v", got)
	}
}

// TestRenderNestedClusters: clusters inside clusters, each opened where
// its first node (or nested cluster) comes, nodes of no cluster in place.
func TestRenderNestedClusters(t *testing.T) {
	g := build("top web.app web.edge.proxy admin.proxy last", "top>web.app", "web.app>web.edge.proxy")
	cluster := map[string]string{"web.app": "web", "web.edge.proxy": "web.edge", "admin.proxy": "admin"}
	parent := map[string]string{"web.edge": "web"}
	o := RenderOptions{
		Cluster:       func(n string) string { return cluster[n] },
		ClusterParent: func(c string) string { return parent[c] },
		ClusterLabel:  func(c string) string { return c + " (nested)" },
	}
	var dot, mm strings.Builder
	if err := g.WriteDOT(&dot, "p", o); err != nil {
		t.Fatal(err)
	}
	if err := g.WriteMermaid(&mm, o); err != nil {
		t.Fatal(err)
	}
	wantDOT := `digraph "p" {
  rankdir=LR;
  node [shape=box];
  "top" [label="top"];
  subgraph cluster_0 {
    label="web (nested)";
    "web.app" [label="web.app"];
    subgraph cluster_1 {
      label="web.edge (nested)";
      "web.edge.proxy" [label="web.edge.proxy"];
    }
  }
  subgraph cluster_2 {
    label="admin (nested)";
    "admin.proxy" [label="admin.proxy"];
  }
  "last" [label="last"];
  "top" -> "web.app";
  "web.app" -> "web.edge.proxy";
}
`
	if diff := cmp.Diff(wantDOT, dot.String()); diff != "" {
		t.Errorf("DOT (-want +got):\n%s", diff)
	}
	wantMM := `flowchart LR
  n0["top"]
  subgraph c0["web (nested)"]
    n1["web.app"]
    subgraph c1["web.edge (nested)"]
      n2["web.edge.proxy"]
    end
  end
  subgraph c2["admin (nested)"]
    n3["admin.proxy"]
  end
  n4["last"]
  n0 --> n1
  n1 --> n2
`
	if diff := cmp.Diff(wantMM, mm.String()); diff != "" {
		t.Errorf("Mermaid (-want +got):\n%s", diff)
	}
}
