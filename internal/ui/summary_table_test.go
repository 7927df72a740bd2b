package ui

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
	"time"

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

// BenchmarkSummary10k writes the summary of 10,000 unchanged components,
// and its table alone by tabwriter and by hand.
func BenchmarkSummary10k(b *testing.B) {
	comps := make([]ComponentRun, 10000)
	for i := range comps {
		comps[i] = ComponentRun{Name: "n" + string(rune('a'+i%26)) + "0000" + string(rune('0'+i%10)), Verb: "deploy", Status: Unchanged}
	}
	b.Run("summary", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			WriteSummary(io.Discard, comps, time.Second)
		}
	})
	// The table as tabwriter alone wrote it, for comparison.
	rows := make([][summaryColumns]string, len(comps))
	for i, c := range comps {
		rows[i] = [summaryColumns]string{c.Name, c.Verb, c.ShownStatus(), "-", ""}
	}
	b.Run("tabwriter", func(b *testing.B) {
		for b.Loop() {
			writeTabwriter(io.Discard, rows)
		}
	})
	b.Run("by-hand", func(b *testing.B) {
		for b.Loop() {
			writeTable(io.Discard, rows)
		}
	})
}
