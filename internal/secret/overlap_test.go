package secret

import (
	"math/rand"
	"testing"
)

// overlapLoop is overlap as the masker computed it before: every length,
// longest first.
func overlapLoop(text, v string, atEnd bool) int {
	for k := min(len(v)-1, len(text)); k > 0; k-- {
		if atEnd && text[len(text)-k:] == v[:k] || !atEnd && text[:k] == v[len(v)-k:] {
			return k
		}
	}
	return 0
}

// TestOverlapLikeTheLoop: overlap finds what trying every length finds, on
// texts and secrets of few letters (many overlaps), of every relative size.
func TestOverlapLikeTheLoop(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	word := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = "ab"[r.Intn(2)]
		}
		return string(b)
	}
	for i := 0; i < 50_000; i++ {
		text, v := word(r.Intn(12)), word(r.Intn(12))
		for _, atEnd := range []bool{true, false} {
			if got, want := overlap(text, v, atEnd), overlapLoop(text, v, atEnd); got != want {
				t.Fatalf("overlap(%q, %q, %v) = %d, want %d", text, v, atEnd, got, want)
			}
		}
	}
}

func FuzzOverlap(f *testing.F) {
	f.Add("abcab", "abcd", true)
	f.Add("cdxx", "abcd", false)
	f.Fuzz(func(t *testing.T, text, v string, atEnd bool) {
		if got, want := overlap(text, v, atEnd), overlapLoop(text, v, atEnd); got != want {
			t.Fatalf("overlap(%q, %q, %v) = %d, want %d", text, v, atEnd, got, want)
		}
	})
}
