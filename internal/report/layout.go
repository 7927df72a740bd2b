package report

import (
	"math"
	"sort"
)

// Sizes of the graph's layout, in pixels.
const (
	boxW = 190
	boxH = 46
	gapX = 110
	gapY = 18
	// minColumn is the fewest boxes a column holds before a wide layer
	// is folded into several columns.
	minColumn = 12
	// sweeps is how many times the boxes of each layer are reordered by
	// the positions of their neighbours, to untangle the edges.
	sweeps = 4
)

// layOut places the boxes of a DAG of n nodes left to right: each node in
// the layer after its longest path from a node without predecessors; in
// each layer, nodes ordered by the mean position of their neighbours
// (barycenter sweeps) to keep edges short and untangled; a layer wider
// than about 1.5 √n boxes folded into several columns, so that a stack of
// a thousand independent components is a block, not a line. It returns
// the top-left corner of every box and the layout's size.
func layOut(n int, edges [][2]int) (xs, ys []int, l Layout) {
	l = Layout{BoxW: boxW, BoxH: boxH}
	if n == 0 {
		return nil, nil, l
	}
	succ := make([][]int, n)
	pred := make([][]int, n)
	for _, e := range edges {
		succ[e[0]] = append(succ[e[0]], e[1])
		pred[e[1]] = append(pred[e[1]], e[0])
	}
	layer := layers(n, succ, pred)
	depth := 0
	for _, d := range layer {
		depth = max(depth, d+1)
	}
	rows := make([][]int, depth)
	for v := 0; v < n; v++ { // nodes come in plan order: the first order
		rows[layer[v]] = append(rows[layer[v]], v)
	}
	pos := make([]float64, n)
	place := func(row []int) {
		for i, v := range row {
			pos[v] = (float64(i) + 0.5) / float64(len(row))
		}
	}
	for _, row := range rows {
		place(row)
	}
	for s := 0; s < sweeps; s++ {
		for d := 1; d < depth; d++ {
			reorder(rows[d], pred, pos)
			place(rows[d])
		}
		for d := depth - 2; d >= 0; d-- {
			reorder(rows[d], succ, pos)
			place(rows[d])
		}
	}
	// Columns: each layer, folded when wide.
	height := max(minColumn, int(math.Ceil(1.5*math.Sqrt(float64(n)))))
	var columns [][]int
	for _, row := range rows {
		for len(row) > height {
			columns = append(columns, row[:height])
			row = row[height:]
		}
		columns = append(columns, row)
	}
	tallest := 0
	for _, c := range columns {
		tallest = max(tallest, len(c))
	}
	xs, ys = make([]int, n), make([]int, n)
	for ci, c := range columns {
		top := (tallest - len(c)) * (boxH + gapY) / 2
		for i, v := range c {
			xs[v] = gapX/2 + ci*(boxW+gapX)
			ys[v] = gapY/2 + top + i*(boxH+gapY)
		}
	}
	l.Width = len(columns) * (boxW + gapX)
	l.Height = tallest * (boxH + gapY)
	return xs, ys, l
}

// layers puts each node one layer after the furthest of its predecessors
// (Kahn's order; nodes on a cycle, which a saved plan should not have,
// go in layer 0).
func layers(n int, succ, pred [][]int) []int {
	layer := make([]int, n)
	indeg := make([]int, n)
	var queue []int
	for v := 0; v < n; v++ {
		indeg[v] = len(pred[v])
		if indeg[v] == 0 {
			queue = append(queue, v)
		}
	}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range succ[v] {
			layer[w] = max(layer[w], layer[v]+1)
			if indeg[w]--; indeg[w] == 0 {
				queue = append(queue, w)
			}
		}
	}
	return layer
}

// reorder sorts a layer by the mean position of each node's neighbours
// (those in other layers, which pos places); a node without any keeps its
// place.
func reorder(row []int, neighbours [][]int, pos []float64) {
	key := make(map[int]float64, len(row))
	for _, v := range row {
		if len(neighbours[v]) == 0 {
			key[v] = pos[v]
			continue
		}
		sum := 0.0
		for _, w := range neighbours[v] {
			sum += pos[w]
		}
		key[v] = sum / float64(len(neighbours[v]))
	}
	sort.SliceStable(row, func(i, j int) bool { return key[row[i]] < key[row[j]] })
}
