package dag

import (
	"math/rand"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAcyclicRefusesCycles(t *testing.T) {
	tests := []struct {
		name  string
		edges [][2]int
		add   [2]int
		cycle []int
	}{
		{"self loop", nil, [2]int{1, 1}, []int{1, 1}},
		{"back edge of a chain", [][2]int{{0, 1}, {1, 2}, {2, 3}}, [2]int{3, 0}, []int{3, 0, 1, 2, 3}},
		{"two nodes", [][2]int{{2, 1}}, [2]int{1, 2}, []int{1, 2, 1}},
		{"backward edge without a cycle", [][2]int{{0, 1}, {2, 3}}, [2]int{3, 0}, nil},
		{"forward edge", [][2]int{{0, 1}}, [2]int{1, 3}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &Acyclic{}
			for i := 0; i < 4; i++ {
				g.AddNode()
			}
			for _, e := range tt.edges {
				if c := g.AddEdge(e[0], e[1]); c != nil {
					t.Fatalf("setup edge %v refused: %v", e, c)
				}
			}
			got := g.AddEdge(tt.add[0], tt.add[1])
			if diff := cmp.Diff(tt.cycle, got); diff != "" {
				t.Errorf("cycle (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAcyclicAgreesWithTopoOrder adds random edges in both directions and
// checks every decision against a full search, and that the order kept is
// always topological.
func TestAcyclicAgreesWithTopoOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for round := 0; round < 50; round++ {
		n := 2 + rng.Intn(40)
		g, ref := &Acyclic{}, New()
		for i := 0; i < n; i++ {
			addBoth(g, ref)
		}
		for k := 0; k < n*3; k++ {
			checkAddEdge(t, g, ref, rng.Intn(n), rng.Intn(n))
			checkReaches(t, g, ref, rng.Intn(n), rng.Intn(n))
		}
	}
}

// FuzzAcyclic reads its input as a program of graph operations — a node
// added (with room reserved first or not), an edge added, a reachability
// asked — and checks each answer against a full search: the searches reuse
// buffers kept in the graph, so a wrong answer may show only after a
// particular sequence of searches.
func FuzzAcyclic(f *testing.F) {
	f.Add([]byte{4, 1, 0, 1, 1, 1, 2, 1, 2, 0, 2, 0, 2})
	f.Add([]byte{0, 0, 0, 1, 2, 1, 1, 3, 1, 2, 1, 1, 3, 0, 2, 3, 2})
	f.Fuzz(func(t *testing.T, prog []byte) {
		if len(prog) > 3000 {
			return
		}
		g, ref := &Acyclic{}, New()
		addBoth(g, ref)
		for i := 0; i+2 < len(prog); i += 3 {
			op, a, b := prog[i]%4, int(prog[i+1]), int(prog[i+2])
			n := g.Len()
			switch op {
			case 0:
				if n < 64 {
					if a%2 == 0 {
						g.Reserve(b % 8)
					}
					addBoth(g, ref)
				}
			case 1, 2:
				checkAddEdge(t, g, ref, a%n, b%n)
			case 3:
				checkReaches(t, g, ref, a%n, b%n)
			}
		}
	})
}

// addBoth adds a node to the graph and to its reference.
func addBoth(g *Acyclic, ref *Graph) {
	ref.AddNode(strconv.Itoa(g.AddNode()))
}

// checkAddEdge adds a → b to both graphs and checks that the graph refused
// it exactly when it closes a cycle, with a cycle of edges that exist, that
// its order stays topological, and that no search left a node marked.
func checkAddEdge(t *testing.T, g *Acyclic, ref *Graph, a, b int) {
	t.Helper()
	wantCycle := a == b || hasPath(ref, strconv.Itoa(b), strconv.Itoa(a))
	cycle := g.AddEdge(a, b)
	if (cycle != nil) != wantCycle {
		t.Fatalf("edge %d→%d: refused=%v, want %v", a, b, cycle != nil, wantCycle)
	}
	checkUnmarked(t, g)
	if cycle != nil {
		if cycle[0] != a || cycle[1] != b || cycle[len(cycle)-1] != a {
			t.Fatalf("cycle %v does not run through %d→%d", cycle, a, b)
		}
		for i := 1; i+1 < len(cycle); i++ {
			if !ref.HasEdge(strconv.Itoa(cycle[i]), strconv.Itoa(cycle[i+1])) {
				t.Fatalf("cycle %v uses a missing edge %d→%d", cycle, cycle[i], cycle[i+1])
			}
		}
		return
	}
	ref.AddEdge(strconv.Itoa(a), strconv.Itoa(b))
	for v := range g.out {
		for _, w := range g.out[v] {
			if g.Position(v) >= g.Position(w) {
				t.Fatalf("order broken: %d (at %d) → %d (at %d)", v, g.Position(v), w, g.Position(w))
			}
		}
	}
}

// checkReaches asks whether a reaches b and checks the answer.
func checkReaches(t *testing.T, g *Acyclic, ref *Graph, a, b int) {
	t.Helper()
	if got, want := g.Reaches(a, b), a == b || hasPath(ref, strconv.Itoa(a), strconv.Itoa(b)); got != want {
		t.Fatalf("Reaches(%d, %d) = %v, want %v", a, b, got, want)
	}
	checkUnmarked(t, g)
}

// checkUnmarked fails when a search left a node marked: the next search
// would skip it.
func checkUnmarked(t *testing.T, g *Acyclic) {
	t.Helper()
	for v, m := range g.mark {
		if m {
			t.Fatalf("node %d left marked by a search", v)
		}
	}
}

func hasPath(g *Graph, a, b string) bool {
	for _, n := range g.Reachable(a) {
		if n == b {
			return true
		}
	}
	return false
}

// BenchmarkAcyclicChain adds the edges of a long chain in order, as plans
// are built: each edge must cost the same however long the chain.
func BenchmarkAcyclicChain(b *testing.B) {
	g := &Acyclic{}
	prev := g.AddNode()
	for i := 0; i < b.N; i++ {
		v := g.AddNode()
		if c := g.AddEdge(prev, v); c != nil {
			b.Fatal(c)
		}
		prev = v
	}
}
