// Package lines splits the output of processes into lines.
package lines

import (
	"bytes"
	"sync"
)

// MaxLine bounds a line held back waiting for its end: a longer one is
// handed over in pieces (unless a Writer is told to Hold it).
const MaxLine = 64 << 10

// Writer hands each line written to it to emit, without its end: "\n",
// "\r\n", or a lone "\r" (progress bars redraw a line with it). Writes may
// come from several goroutines (a process's stdout and stderr copiers);
// lines are emitted one at a time.
type Writer struct {
	mu   sync.Mutex
	buf  []byte
	seen int // bytes of buf known to hold no line end: a held line is not scanned again
	emit func(line string, continued bool)
	// cont says the last piece emitted was a part of a line not ended yet.
	cont bool
	// hold, while it says so, keeps lines longer than MaxLine whole, up to
	// maxHeld bytes.
	hold    func() bool
	maxHeld int
}

// NewWriter returns a Writer that emits lines to emit; a line longer than
// MaxLine comes in pieces, each emitted as a line.
func NewWriter(emit func(line string)) *Writer {
	return &Writer{emit: func(line string, _ bool) { emit(line) }}
}

// NewPieceWriter returns a Writer that emits lines to emit, which is told
// whether what it is given continues a line longer than MaxLine whose
// beginning it was given before.
func NewPieceWriter(emit func(line string, continued bool)) *Writer {
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
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexAny(w.buf[w.seen:], "\n\r")
		if i < 0 {
			w.seen = len(w.buf)
			if len(w.buf) > MaxLine && !w.holding() {
				w.emit(string(w.buf), w.cont)
				w.buf, w.seen, w.cont = w.buf[:0], 0, true
			}
			return len(p), nil
		}
		i += w.seen
		w.seen = 0
		line := string(w.buf[:i])
		skip := 1
		if w.buf[i] == '\r' && i+1 < len(w.buf) && w.buf[i+1] == '\n' {
			skip = 2
		}
		w.buf = w.buf[i+skip:]
		w.emit(line, w.cont)
		w.cont = false
	}
}

// holding reports whether the unended line in buf is to be kept whole (w.mu
// held).
func (w *Writer) holding() bool {
	return w.hold != nil && !w.cont && len(w.buf) <= w.maxHeld && w.hold()
}

// Flush emits what is left of an unended last line.
func (w *Writer) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit(string(w.buf), w.cont)
		w.buf = w.buf[:0]
	}
	w.seen, w.cont = 0, false
}
