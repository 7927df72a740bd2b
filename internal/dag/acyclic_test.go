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
		g := &Acyclic{}
		ref := New()
		for i := 0; i < n; i++ {
			g.AddNode()
			ref.AddNode(strconv.Itoa(i))
		}
		for k := 0; k < n*3; k++ {
			a, b := rng.Intn(n), rng.Intn(n)
			wantCycle := a == b || hasPath(ref, strconv.Itoa(b), strconv.Itoa(a))
			cycle := g.AddEdge(a, b)
			if (cycle != nil) != wantCycle {
				t.Fatalf("round %d: edge %d→%d: refused=%v, want %v", round, a, b, cycle != nil, wantCycle)
			}
			if cycle != nil {
				if cycle[0] != a || cycle[1] != b || cycle[len(cycle)-1] != a {
					t.Fatalf("cycle %v does not run through %d→%d", cycle, a, b)
				}
				for i := 1; i+1 < len(cycle); i++ {
					if !ref.HasEdge(strconv.Itoa(cycle[i]), strconv.Itoa(cycle[i+1])) {
						t.Fatalf("cycle %v uses a missing edge %d→%d", cycle, cycle[i], cycle[i+1])
					}
				}
				continue
			}
			ref.AddEdge(strconv.Itoa(a), strconv.Itoa(b))
			for v := range g.out {
				for _, w := range g.out[v] {
					if g.Position(v) >= g.Position(w) {
						t.Fatalf("order broken: %d (at %d) → %d (at %d)", v, g.Position(v), w, g.Position(w))
					}
				}
			}
			x, y := rng.Intn(n), rng.Intn(n)
			if got, want := g.Reaches(x, y), x == y || hasPath(ref, strconv.Itoa(x), strconv.Itoa(y)); got != want {
				t.Fatalf("Reaches(%d, %d) = %v, want %v", x, y, got, want)
			}
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
