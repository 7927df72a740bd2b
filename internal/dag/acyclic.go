package dag

import "slices"

// Acyclic is a directed graph of dense integer nodes (0, 1, 2, … in the order
// they are added) that refuses any edge closing a cycle, at the moment it is
// added. It keeps a topological order up to date as edges arrive (Pearce and
// Kelly's dynamic topological sort): an edge that agrees with the order costs
// nothing, and one that does not searches only the nodes between its ends.
// Graphs built mostly in order — a plan's steps are — check each edge in
// constant time. Not safe for concurrent use, Reaches included: its searches
// mark nodes and fill buffers kept in the graph.
type Acyclic struct {
	out, in [][]int
	ord     []int // ord[v] is v's position in the topological order
	mark    []bool
	// parent is where a forward search came from to each node it marked
	// (valid only for marked nodes): a slice kept with the graph, not a
	// map per search, which cost most of a plan's validation.
	parent []int
	// fwd, back, stack and pos are the searches' buffers, kept with the
	// graph: a plan's validation searches once for each input of a step.
	fwd, back, stack, pos []int
}

// AddNode adds a node at the end of the order and returns it.
func (g *Acyclic) AddNode() int {
	v := len(g.ord)
	g.out = append(g.out, nil)
	g.in = append(g.in, nil)
	g.ord = append(g.ord, v)
	g.mark = append(g.mark, false)
	g.parent = append(g.parent, -1)
	return v
}

// Reserve makes room for n more nodes: a graph of 30,000 nodes grown one
// append at a time allocates its slices five times over.
func (g *Acyclic) Reserve(n int) {
	g.out = slices.Grow(g.out, n)
	g.in = slices.Grow(g.in, n)
	g.ord = slices.Grow(g.ord, n)
	g.mark = slices.Grow(g.mark, n)
	g.parent = slices.Grow(g.parent, n)
}

// Len is the number of nodes.
func (g *Acyclic) Len() int { return len(g.ord) }

// AddEdge adds from → to unless it would close a cycle. Then nothing is added
// and the cycle is returned as a path from → to → … → from.
func (g *Acyclic) AddEdge(from, to int) []int {
	if from == to {
		return []int{from, from}
	}
	lb, ub := g.ord[to], g.ord[from]
	if lb < ub {
		fwd, cycle := g.forward(to, from, ub)
		if cycle != nil {
			return cycle
		}
		back := g.backward(from, lb)
		g.reorder(back, fwd)
	}
	g.out[from] = append(g.out[from], to)
	g.in[to] = append(g.in[to], from)
	return nil
}

// forward collects the nodes reachable from start whose position is below
// ub; reaching target (at ub) means a cycle, returned as target → start → … →
// target. The nodes it returns live in the graph's buffer until the next
// search.
func (g *Acyclic) forward(start, target, ub int) ([]int, []int) {
	g.parent[start] = -1
	seen := append(g.fwd[:0], start)
	g.mark[start] = true
	stack := append(g.stack[:0], start)
	var cycle []int
	for len(stack) > 0 && cycle == nil {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, w := range g.out[v] {
			if w == target {
				path := []int{target}
				for u := v; u != -1; u = g.parent[u] {
					path = append(path, u)
				}
				// path is target, v, …, start: reverse the part after target.
				slices.Reverse(path[1:])
				cycle = append(path, target)
				break
			}
			if !g.mark[w] && g.ord[w] < ub {
				g.mark[w] = true
				g.parent[w] = v
				seen = append(seen, w)
				stack = append(stack, w)
			}
		}
	}
	for _, v := range seen {
		g.mark[v] = false
	}
	g.fwd, g.stack = seen, stack
	if cycle != nil {
		return nil, cycle
	}
	return seen, nil
}

// backward collects the nodes from which start is reachable whose position
// is above lb, into the graph's other buffer.
func (g *Acyclic) backward(start, lb int) []int {
	seen := append(g.back[:0], start)
	g.mark[start] = true
	stack := append(g.stack[:0], start)
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, w := range g.in[v] {
			if !g.mark[w] && g.ord[w] > lb {
				g.mark[w] = true
				seen = append(seen, w)
				stack = append(stack, w)
			}
		}
	}
	for _, v := range seen {
		g.mark[v] = false
	}
	g.back, g.stack = seen, stack
	return seen
}

// reorder gives the nodes that reach the new edge's source the lowest of the
// positions both sets hold, in their old relative order, and the nodes the
// target reaches the rest.
func (g *Acyclic) reorder(back, fwd []int) {
	byOrd := func(a, b int) int { return g.ord[a] - g.ord[b] }
	slices.SortFunc(back, byOrd)
	slices.SortFunc(fwd, byOrd)
	pos := g.pos[:0]
	for _, v := range back {
		pos = append(pos, g.ord[v])
	}
	for _, v := range fwd {
		pos = append(pos, g.ord[v])
	}
	slices.Sort(pos)
	for i, v := range back {
		g.ord[v] = pos[i]
	}
	for i, v := range fwd {
		g.ord[v] = pos[len(back)+i]
	}
	g.pos = pos
}

// Position is a node's place in the current topological order.
func (g *Acyclic) Position(v int) int { return g.ord[v] }

// Reaches reports whether there is a path from a to b. The search only visits
// nodes placed between them in the topological order.
func (g *Acyclic) Reaches(a, b int) bool {
	if a == b {
		return true
	}
	if g.ord[a] > g.ord[b] {
		return false
	}
	_, found := g.forward(a, b, g.ord[b])
	return found != nil
}
