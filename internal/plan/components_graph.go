package plan

import (
	"slices"
	"strconv"
	"strings"

	"github.com/gantry-dev/gantry/internal/dag"
)

// Kinds of links between components: why one runs after another.
const (
	// LinkDepends is an entry of the component's depends list.
	LinkDepends = "depends"
	// LinkProvides is a requirement of the component that the other
	// provides (What is the capability).
	LinkProvides = "provides"
	// LinkOutput is an output of the other that the component's
	// parameters read (What is the output's name).
	LinkOutput = "output"
	// LinkUp orders a leaf of a nested stack (What) after the components
	// of the stack it is up to.
	LinkUp = "up"
	// LinkAfter is a tie the plan does not explain (a plan saved before
	// links were recorded, a component only the state knows).
	LinkAfter = "after"
)

// Link says why a component runs after another.
type Link struct {
	Kind string `json:"kind"`
	What string `json:"what,omitempty"`
	// Maybe marks a requirement nothing in the stack declares to provide:
	// the component runs after every component before it, any of which
	// may provide it when it runs.
	Maybe bool `json:"maybe,omitempty"`
}

// String is how a link is read: "depends", "provides kubernetes",
// "may provide helm", "output db.host".
func (l Link) String() string {
	switch {
	case l.What == "":
		return l.Kind
	case l.Kind == LinkProvides && l.Maybe:
		return "may provide " + l.What
	}
	return l.Kind + " " + l.What
}

// ComponentNode is one component of a ComponentGraph: what the plan does
// to it, and its visible steps folded into it.
type ComponentNode struct {
	Name string
	// Action and Reason say what the plan does to the component and why.
	Action, Reason string
	Verb           string
	// Mandatory components stop the run when they fail; the others are
	// optional: their failure is a warning and skips their dependents.
	Mandatory bool
	// Orphan is set for a component the stack no longer lists, torn down.
	Orphan bool
	// Up names the nested stack the component is a leaf of ("" at the
	// top): the graph draws each nested stack as a box around its leaves.
	Up string
	// Steps are the component's steps people see, in plan order.
	Steps []*Node
}

// ComponentEdge is a tie between two components: To runs after From (for
// an undeploy, To is torn down after From).
type ComponentEdge struct {
	From, To string
	Links    []Link
}

// Label is the edge's links as one line: "depends, output db.host".
func (e ComponentEdge) Label() string { return LinkLabel(e.Links) }

// Weak reports whether every link of the edge is a requirement that an
// earlier component only may provide.
func (e ComponentEdge) Weak() bool {
	for _, l := range e.Links {
		if !l.Maybe {
			return false
		}
	}
	return len(e.Links) > 0
}

// ComponentGraph is a plan seen one component at a time: a node per
// component with its lifecycle steps folded in, and the ties between
// components labelled by why they exist, without those that longer paths
// imply. Bookkeeping steps, flight groups and failure paths are not in it.
type ComponentGraph struct {
	Stack, Verb string
	Nodes       []*ComponentNode // in plan order
	Edges       []ComponentEdge  // sorted by the positions of From, then To
	// Reduced counts the edges left out because longer paths imply them.
	Reduced int

	index map[string]int
}

// Node returns the component's node, or nil.
func (g *ComponentGraph) Node(name string) *ComponentNode {
	if i, ok := g.index[name]; ok {
		return g.Nodes[i]
	}
	return nil
}

// Position is the component's position in Nodes, or -1.
func (g *ComponentGraph) Position(name string) int {
	if i, ok := g.index[name]; ok {
		return i
	}
	return -1
}

// ComponentGraph folds the plan into one node per component.
func (p *Plan) ComponentGraph() *ComponentGraph {
	g := &ComponentGraph{Stack: p.Stack, Verb: p.Verb, index: map[string]int{}}
	for _, n := range p.Nodes {
		if n.Component == "" {
			continue
		}
		i, ok := g.index[n.Component]
		if !ok {
			i = len(g.Nodes)
			g.index[n.Component] = i
			cn := &ComponentNode{Name: n.Component, Verb: p.Verb}
			if c := p.Components[n.Component]; c != nil {
				cn.Action, cn.Reason, cn.Verb, cn.Orphan, cn.Up = c.Action, c.Reason, c.Verb, c.Orphan, c.Up
			}
			g.Nodes = append(g.Nodes, cn)
		}
		cn := g.Nodes[i]
		cn.Mandatory = cn.Mandatory || n.Critical
		if n.Kind == KindComponent && cn.Action == "" {
			cn.Action, cn.Reason = n.Action, n.Reason
		}
		if !n.Hidden {
			cn.Steps = append(cn.Steps, n)
		}
	}
	full := dag.New()
	links := map[[2]string][]Link{}
	for _, cn := range g.Nodes {
		full.AddNode(cn.Name)
	}
	for _, cn := range g.Nodes {
		c := p.Components[cn.Name]
		if c == nil {
			continue
		}
		for _, up := range c.After {
			if _, ok := g.index[up]; !ok || up == cn.Name {
				continue
			}
			from, to := up, cn.Name
			if p.Verb == VerbUndeploy {
				from, to = to, from
			}
			full.AddEdge(from, to)
			links[[2]string{from, to}] = c.LinksTo(up)
		}
	}
	reduced, err := full.Reduce()
	if err != nil {
		// After lists come from an acyclic graph: a cycle is a plan saved
		// by hand. It is drawn as it is.
		reduced = full
	}
	for _, e := range reduced.Edges() {
		g.Edges = append(g.Edges, ComponentEdge{From: e[0], To: e[1], Links: links[e]})
	}
	g.Reduced = len(full.Edges()) - len(g.Edges)
	return g
}

// LinksTo says why the component runs after up, a component of its After
// list: its recorded links, else the depends of its manifest, else a tie
// the plan does not explain.
func (c *Component) LinksTo(up string) []Link {
	if l := c.Links[up]; len(l) > 0 {
		return l
	}
	if slices.Contains(c.Depends, up) {
		return []Link{{Kind: LinkDepends}}
	}
	return []Link{{Kind: LinkAfter}}
}

// LinkLabel writes links as one short line, grouping what each kind is
// about: "depends, provides kubernetes, output host, port".
func LinkLabel(links []Link) string {
	var kinds []string
	whats := map[string][]string{}
	for _, l := range links {
		k := l.Kind
		if l.Maybe {
			k = "may provide"
		}
		if _, ok := whats[k]; !ok {
			kinds = append(kinds, k)
		}
		if l.What != "" && !slices.Contains(whats[k], l.What) {
			whats[k] = append(whats[k], l.What)
		}
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		w := whats[k]
		const most = 3
		extra := ""
		if len(w) > most {
			extra = " +" + strconv.Itoa(len(w)-most)
			w = w[:most]
		}
		parts[i] = strings.TrimSpace(k + " " + strings.Join(w, ", ") + extra)
	}
	return strings.Join(parts, ", ")
}
