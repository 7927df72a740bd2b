package manifest

import (
	"strings"
	"unicode/utf8"
)

// suggest returns the known name closest to s when it is close enough to be a
// likely typo, else "".
//
// It is asked for every unknown name of an input against every name the
// input knows (a depends of 1,000 components against 1,000 names): each
// candidate is first bounded from below by how many characters the two
// names do not share, which is cheap, and the distance of those left is
// computed only as far as it can still beat the best so far. A 362 KB
// stack of unknown long names took two minutes with the whole distance of
// every pair.
func suggest(s string, known []string) string {
	ls := []rune(strings.ToLower(s))
	limit := max(1, len(s)/3)
	var hs histogram
	hs.add(ls, 1)
	var rows distanceRows
	best, bestDist := "", limit+1
	for _, k := range known {
		if d := utf8.RuneCountInString(k) - len(ls); d >= bestDist || -d >= bestDist {
			continue // at least |d| edits away
		}
		lk := []rune(strings.ToLower(k))
		if hs.lowerBound(lk) >= bestDist {
			continue
		}
		if dist := rows.distance(ls, lk, bestDist-1); dist < bestDist {
			best, bestDist = k, dist
		}
	}
	return best
}

// histogram counts the ASCII letters of a name; other runes go into one
// bucket, which keeps the bound a bound.
type histogram [129]int

func (h *histogram) add(rs []rune, by int) {
	for _, r := range rs {
		if r < 128 {
			h[r] += by
		} else {
			h[128] += by
		}
	}
}

// lowerBound is at most the edit distance between the histogram's name and
// b: an edit changes the counts of at most two characters by one each (a
// swap of neighbours none), so half the counts that differ is a bound.
func (h *histogram) lowerBound(b []rune) int {
	diff := *h
	diff.add(b, -1)
	total := 0
	for _, c := range diff {
		if c < 0 {
			c = -c
		}
		total += c
	}
	return (total + 1) / 2
}

// distanceRows are the three rows the distance keeps, reused.
type distanceRows struct{ prev2, prev, cur []int }

// distance is the optimal-string-alignment distance of a and b
// (insertions, deletions, substitutions and swaps of neighbours each count
// one) when it is at most bound; bound+1 when it is more, known as soon as
// a whole row is past the bound.
func (r *distanceRows) distance(a, b []rune, bound int) int {
	n := len(b) + 1
	if cap(r.cur) < n {
		r.prev2, r.prev, r.cur = make([]int, n), make([]int, n), make([]int, n)
	}
	prev2, prev, cur := r.prev2[:n], r.prev[:n], r.cur[:n]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j < n; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin > bound {
			return bound + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return min(prev[n-1], bound+1)
}
