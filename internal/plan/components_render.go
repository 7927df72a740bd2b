package plan

import (
	"fmt"
	"io"
	"strings"

	"github.com/gantry-dev/gantry/internal/dag"
)

// stepsShown is how many folded steps a component's box lists; the rest
// are counted.
const stepsShown = 6

// stepTitleWidth is where a folded step's title is cut, in characters.
const stepTitleWidth = 56

// NodeLabel is a component's box: its name; what happens to it, marked
// optional when it is; and its visible steps, one a line.
func (n *ComponentNode) NodeLabel() string {
	lines := []string{n.Name}
	what := n.Action
	if what == "" {
		what = n.Verb
	}
	if n.Reason != "" {
		what += " (" + n.Reason + ")"
	}
	if !n.Mandatory {
		what += " · optional"
	}
	lines = append(lines, cut(what, stepTitleWidth))
	for i, s := range n.Steps {
		if i == stepsShown && len(n.Steps) > stepsShown+1 {
			lines = append(lines, fmt.Sprintf("+%d more steps", len(n.Steps)-stepsShown))
			break
		}
		lines = append(lines, "· "+cut(Title(s), stepTitleWidth))
	}
	return strings.Join(lines, "\n")
}

// cut shortens s to at most n characters, marking the cut with "…".
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// renderGraph converts the component graph for the DOT and Mermaid
// renderers: optional components get a dashed box, ties that a component
// only may provide a dashed arrow, every tie its label, and each nested
// stack a box around its leaves.
func (g *ComponentGraph) renderGraph() (*dag.Graph, dag.RenderOptions) {
	d := dag.New()
	for _, n := range g.Nodes {
		d.AddNode(n.Name)
	}
	edges := make(map[[2]string]ComponentEdge, len(g.Edges))
	for _, e := range g.Edges {
		d.AddEdge(e.From, e.To)
		edges[[2]string{e.From, e.To}] = e
	}
	o := dag.RenderOptions{
		Label: func(name string) string { return g.Node(name).NodeLabel() },
		NodeStyle: func(name string) string {
			if g.Node(name).Mandatory {
				return ""
			}
			return "dashed"
		},
		EdgeStyle: func(from, to string) string {
			if edges[[2]string{from, to}].Weak() {
				return "dashed"
			}
			return ""
		},
		EdgeLabel: func(from, to string) string { return edges[[2]string{from, to}].Label() },
	}
	for _, n := range g.Nodes {
		if n.Up == "" {
			continue
		}
		// Nested stacks are boxes around their leaves, nested as they are.
		o.Cluster = func(name string) string { return g.Node(name).Up }
		o.ClusterParent = func(c string) string {
			chain := NestChain(c)
			if len(chain) < 2 {
				return ""
			}
			return chain[len(chain)-2]
		}
		o.ClusterLabel = func(c string) string { return c + " (nested stack)" }
		break
	}
	return d, o
}

// WriteDOT writes the component graph in Graphviz DOT: a box per
// component (dashed when optional) listing its steps, an arrow per tie
// labelled with why it exists.
func (g *ComponentGraph) WriteDOT(w io.Writer) error {
	d, o := g.renderGraph()
	if _, err := fmt.Fprintf(w, "// %s %s: %d components, %d ties (%d implied by longer paths left out); dashed box: optional component\n",
		g.Verb, g.Stack, len(g.Nodes), len(g.Edges), g.Reduced); err != nil {
		return err
	}
	return d.WriteDOT(w, g.Verb+" "+g.Stack, o)
}

// WriteMermaid writes the component graph as a Mermaid flowchart.
func (g *ComponentGraph) WriteMermaid(w io.Writer) error {
	d, o := g.renderGraph()
	if _, err := fmt.Fprintf(w, "%%%% %s %s: %d components, %d ties (%d implied by longer paths left out); dashed box: optional component\n",
		g.Verb, g.Stack, len(g.Nodes), len(g.Edges), g.Reduced); err != nil {
		return err
	}
	return d.WriteMermaid(w, o)
}
