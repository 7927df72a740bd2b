package report

import (
	"fmt"
	"testing"
)

func TestLayOut(t *testing.T) {
	chain := func(n int) (edges [][2]int) {
		for i := 1; i < n; i++ {
			edges = append(edges, [2]int{i - 1, i})
		}
		return edges
	}
	star := func(n int) (edges [][2]int) {
		for i := 1; i < n; i++ {
			edges = append(edges, [2]int{0, i})
		}
		return edges
	}
	tests := []struct {
		name      string
		n         int
		edges     [][2]int
		columns   int
		maxPerCol int
	}{
		{"nothing", 0, nil, 0, 0},
		{"one", 1, nil, 1, 1},
		{"a chain is a row", 5, chain(5), 5, 1},
		{"a fan-out is two columns", 6, star(6), 2, 5},
		{"a thousand independent components fold into a block", 1000, nil, 21, 48},
		{"a fan-out of 200 folds its second layer", 201, star(201), 11, 22},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			xs, ys, l := layOut(tt.n, tt.edges)
			cols := map[int]int{}
			seen := map[[2]int]bool{}
			for i := 0; i < tt.n; i++ {
				cols[xs[i]]++
				p := [2]int{xs[i], ys[i]}
				if seen[p] {
					t.Fatalf("two boxes at %v", p)
				}
				seen[p] = true
				if xs[i] < 0 || ys[i] < 0 || xs[i]+l.BoxW > l.Width || ys[i]+l.BoxH > l.Height {
					t.Errorf("box %d at %d,%d outside %dx%d", i, xs[i], ys[i], l.Width, l.Height)
				}
			}
			most := 0
			for _, c := range cols {
				most = max(most, c)
			}
			if len(cols) != tt.columns || most != tt.maxPerCol {
				t.Errorf("%d columns, at most %d boxes in one; want %d and %d", len(cols), most, tt.columns, tt.maxPerCol)
			}
			for _, e := range tt.edges {
				if xs[e[0]] >= xs[e[1]] {
					t.Errorf("edge %v goes from x %d to x %d: not left to right", e, xs[e[0]], xs[e[1]])
				}
			}
		})
	}
}

// TestLayOutUntangles: barycenter sweeps put the children of each parent
// together, so that two parents' edges do not cross.
func TestLayOutUntangles(t *testing.T) {
	// Parents 0 and 1; children given in an interleaved order.
	edges := [][2]int{{0, 2}, {1, 3}, {0, 4}, {1, 5}}
	_, ys, _ := layOut(6, edges)
	above := func(a, b int) bool { return ys[a] < ys[b] }
	for _, c0 := range []int{2, 4} {
		for _, c1 := range []int{3, 5} {
			if above(0, 1) != above(c0, c1) {
				t.Errorf("children %d (of 0) and %d (of 1) are in the other order than their parents: %v", c0, c1, fmt.Sprint(ys))
			}
		}
	}
}
