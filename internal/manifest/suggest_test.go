package manifest

import (
	"math"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"
)

// fullSuggest is suggest as it was: the whole distance of every candidate
// of a close length. The bounded one must choose the same.
func fullSuggest(s string, known []string) string {
	best, bestDist := "", math.MaxInt
	ls := strings.ToLower(s)
	n := utf8.RuneCountInString(ls)
	limit := max(1, len(s)/3)
	for _, k := range known {
		lk := strings.ToLower(k)
		if d := utf8.RuneCountInString(lk) - n; d > limit || -d > limit {
			continue
		}
		if dist := fullDistance([]rune(ls), []rune(lk)); dist < bestDist {
			best, bestDist = k, dist
		}
	}
	if bestDist <= limit {
		return best
	}
	return ""
}

func fullDistance(ra, rb []rune) int {
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

func TestSuggestCases(t *testing.T) {
	known := []string{"depends", "source", "parameters", "outputs", "lifecycle", "db", "web.db", "Ünïcode"}
	for s, want := range map[string]string{
		"depnds":     "depends",
		"dependss":   "depends",
		"soruce":     "source",
		"PARAMETERS": "parameters",
		"xyz":        "",
		"dc":         "db",
		"web.dc":     "web.db",
		"ünicode":    "Ünïcode",
		"":           "",
	} {
		if got := suggest(s, known); got != want {
			t.Errorf("suggest(%q) = %q, want %q", s, got, want)
		}
	}
}

// TestSuggestAsTheWholeDistance: the bounds change how fast a suggestion is
// found, never which: random names, many of them close.
func TestSuggestAsTheWholeDistance(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	word := func() string {
		const letters = "abcdeé._-0"
		n := 1 + r.Intn(14)
		var b strings.Builder
		for range n {
			b.WriteRune([]rune(letters)[r.Intn(10)])
		}
		return b.String()
	}
	for range 300 {
		known := make([]string, 1+r.Intn(30))
		for i := range known {
			known[i] = word()
		}
		s := word()
		if r.Intn(2) == 0 {
			s = known[r.Intn(len(known))] + string([]rune("abc")[r.Intn(3)])
		}
		if got, want := suggest(s, known), fullSuggest(s, known); got != want {
			t.Fatalf("suggest(%q, %q) = %q, the whole distance gives %q", s, known, got, want)
		}
	}
}

// FuzzSuggest: the bounded suggestion is the whole distance's.
func FuzzSuggest(f *testing.F) {
	f.Add("depnds", "depends,source,db")
	f.Add("ab", "ba,abc,a")
	f.Fuzz(func(t *testing.T, s, list string) {
		if len(s) > 64 || len(list) > 512 {
			t.Skip("long names only slow the reference down")
		}
		known := strings.Split(list, ",")
		if got, want := suggest(s, known), fullSuggest(s, known); got != want {
			t.Fatalf("suggest(%q, %q) = %q, the whole distance gives %q", s, known, got, want)
		}
	})
}
