// Package dag is a directed graph of named nodes, domain-free: stable
// topological order, cycles as paths, transitive reduction, DOT and Mermaid.
package dag

import (
	"container/heap"
	"fmt"
	"slices"
	"strings"
)

// Graph is a directed graph; an edge from a to b means a comes before b. Nodes
// keep the position they were added at, which breaks ties in orders.
type Graph struct {
	names []string
	index map[string]int
	out   [][]int
	in    [][]int
	edges map[uint64]struct{} // edgeKey(from, to): a map of 8-byte keys hashes fastest
}

// edgeKey packs an edge's two positions into one map key.
func edgeKey(a, b int) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// New returns an empty graph.
func New() *Graph {
	return &Graph{index: map[string]int{}, edges: map[uint64]struct{}{}}
}

// NewSized returns an empty graph with room for about nodes nodes and edges
// edges: one of 10,000 nodes otherwise grows its maps a dozen times.
func NewSized(nodes, edges int) *Graph {
	return &Graph{index: make(map[string]int, nodes), edges: make(map[uint64]struct{}, edges),
		names: make([]string, 0, nodes), out: make([][]int, 0, nodes), in: make([][]int, 0, nodes)}
}

// AddNode adds a node unless it exists; it returns the node's position.
func (g *Graph) AddNode(name string) int {
	if i, ok := g.index[name]; ok {
		return i
	}
	i := len(g.names)
	g.names = append(g.names, name)
	g.index[name] = i
	g.out = append(g.out, nil)
	g.in = append(g.in, nil)
	return i
}

// AddEdge adds an edge from → to, adding the nodes if needed; duplicates are
// ignored.
func (g *Graph) AddEdge(from, to string) {
	g.AddEdgeAt(g.AddNode(from), g.AddNode(to))
}

// AddEdgeAt adds an edge between the nodes at two positions (AddNode's);
// duplicates are ignored. It reports whether the edge is new.
func (g *Graph) AddEdgeAt(a, b int) bool {
	k := edgeKey(a, b)
	if _, dup := g.edges[k]; dup {
		return false
	}
	g.edges[k] = struct{}{}
	g.out[a] = append(g.out[a], b)
	g.in[b] = append(g.in[b], a)
	return true
}

// Has reports whether the node exists.
func (g *Graph) Has(name string) bool { _, ok := g.index[name]; return ok }

// HasEdge reports whether the edge from → to exists.
func (g *Graph) HasEdge(from, to string) bool {
	a, ok1 := g.index[from]
	b, ok2 := g.index[to]
	if !ok1 || !ok2 {
		return false
	}
	_, ok := g.edges[edgeKey(a, b)]
	return ok
}

// Len is the number of nodes.
func (g *Graph) Len() int { return len(g.names) }

// Nodes returns the nodes in the order they were added.
func (g *Graph) Nodes() []string { return append([]string(nil), g.names...) }

// Position returns the position of a node, or -1.
func (g *Graph) Position(name string) int {
	if i, ok := g.index[name]; ok {
		return i
	}
	return -1
}

// Successors returns the nodes with an edge from name, in the order the edges
// were added.
func (g *Graph) Successors(name string) []string { return g.namesOf(g.out, name) }

// Predecessors returns the nodes with an edge to name.
func (g *Graph) Predecessors(name string) []string { return g.namesOf(g.in, name) }

func (g *Graph) namesOf(adj [][]int, name string) []string {
	i, ok := g.index[name]
	if !ok {
		return nil
	}
	out := make([]string, len(adj[i]))
	for k, j := range adj[i] {
		out[k] = g.names[j]
	}
	return out
}

// Edges returns every edge as [from, to], sorted by the positions of from, then to.
func (g *Graph) Edges() [][2]string {
	var out [][2]string
	for a := range g.names {
		tos := append([]int(nil), g.out[a]...)
		slices.Sort(tos)
		for _, b := range tos {
			out = append(out, [2]string{g.names[a], g.names[b]})
		}
	}
	return out
}

// CycleError lists the cycles of a graph, each as a path that ends where it
// starts.
type CycleError struct {
	Cycles [][]string
}

func (e *CycleError) Error() string {
	parts := make([]string, len(e.Cycles))
	for i, c := range e.Cycles {
		parts[i] = strings.Join(c, " → ")
	}
	if len(parts) == 1 {
		return "cycle: " + parts[0]
	}
	return "cycles: " + strings.Join(parts, "; ")
}

// TopoOrder returns a topological order in which, among the nodes ready at any
// point, the one added first comes first. A graph with cycles gives a
// *CycleError naming every cycle.
func (g *Graph) TopoOrder() ([]string, error) {
	n := len(g.names)
	indeg := make([]int, n)
	for i := range g.in {
		indeg[i] = len(g.in[i])
	}
	ready := &intHeap{}
	for i := 0; i < n; i++ {
		if indeg[i] == 0 {
			heap.Push(ready, i)
		}
	}
	order := make([]string, 0, n)
	for ready.Len() > 0 {
		i := heap.Pop(ready).(int)
		order = append(order, g.names[i])
		for _, j := range g.out[i] {
			indeg[j]--
			if indeg[j] == 0 {
				heap.Push(ready, j)
			}
		}
	}
	if len(order) < n {
		return nil, &CycleError{Cycles: g.Cycles()}
	}
	return order, nil
}

