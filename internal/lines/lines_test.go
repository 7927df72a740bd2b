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
		{"crlf across writes is one end", []string{"Outputs:\r", "\na = 1\r", "\n"}, []string{"Outputs:", "a = 1"}},
		{"lone cr at the end of writes", []string{"10%\r", "50%\r"}, []string{"10%", "50%"}},
		{"crlf across writes then an empty line", []string{"a\r", "\n\nb\n"}, []string{"a", "", "b"}},
		{"cr then an empty write", []string{"a\r", "", "\nb\n"}, []string{"a", "b"}},
		{"empty lines kept", []string{"a\n\nb\n"}, []string{"a", "", "b"}},
		{"unended last line on flush", []string{"a\nrest"}, []string{"a", "rest"}},
		{"too long a line comes in pieces", []string{long}, []string{long[:MaxLine], "x"}},
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
// TestWriterShowsProgressAtOnce: a line ended by a "\r" at the end of a
// write (a progress bar that redraws, then waits) is emitted by that write,
// not when the next one comes.
func TestWriterShowsProgressAtOnce(t *testing.T) {
	var got []string
	w := NewWriter(func(l string) { got = append(got, l) })
	for _, s := range []string{"10%\r", "50%\r", "\n"} {
		before := len(got)
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
		if s != "\n" && len(got) != before+1 {
			t.Fatalf("after writing %q: lines %q, want the line emitted", s, got)
		}
	}
	w.Flush()
	if diff := cmp.Diff([]string{"10%", "50%"}, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func TestWritersKeepStreamsApart(t *testing.T) {
	var got []string
	emit := func(l string, _, _ bool) { got = append(got, l) }
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

// TestPieceWriterHolds: a line longer than MaxLine comes in pieces of
// MaxLine, each told whether it continues one before and goes on in the next,
// whether its end came in the same write or later; while Hold says so it
// comes whole, up to its bound, then in pieces again.
func TestPieceWriterHolds(t *testing.T) {
	type piece struct {
		Len                  int
		Continued, Continues bool
	}
	const n = 2*MaxLine + 500
	for _, tt := range []struct {
		name  string
		chunk int // bytes per write
		hold  bool
		max   int
		want  []piece
	}{
		{"pieces, in small writes", 1000, false, 0, []piece{{MaxLine, false, true}, {MaxLine, true, true}, {500, true, false}, {3, false, false}}},
		{"pieces, in one write", 1 << 30, false, 0, []piece{{MaxLine, false, true}, {MaxLine, true, true}, {500, true, false}, {3, false, false}}},
		{"held", 1000, true, 4 * MaxLine, []piece{{n, false, false}, {3, false, false}}},
		{"held, in one write", 1 << 30, true, 4 * MaxLine, []piece{{n, false, false}, {3, false, false}}},
		// Past the bound: pieces.
		{"held up to its bound", 1000, true, MaxLine + 5000, []piece{{MaxLine, false, true}, {MaxLine, true, true}, {500, true, false}, {3, false, false}}},
		// An end right after whole pieces: the last one waits for it, so
		// that no piece is empty.
		{"a multiple of MaxLine", MaxLine, false, 0, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			line := strings.Repeat("x", n) + "\nend\n"
			if tt.want == nil {
				line = strings.Repeat("x", 2*MaxLine) + "\nend\n"
				tt.want = []piece{{MaxLine, false, true}, {MaxLine, true, false}, {3, false, false}}
			}
			var got []piece
			w := NewPieceWriter(func(l string, continued, continues bool) { got = append(got, piece{len(l), continued, continues}) })
			if tt.hold {
				w.Hold(tt.max, func() bool { return true })
			}
			for text := line; len(text) > 0; {
				k := min(len(text), tt.chunk)
				if _, err := w.Write([]byte(text[:k])); err != nil {
					t.Fatal(err)
				}
				text = text[k:]
			}
			w.Flush()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("pieces (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzWriterSplitsAsWhole: however output is cut into writes, the lines
// (pieces joined) are those of the whole output split at "\n", "\r\n" and a
// lone "\r".
func FuzzWriterSplitsAsWhole(f *testing.F) {
	f.Add("a\r\nb\rc\n\nd", []byte{1, 2})
	f.Add("10%\r50%\r\n", []byte{4, 1})
	f.Add(strings.Repeat("x", MaxLine+3)+"\r\ny", []byte{255, 255, 1})
	f.Fuzz(func(t *testing.T, out string, cuts []byte) {
		var want []string
		rest := out
		for rest != "" {
			i := strings.IndexAny(rest, "\r\n")
			if i < 0 {
				want = append(want, rest)
				break
			}
			want = append(want, rest[:i])
			if strings.HasPrefix(rest[i:], "\r\n") {
				i++
			}
			rest = rest[i+1:]
		}
		var got []string
		joining := false
		w := NewPieceWriter(func(piece string, continued, continues bool) {
			if continued != joining {
				t.Fatalf("piece %q: continued %v after a piece that said continues %v", piece, continued, joining)
			}
			if continued {
				got[len(got)-1] += piece
			} else {
				got = append(got, piece)
			}
			joining = continues
		})
		for _, c := range cuts {
			n := min(len(out), int(c)*int(c))
			if _, err := w.Write([]byte(out[:n])); err != nil {
				t.Fatal(err)
			}
			out = out[n:]
		}
		if _, err := w.Write([]byte(out)); err != nil {
			t.Fatal(err)
		}
		w.Flush()
		if joining {
			t.Fatal("the last piece said the line continues")
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("lines (-whole +written in cuts):\n%s", diff)
		}
	})
}
