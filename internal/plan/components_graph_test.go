package plan

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// compPlan builds a plan of components, each with a hidden begin and end
// around a visible verb step and the extra visible steps given; after
// lists, per component, the components it runs after (their ends before
// its begin).
func compPlan(t *testing.T, verb string, comps []string, after map[string][]string, mandatory map[string]bool, extra map[string][]string) *Plan {
	t.Helper()
	p := New("s", verb)
	for _, c := range comps {
		crit := mandatory[c]
		p.Add(&Node{ID: c + "/begin", Kind: KindBegin, Component: c, Group: c, Hidden: true, Critical: crit, Spec: Begin{Component: c}})
		prev := c + "/begin"
		for i, label := range append([]string{verb + " " + c}, extra[c]...) {
			id := c + "/" + verb
			kind, point := KindComponent, ""
			if i > 0 {
				id, kind, point = c+"/extra"+string(rune('0'+i)), KindExec, "post_component"
			}
			p.Add(&Node{ID: id, Kind: kind, Label: label, Component: c, Group: c, Point: point, Action: verb, Critical: crit, Spec: Verb{Component: c, Verb: verb}})
			if err := p.Connect(prev, id, OnSuccess); err != nil {
				t.Fatal(err)
			}
			prev = id
		}
		p.Add(&Node{ID: c + "/end", Kind: KindEnd, Component: c, Group: c, Hidden: true, Critical: crit, Spec: End{Component: c}})
		if err := p.Connect(prev, c+"/end", OnComplete); err != nil {
			t.Fatal(err)
		}
		p.Components[c] = &Component{Name: c, Verb: verb, Action: verb, After: after[c]}
	}
	for c, ups := range after {
		for _, up := range ups {
			from, to := up+"/end", c+"/begin"
			if verb == VerbUndeploy {
				from, to = c+"/end", up+"/begin"
			}
			if p.Node(from) == nil || p.Node(to) == nil {
				continue // not selected
			}
			if err := p.Connect(from, to, OnSuccess); err != nil {
				t.Fatal(err)
			}
		}
	}
	return p
}

func edgeList(g *ComponentGraph) []string {
	var out []string
	for _, e := range g.Edges {
		out = append(out, e.From+">"+e.To+" "+e.Label())
	}
	return out
}

func TestComponentGraph(t *testing.T) {
	tests := []struct {
		name      string
		verb      string
		comps     []string
		after     map[string][]string
		links     map[string]map[string][]Link
		depends   map[string][]string
		mandatory map[string]bool
		extra     map[string][]string
		wantNodes []string
		wantEdges []string
		reduced   int
	}{
		{
			name:  "a chain keeps its ties and leaves out the implied one",
			verb:  VerbDeploy,
			comps: []string{"net", "db", "api"},
			after: map[string][]string{"db": {"net"}, "api": {"net", "db"}},
			links: map[string]map[string][]Link{
				"db":  {"net": {{Kind: LinkDepends}, {Kind: LinkOutput, What: "net.cidr"}}},
				"api": {"net": {{Kind: LinkOutput, What: "net.cidr"}}, "db": {{Kind: LinkProvides, What: "postgres"}}},
			},
			wantNodes: []string{"net", "db", "api"},
			wantEdges: []string{"net>db depends, output net.cidr", "db>api provides postgres"},
			reduced:   1,
		},
		{
			name:      "without links a tie is the depends, else unexplained",
			verb:      VerbDeploy,
			comps:     []string{"a", "b", "c"},
			after:     map[string][]string{"b": {"a"}, "c": {"a"}},
			depends:   map[string][]string{"b": {"a"}},
			wantNodes: []string{"a", "b", "c"},
			wantEdges: []string{"a>b depends", "a>c after"},
		},
		{
			name:      "an undeploy draws the ties in the order it tears down",
			verb:      VerbUndeploy,
			comps:     []string{"app", "db"},
			after:     map[string][]string{"app": {"db"}},
			depends:   map[string][]string{"app": {"db"}},
			wantNodes: []string{"app", "db"},
			wantEdges: []string{"app>db depends"},
		},
		{
			name:  "a requirement an earlier component may provide is a weak tie",
			verb:  VerbDeploy,
			comps: []string{"cluster", "chart"},
			after: map[string][]string{"chart": {"cluster"}},
			links: map[string]map[string][]Link{
				"chart": {"cluster": {{Kind: LinkProvides, What: "helm", Maybe: true}}},
			},
			wantNodes: []string{"cluster", "chart"},
			wantEdges: []string{"cluster>chart may provide helm"},
		},
		{
			name:      "ties to components outside the plan are left out",
			verb:      VerbDeploy,
			comps:     []string{"api"},
			after:     map[string][]string{"api": {"db"}},
			wantNodes: []string{"api"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := compPlan(t, tt.verb, tt.comps, tt.after, tt.mandatory, tt.extra)
			for c, l := range tt.links {
				p.Components[c].Links = l
			}
			for c, d := range tt.depends {
				p.Components[c].Depends = d
			}
			g := p.ComponentGraph()
			var names []string
			for _, n := range g.Nodes {
				names = append(names, n.Name)
			}
			if diff := cmp.Diff(tt.wantNodes, names); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantEdges, edgeList(g)); diff != "" {
				t.Errorf("edges (-want +got):\n%s", diff)
			}
			if g.Reduced != tt.reduced {
				t.Errorf("reduced %d ties, want %d", g.Reduced, tt.reduced)
			}
		})
	}
}