// Cycles returns one cycle per strongly connected component that has one (self
// loops included), each as a path a → b → … → a starting at the component's
// first-added node. An acyclic graph gives none.
func (g *Graph) Cycles() [][]string {
	var cycles [][]string
	for _, scc := range g.sccs() {
		if _, self := g.edges[edgeKey(scc[0], scc[0])]; len(scc) == 1 && !self {
			continue
		}
		in := map[int]bool{}
		start := scc[0]
		for _, v := range scc {
			in[v] = true
			if v < start {
				start = v
			}
		}
		cycles = append(cycles, g.cycleThrough(start, in))
	}
	// Report cycles in the order of their first node.
	sortCycles(cycles, g.index)
	return cycles
}

// cycleThrough finds a shortest cycle from start back to start inside the
// strongly connected component in, preferring earlier-added nodes.
func (g *Graph) cycleThrough(start int, in map[int]bool) []string {
	prev := map[int]int{}
	queue := []int{start}
	seen := map[int]bool{start: true}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		succ := append([]int(nil), g.out[v]...)
		slices.Sort(succ)
		for _, w := range succ {
			if !in[w] {
				continue
			}
			if w == start {
				path := []int{v}
				for v != start {
					v = prev[v]
					path = append(path, v)
				}
				out := make([]string, 0, len(path)+1)
				for i := len(path) - 1; i >= 0; i-- {
					out = append(out, g.names[path[i]])
				}
				return append(out, g.names[start])
			}
			if !seen[w] {
				seen[w] = true
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	return []string{g.names[start], g.names[start]}
}

// sccs returns the strongly connected components (Tarjan's algorithm,
// iterative so that deep graphs do not exhaust the stack).
func (g *Graph) sccs() [][]int {
	n := len(g.names)
	index := make([]int, n)
	low := make([]int, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var stack []int
	var out [][]int
	next := 0
	type frame struct{ v, edge int }
	for root := 0; root < n; root++ {
		if index[root] >= 0 {
			continue
		}
		call := []frame{{v: root}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			if f.edge < len(g.out[f.v]) {
				w := g.out[f.v][f.edge]
				f.edge++
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{v: w})
				} else if onStack[w] && index[w] < low[f.v] {
					low[f.v] = index[w]
				}
				continue
			}
			v := f.v
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].v
				if low[v] < low[p] {
					low[p] = low[v]
				}
			}
			if low[v] == index[v] {
				var comp []int
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp = append(comp, w)
					if w == v {
						break
					}
				}
				slices.Sort(comp)
				out = append(out, comp)
			}
		}
	}
	return out
}

// Reachable returns the nodes reachable from name (name itself excluded).
func (g *Graph) Reachable(name string) []string { return g.walk(g.out, true, name) }

// ReachableFrom returns the nodes reachable from any of names by at least
// one edge (a name is in it only when another, or a cycle, leads to it).
func (g *Graph) ReachableFrom(names ...string) []string { return g.walk(g.out, false, names...) }

// Ancestors returns the nodes from which name is reachable.
func (g *Graph) Ancestors(name string) []string { return g.walk(g.in, true, name) }

// AncestorsOf returns the nodes from which any of names is reachable by at
// least one edge (a name is in it only when another, or a cycle, leads
// from it): one walk, where Ancestors of each walked the graph again.
func (g *Graph) AncestorsOf(names ...string) []string { return g.walk(g.in, false, names...) }

// walk follows adj from the names; skipStarts leaves them out even when a
// cycle leads back to them.
func (g *Graph) walk(adj [][]int, skipStarts bool, names ...string) []string {
	seen := make([]bool, len(g.names))
	var stack []int
	for _, name := range names {
		if v, ok := g.index[name]; ok {
			stack = append(stack, v)
			seen[v] = skipStarts
		}
	}
	var out []int
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, w := range adj[v] {
			if !seen[w] {
				seen[w] = true
				out = append(out, w)
				stack = append(stack, w)
			}
		}
	}
	slices.Sort(out)
	found := make([]string, len(out))
	for i, v := range out {
		found[i] = g.names[v]
	}
	return found
}

// Reduce returns the transitive reduction of an acyclic graph: the same nodes,
// and only the edges not implied by longer paths.
func (g *Graph) Reduce() (*Graph, error) {
	order, err := g.TopoOrder()
	if err != nil {
		return nil, err
	}
	n := len(g.names)
	words := (n + 63) / 64
	reach := make([][]uint64, n)
	// In reverse topological order, each node reaches its successors and what they reach.
	for k := len(order) - 1; k >= 0; k-- {
		v := g.index[order[k]]
		r := make([]uint64, words)
		for _, w := range g.out[v] {
			r[w/64] |= 1 << (w % 64)
			for i, x := range reach[w] {
				r[i] |= x
			}
		}
		reach[v] = r
	}
	red := New()
	for _, name := range g.names {
		red.AddNode(name)
	}
	for v := range g.names {
		for _, w := range g.out[v] {
			implied := false
			for _, u := range g.out[v] {
				if u != w && reach[u][w/64]&(1<<(w%64)) != 0 {
					implied = true
					break
				}
			}
			if !implied {
				red.AddEdge(g.names[v], g.names[w])
			}
		}
	}
	return red, nil
}

// String lists the edges, for debugging.
func (g *Graph) String() string {
	var b strings.Builder
	for _, e := range g.Edges() {
		fmt.Fprintf(&b, "%s -> %s\n", e[0], e[1])
	}
	return b.String()
}

type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
