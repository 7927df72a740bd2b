// Package lines splits the output of processes into lines.
package lines

import (
	"bytes"
	"sync"
)

// MaxLine bounds a line held back waiting for its end: a longer one is
// handed over in pieces of at most MaxLine bytes (unless a Writer is told
// to Hold it), as it comes.
const MaxLine = 64 << 10

// Writer hands each line written to it to emit, without its end: "\n",
// "\r\n", or a lone "\r" (progress bars redraw a line with it). Writes may
// come from several goroutines (a process's stdout and stderr copiers);
// lines are emitted one at a time.
type Writer struct {
	mu   sync.Mutex
	buf  []byte
	seen int // bytes of buf known to hold no line end: a held line is not scanned again
	emit func(piece string, continued, continues bool)
	// cont says the last piece emitted was a part of a line not ended yet.
	cont bool
	// afterCR says the last write ended with a "\r", which ended its line:
	// a "\n" that begins the next write is the rest of a "\r\n" that came
	// in two writes, not an empty line.
	afterCR bool
	// hold, while it says so, keeps lines longer than MaxLine whole, up to
	// maxHeld bytes.
	hold    func() bool
	maxHeld int
}

// NewWriter returns a Writer that emits lines to emit; a line longer than
// MaxLine comes in pieces, each emitted as a line.
func NewWriter(emit func(line string)) *Writer {
	return &Writer{emit: func(line string, _, _ bool) { emit(line) }}
}

// NewPieceWriter returns a Writer that emits lines to emit, which is told of
// a line longer than MaxLine that comes in pieces whether a piece continues
// one it was given before (continued) and whether the line goes on in the
// next (continues).
func NewPieceWriter(emit func(piece string, continued, continues bool)) *Writer {
	return &Writer{emit: emit}
}

// Hold keeps lines longer than MaxLine whole, up to max bytes, while hold
// returns true (it is asked with the Writer's lock held, and must not write
// to it): a line a consumer must read whole (an output's value) is not cut.
func (w *Writer) Hold(max int, hold func() bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.hold, w.maxHeld = hold, max
}

func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	if w.afterCR && len(p) > 0 {
		w.afterCR = false
		if p[0] == '\n' {
			p = p[1:]
		}
	}
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexAny(w.buf[w.seen:], "\n\r")
		if i < 0 {
			w.seen = len(w.buf)
			if len(w.buf) > MaxLine && !w.holding(len(w.buf)) {
				// Whole pieces go; the rest waits for its end or more.
				k := len(w.buf) / MaxLine * MaxLine
				if k == len(w.buf) {
					k -= MaxLine
				}
				w.pieces(string(w.buf[:k]), true)
				w.buf = append(w.buf[:0], w.buf[k:]...)
				w.seen = len(w.buf)
			}
			return n, nil
		}
		i += w.seen
		// A "\r" at the end of what was written ends its line now (a
		// progress bar that redraws and waits is shown as it is), and a
		// "\n" that comes next is the rest of its "\r\n".
		w.afterCR = w.buf[i] == '\r' && i+1 == len(w.buf)
		w.seen = 0
		line := string(w.buf[:i])
		held := len(line) > MaxLine && w.holding(len(line))
		skip := 1
		if w.buf[i] == '\r' && i+1 < len(w.buf) && w.buf[i+1] == '\n' {
			skip = 2
		}
		w.buf = w.buf[i+skip:]
		if held {
			w.emit(line, w.cont, false)
			w.cont = false
		} else {
			w.pieces(line, false)
		}
	}
}

// pieces emits text in pieces of at most MaxLine bytes; continues says the
// line goes on after it (w.mu held).
func (w *Writer) pieces(text string, continues bool) {
	for len(text) > MaxLine {
		w.emit(text[:MaxLine], w.cont, true)
		text, w.cont = text[MaxLine:], true
	}
	w.emit(text, w.cont, continues)
	w.cont = continues
}

// holding reports whether a line of n bytes so far is to be kept whole
// (w.mu held).
func (w *Writer) holding(n int) bool {
	return w.hold != nil && !w.cont && n <= w.maxHeld && w.hold()
}

// Flush emits what is left of an unended last line.
func (w *Writer) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.pieces(string(w.buf), false)
		w.buf = w.buf[:0]
	}
	w.seen, w.cont, w.afterCR = 0, false, false
}
