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
// that comes in pieces whether a piece goes on from the last one (continued)
// and in the next (continues), as NewPieceWriter does.
func (s *Writers) New(emit func(piece string, continued, continues bool)) *Writer {
	w := NewPieceWriter(emit)
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
