package dag

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// RenderOptions shape the DOT and Mermaid output.
type RenderOptions struct {
	// Label gives a node's label; the node's name when nil or "".
	Label func(name string) string
	// Cluster groups nodes into boxes (DOT subgraphs, Mermaid subgraphs); ""
	// leaves a node outside any box.
	Cluster func(name string) string
	// EdgeStyle gives an edge's style: "" for plain, "dashed" for a dashed edge.
	EdgeStyle func(from, to string) string
	// EdgeLabel gives an edge's label, "" for none.
	EdgeLabel func(from, to string) string
	// NodeStyle gives a node's style: "" for plain, "dashed" for a dashed
	// border, "bold" for a thick one.
	NodeStyle func(name string) string
}

func (o RenderOptions) nodeStyle(n string) string {
	if o.NodeStyle == nil {
		return ""
	}
	return o.NodeStyle(n)
}

func (o RenderOptions) label(n string) string {
	if o.Label != nil {
		if l := o.Label(n); l != "" {
			return l
		}
	}
	return n
}

// eachNode lays the nodes out for a renderer: without clusters all at the
// top level; with them, each cluster in order of its first node, opened and
// closed around its members ("" holds the nodes of no cluster).
func (o RenderOptions) eachNode(g *Graph, node func(indent, n string), open func(i int, cluster string), close func()) {
	if o.Cluster == nil {
		for _, n := range g.names {
			node("  ", n)
		}
		return
	}
	var order []string
	members := map[string][]string{}
	for _, n := range g.names {
		c := o.Cluster(n)
		if _, ok := members[c]; !ok {
			order = append(order, c)
		}
		members[c] = append(members[c], n)
	}
	for i, c := range order {
		if c == "" {
			for _, n := range members[c] {
				node("  ", n)
			}
			continue
		}
		open(i, c)
		for _, n := range members[c] {
			node("    ", n)
		}
		close()
	}
}

func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}

// WriteDOT writes the graph in Graphviz DOT.
func (g *Graph) WriteDOT(w io.Writer, name string, o RenderOptions) error {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n  rankdir=LR;\n  node [shape=box];\n", dotQuote(name))
	o.eachNode(g,
		func(indent, n string) {
			style := ""
			if s := o.nodeStyle(n); s != "" {
				style = ", style=" + s
			}
			fmt.Fprintf(&b, "%s%s [label=%s%s];\n", indent, dotQuote(n), dotQuote(o.label(n)), style)
		},
		func(i int, c string) { fmt.Fprintf(&b, "  subgraph cluster_%d {\n    label=%s;\n", i, dotQuote(c)) },
		func() { b.WriteString("  }\n") })
	for _, e := range g.Edges() {
		var attrs []string
		if o.EdgeStyle != nil {
			if s := o.EdgeStyle(e[0], e[1]); s != "" {
				attrs = append(attrs, "style="+s)
			}
		}
		if o.EdgeLabel != nil {
			if l := o.EdgeLabel(e[0], e[1]); l != "" {
				attrs = append(attrs, "label="+dotQuote(l))
			}
		}
		a := ""
		if len(attrs) > 0 {
			a = " [" + strings.Join(attrs, ", ") + "]"
		}
		fmt.Fprintf(&b, "  %s -> %s%s;\n", dotQuote(e[0]), dotQuote(e[1]), a)
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMermaid writes the graph as a Mermaid flowchart.
func (g *Graph) WriteMermaid(w io.Writer, o RenderOptions) error {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	ids := make(map[string]string, len(g.names))
	for i, n := range g.names {
		ids[n] = fmt.Sprintf("n%d", i)
	}
	o.eachNode(g,
		func(indent, n string) { fmt.Fprintf(&b, "%s%s[%s]\n", indent, ids[n], mermaidQuote(o.label(n))) },
		func(i int, c string) { fmt.Fprintf(&b, "  subgraph c%d[%s]\n", i, mermaidQuote(c)) },
		func() { b.WriteString("  end\n") })
	for _, e := range g.Edges() {
		arrow := "-->"
		if o.EdgeStyle != nil && o.EdgeStyle(e[0], e[1]) == "dashed" {
			arrow = "-.->"
		}
		label := ""
		if o.EdgeLabel != nil {
			if l := o.EdgeLabel(e[0], e[1]); l != "" {
				label = "|" + mermaidQuote(l) + "|"
			}
		}
		fmt.Fprintf(&b, "  %s %s%s %s\n", ids[e[0]], arrow, label, ids[e[1]])
	}
	for _, n := range g.names {
		switch o.nodeStyle(n) {
		case "dashed":
			fmt.Fprintf(&b, "  style %s stroke-dasharray: 5 5\n", ids[n])
		case "bold":
			fmt.Fprintf(&b, "  style %s stroke-width: 3px\n", ids[n])
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func mermaidQuote(s string) string {
	return `"` + strings.NewReplacer(`"`, "#quot;", "\n", "<br/>").Replace(s) + `"`
}

func sortCycles(cycles [][]string, index map[string]int) {
	sort.SliceStable(cycles, func(i, j int) bool { return index[cycles[i][0]] < index[cycles[j][0]] })
}
