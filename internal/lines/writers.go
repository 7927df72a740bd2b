package lines

import "sync"

// Writers hands out the line writers of one step, all emitting to the
// step's log, and flushes them together when the step ends: a process's
// stdout and stderr each take one, so that a partial line of one is never
// glued to a line of the other. The zero value is ready to use.
type Writers struct {
	mu sync.Mutex
	ws []*Writer
}

// New returns a new Writer that emits lines to emit, telling it of a line
// that comes in pieces whether it goes on in the next (continues).
func (s *Writers) New(emit func(line string, continues bool)) *Writer {
	w := NewPieceWriter(func(line string, _, continues bool) { emit(line, continues) })
	s.mu.Lock()
	s.ws = append(s.ws, w)
	s.mu.Unlock()
	return w
}

// Flush emits the unended last line of each writer handed out.
func (s *Writers) Flush() {
	s.mu.Lock()
	ws := s.ws
	s.mu.Unlock()
	for _, w := range ws {
		w.Flush()
	}
}
