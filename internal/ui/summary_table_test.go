package ui

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWriteTableLikeTabwriter: the summary's table is aligned exactly as
// text/tabwriter aligns it, for plain cells and for cells only tabwriter
// measures (UTF-8, control characters).
func TestWriteTableLikeTabwriter(t *testing.T) {
	words := []string{"", "-", "db", "deploy", "unchanged", "failed (optional)", "1.2s", "a much longer reason than the rest", "héllo", "x\x01y", "tab\there", "\xff"}
	r := rand.New(rand.NewPCG(3, 4))
	for round := range 500 {
		rows := make([][summaryColumns]string, 1+r.IntN(6))
		plain := round%2 == 0
		for i := range rows {
			for j := range rows[i] {
				w := words[r.IntN(len(words))]
				if plain {
					w = words[r.IntN(8)]
				}
				rows[i][j] = w
			}
		}
		var want, got bytes.Buffer
		writeTabwriter(&want, rows)
		writeTable(&got, rows)
		if diff := cmp.Diff(want.String(), got.String()); diff != "" {
			t.Fatalf("rows %q (-tabwriter +writeTable):\n%s", rows, diff)
		}
	}
}
