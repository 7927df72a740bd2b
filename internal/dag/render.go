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
	// ClusterLabel gives a cluster's label; its name when nil or "".
	ClusterLabel func(cluster string) string
	// ClusterParent nests clusters: the cluster a cluster is drawn in, ""
	// for none (nil: clusters do not nest).
	ClusterParent func(cluster string) string
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

func (o RenderOptions) clusterLabel(c string) string {
	if o.ClusterLabel != nil {
		if l := o.ClusterLabel(c); l != "" {
			return l
		}
	}
	return c
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
// top level; with them, each cluster in order of its first node (or of its
// first nested cluster's), opened and closed around its members and the
// clusters nested in it ("" holds the nodes of no cluster).
func (o RenderOptions) eachNode(g *Graph, node func(indent, n string), open func(indent string, i int, cluster string), close func(indent string)) {
	if o.Cluster == nil {
		for _, n := range g.names {
			node("  ", n)
		}
		return
	}
	parent := func(c string) string {
		if o.ClusterParent == nil {
			return ""
		}
		return o.ClusterParent(c)
	}
	// children lists, per cluster, its nodes and nested clusters in order
	// of appearance; a cluster appears with its first node, after its
	// parents.
	type item struct {
		node, cluster string
	}
	children := map[string][]item{}
	seen := map[string]bool{"": true}
	var reach func(c string)
	reach = func(c string) {
		if seen[c] {
			return
		}
		seen[c] = true
		p := parent(c)
		reach(p)
		children[p] = append(children[p], item{cluster: c})
	}
	for _, n := range g.names {
		c := o.Cluster(n)
		reach(c)
		children[c] = append(children[c], item{node: n})
	}
	next := 0
	var walk func(c, indent string)
	walk = func(c, indent string) {
		for _, it := range children[c] {
			if it.cluster == "" {
				node(indent, it.node)
				continue
			}
			open(indent, next, it.cluster)
			next++
			walk(it.cluster, indent+"  ")
			close(indent)
		}
	}
	walk("", "  ")
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
		func(indent string, i int, c string) {
			fmt.Fprintf(&b, "%ssubgraph cluster_%d {\n%s  label=%s;\n", indent, i, indent, dotQuote(o.clusterLabel(c)))
		},
		func(indent string) { b.WriteString(indent + "}\n") })
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
		func(indent string, i int, c string) {
			fmt.Fprintf(&b, "%ssubgraph c%d[%s]\n", indent, i, mermaidQuote(o.clusterLabel(c)))
		},
		func(indent string) { b.WriteString(indent + "end\n") })
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