// TestComponentNodesFoldSteps: a component's box holds its visible steps
// (hidden bookkeeping left out), says whether it is mandatory, and counts
// the steps past the ones it lists.
func TestComponentNodesFoldSteps(t *testing.T) {
	extra := map[string][]string{"big": {"s1", "s2", "s3", "s4", "s5", "s6", "s7"}, "one": {"probe http"}}
	p := compPlan(t, VerbDeploy, []string{"one", "big"}, nil, map[string]bool{"one": true}, extra)
	g := p.ComponentGraph()
	one, big := g.Node("one"), g.Node("big")
	if !one.Mandatory || big.Mandatory {
		t.Errorf("mandatory: one %v, big %v; want true, false", one.Mandatory, big.Mandatory)
	}
	if len(one.Steps) != 2 {
		t.Fatalf("one has %d steps, want its verb and its probe (hidden ones left out)", len(one.Steps))
	}
	if want := "one\ndeploy\n· deploy one\n· post_component: probe http"; one.NodeLabel() != want {
		t.Errorf("label of one:\n%s\nwant:\n%s", one.NodeLabel(), want)
	}
	label := big.NodeLabel()
	if !strings.Contains(label, "deploy · optional") || !strings.HasSuffix(label, "+2 more steps") {
		t.Errorf("label of big:\n%s\nwant it optional, with the steps past 6 counted", label)
	}
	if g.Position("big") != 1 || g.Position("nope") != -1 || g.Node("nope") != nil {
		t.Error("positions: want big at 1 and nothing for an unknown component")
	}
}

func TestLinkLabel(t *testing.T) {
	tests := []struct {
		links []Link
		want  string
	}{
		{nil, ""},
		{[]Link{{Kind: LinkDepends}}, "depends"},
		{[]Link{{Kind: LinkDepends}, {Kind: LinkOutput, What: "a"}, {Kind: LinkOutput, What: "b"}}, "depends, output a, b"},
		{[]Link{{Kind: LinkOutput, What: "a"}, {Kind: LinkOutput, What: "b"}, {Kind: LinkOutput, What: "c"}, {Kind: LinkOutput, What: "d"}, {Kind: LinkOutput, What: "e"}}, "output a, b, c +2"},
		{[]Link{{Kind: LinkProvides, What: "k8s"}, {Kind: LinkProvides, What: "helm", Maybe: true}}, "provides k8s, may provide helm"},
		{[]Link{{Kind: LinkOutput, What: "a"}, {Kind: LinkOutput, What: "a"}}, "output a"},
	}
	for _, tt := range tests {
		if got := LinkLabel(tt.links); got != tt.want {
			t.Errorf("LinkLabel(%v) = %q, want %q", tt.links, got, tt.want)
		}
	}
	if s := (Link{Kind: LinkProvides, What: "helm", Maybe: true}).String(); s != "may provide helm" {
		t.Errorf("String() = %q", s)
	}
}

func TestComponentGraphRenderings(t *testing.T) {
	p := compPlan(t, VerbDeploy, []string{"db", "app"}, map[string][]string{"app": {"db"}}, map[string]bool{"db": true}, nil)
	p.Components["app"].Links = map[string][]Link{"db": {{Kind: LinkOutput, What: "db.host"}}}
	g := p.ComponentGraph()
	var dot, mm strings.Builder
	if err := g.WriteDOT(&dot); err != nil {
		t.Fatal(err)
	}
	if err := g.WriteMermaid(&mm); err != nil {
		t.Fatal(err)
	}
	wantDOT := `// deploy s: 2 components, 1 ties (0 implied by longer paths left out); dashed box: optional component
digraph "deploy s" {
  rankdir=LR;
  node [shape=box];
  "db" [label="db\ndeploy\n· deploy db"];
  "app" [label="app\ndeploy · optional\n· deploy app", style=dashed];
  "db" -> "app" [label="output db.host"];
}
`
	if diff := cmp.Diff(wantDOT, dot.String()); diff != "" {
		t.Errorf("DOT (-want +got):\n%s", diff)
	}
	wantMM := `%% deploy s: 2 components, 1 ties (0 implied by longer paths left out); dashed box: optional component
flowchart LR
  n0["db<br/>deploy<br/>· deploy db"]
  n1["app<br/>deploy · optional<br/>· deploy app"]
  n0 -->|"output db.host"| n1
  style n1 stroke-dasharray: 5 5
`
	if diff := cmp.Diff(wantMM, mm.String()); diff != "" {
		t.Errorf("Mermaid (-want +got):\n%s", diff)
	}
}

func TestNestChain(t *testing.T) {
	for up, want := range map[string][]string{
		"":         nil,
		"web":      {"web"},
		"web.edge": {"web", "web.edge"},
		"a.b.c":    {"a", "a.b", "a.b.c"},
	} {
		if got := NestChain(up); !slices.Equal(got, want) {
			t.Errorf("NestChain(%q) = %q, want %q", up, got, want)
		}
	}
}
