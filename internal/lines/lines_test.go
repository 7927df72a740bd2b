package lines

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWriterSplitsLines(t *testing.T) {
	long := strings.Repeat("x", MaxLine+1)
	tests := []struct {
		name   string
		writes []string
		want   []string
	}{
		{"newlines", []string{"a\nb\n"}, []string{"a", "b"}},
		{"split across writes", []string{"he", "llo\nwor", "ld\n"}, []string{"hello", "world"}},
		{"crlf is one end", []string{"a\r\nb\r\n"}, []string{"a", "b"}},
		{"lone cr ends a line", []string{"10%\r50%\r100%\n"}, []string{"10%", "50%", "100%"}},
		{"empty lines kept", []string{"a\n\nb\n"}, []string{"a", "", "b"}},
		{"unended last line on flush", []string{"a\nrest"}, []string{"a", "rest"}},
		{"too long a line goes as it is", []string{long}, []string{long}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			w := NewWriter(func(l string) { got = append(got, l) })
			for _, s := range tt.writes {
				if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			w.Flush()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWritersKeepStreamsApart: two writers of one step (a process's
// stdout and stderr) never glue their partial lines together, and Flush
// emits what each has left.
func TestWritersKeepStreamsApart(t *testing.T) {
	var got []string
	emit := func(l string) { got = append(got, l) }
	var s Writers
	out, errs := s.New(emit), s.New(emit)
	for _, w := range []struct {
		to *Writer
		s  string
	}{{out, "progress "}, {errs, "warning\nhalf"}, {out, "50%\nrest"}} {
		if _, err := w.to.Write([]byte(w.s)); err != nil {
			t.Fatal(err)
		}
	}
	s.Flush()
	want := []string{"warning", "progress 50%", "rest", "half"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

// TestPieceWriterHolds: a line longer than MaxLine comes in pieces, the
// later ones marked as continuing it; while Hold says so it comes whole, up
// to its bound, then in pieces again.
func TestPieceWriterHolds(t *testing.T) {
	type piece struct {
		Len       int
		Continued bool
	}
	write := func(w *Writer, text string) {
		for len(text) > 0 {
			n := min(len(text), 1000)
			w.Write([]byte(text[:n]))
			text = text[n:]
		}
		w.Flush()
	}
	long := strings.Repeat("x", 2*MaxLine+500) + "\nend\n"
	for _, tt := range []struct {
		name string
		hold bool
		max  int
		want []piece
	}{
		// 131,572 bytes in writes of 1,000: handed over past MaxLine.
		{"pieces", false, 0, []piece{{66000, false}, {65572, true}, {3, false}}},
		{"held", true, 4 * MaxLine, []piece{{131572, false}, {3, false}}},
		{"held up to its bound", true, MaxLine + 5000, []piece{{71000, false}, {60572, true}, {3, false}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []piece
			w := NewPieceWriter(func(l string, continued bool) { got = append(got, piece{len(l), continued}) })
			if tt.hold {
				w.Hold(tt.max, func() bool { return true })
			}
			write(w, long)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pieces (-want +got):\n%s", diff)
			}
		})
	}
}
