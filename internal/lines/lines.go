// Package lines splits the output of processes into lines.
package lines

import (
	"bytes"
	"sync"
)

// MaxLine bounds a line held back waiting for its end: a longer one is
// handed over as it is.
const MaxLine = 64 << 10

// Writer hands each line written to it to emit, without its end: "\n",
// "\r\n", or a lone "\r" (progress bars redraw a line with it). Writes may
// come from several goroutines (a process's stdout and stderr copiers);
// lines are emitted one at a time.
type Writer struct {
	mu   sync.Mutex
	buf  []byte
	emit func(string)
}

// NewWriter returns a Writer that emits lines to emit.
func NewWriter(emit func(line string)) *Writer { return &Writer{emit: emit} }

func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexAny(w.buf, "\n\r")
		if i < 0 {
			if len(w.buf) > MaxLine {
				w.emit(string(w.buf))
				w.buf = w.buf[:0]
			}
			return len(p), nil
		}
		line := string(w.buf[:i])
		skip := 1
		if w.buf[i] == '\r' && i+1 < len(w.buf) && w.buf[i+1] == '\n' {
			skip = 2
		}
		w.buf = w.buf[i+skip:]
		w.emit(line)
	}
}

// Flush emits what is left of an unended last line.
func (w *Writer) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit(string(w.buf))
		w.buf = w.buf[:0]
	}
}
