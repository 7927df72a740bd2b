package engine

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/gantry-dev/gantry/internal/lines"
	"github.com/gantry-dev/gantry/internal/plan"
)

// stepEnv is the plan.Env of one running step.
type stepEnv struct {
	r  *run
	n  *plan.Node
	mu sync.Mutex
	lw *lines.Writer
}

func (e *stepEnv) Output() io.Writer {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.lw == nil {
		e.lw = lines.NewWriter(func(line string) { e.r.opts.Observer.Log(e.n, line) })
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
