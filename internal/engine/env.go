package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/gantry-dev/gantry/internal/plan"
)

// stepEnv is the plan.Env of one running step.
type stepEnv struct {
	r  *run
	n  *plan.Node
	mu sync.Mutex
	lw *lineWriter
}

func (e *stepEnv) Output() io.Writer {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lw == nil {
		e.lw = &lineWriter{emit: func(line string) { e.r.opts.Observer.Log(e.n, line) }}
	}
	return e.lw
}

func (e *stepEnv) Logf(format string, args ...any) {
	e.flush()
	e.r.opts.Observer.Log(e.n, fmt.Sprintf(format, args...))
}

// flush emits a last line without newline.
func (e *stepEnv) flush() {
	e.mu.Lock()
	lw := e.lw
	e.mu.Unlock()
	if lw != nil {
		lw.Flush()
	}
}

func (e *stepEnv) Interactive() bool { return e.r.opts.Interactive }

func (e *stepEnv) Note(n plan.Note) { e.r.opts.Observer.Note(e.n, n) }
func (e *stepEnv) Yes() bool        { return e.r.opts.Yes }
func (e *stepEnv) RunID() string    { return e.r.opts.RunID }

func (e *stepEnv) Input() (string, error) {
	if e.r.opts.Input == nil || !e.r.opts.Interactive {
		return "", errors.New("no terminal to read an answer from")
	}
	return e.r.opts.Input()
}

// Pause holds back new steps while fn runs; prompts of concurrent steps take
// turns.
func (e *stepEnv) Pause(fn func() error) error {
	r := e.r
	r.mu.Lock()
	r.pauseCount++
	r.mu.Unlock()
	r.pauseMu.Lock()
	// A live display steps aside while someone is asked something.
	pa, _ := r.opts.Observer.(Pauser)
	if pa != nil {
		pa.Paused(true)
	}
	err := fn()
	if pa != nil {
		pa.Paused(false)
	}
	r.pauseMu.Unlock()
	r.mu.Lock()
	r.pauseCount--
	r.mu.Unlock()
	select {
	case r.resume <- struct{}{}:
	default:
	}
	return err
}

// lineWriter splits a stream into lines; carriage returns (progress bars) end
// a line too.
type lineWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	emit func(string)
}

// maxLine bounds a line held back waiting for its newline.
const maxLine = 64 << 10

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		b := w.buf.Bytes()
		i := bytes.IndexAny(b, "\n\r")
		if i < 0 {
			if len(b) > maxLine {
				w.emit(string(b))
				w.buf.Reset()
			}
			return len(p), nil
		}
		line := string(b[:i])
		skip := 1
		if b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n' {
			skip = 2
		}
		w.buf.Next(i + skip)
		w.emit(line)
	}
}

// Flush emits what is left without a newline.
func (w *lineWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf.Len() > 0 {
		w.emit(w.buf.String())
		w.buf.Reset()
	}
}
