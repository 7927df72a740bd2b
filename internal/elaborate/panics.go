package elaborate

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"

	"golang.org/x/sync/errgroup"
)

// workerPanics carries a panic of a worker goroutine to the goroutine that
// waits for the workers, where the command's recovery reports it as the bug
// it is (exit 1). Unrecovered in the worker, it would end the process with
// Go's exit code 2, which says the input is wrong.
type workerPanics struct {
	mu    sync.Mutex
	value any
	stack []byte
}

// guard runs f, keeping the first panic of any worker.
func (w *workerPanics) guard(f func() error) func() error {
	return func() error {
		defer func() {
			if p := recover(); p != nil {
				w.mu.Lock()
				if w.value == nil {
					w.value, w.stack = p, debug.Stack()
				}
				w.mu.Unlock()
			}
		}()
		return f()
	}
}

// rethrow panics again, in the caller's goroutine, with the worker's stack.
func (w *workerPanics) rethrow() {
	if w.value != nil {
		panic(fmt.Sprintf("%v\n[in a worker goroutine]\n%s", w.value, w.stack))
	}
}

// forEach calls f for every index below n on a worker per processor, each
// taking every workers-th index, and returns when all are done; a panic of
// f is raised again in the caller's goroutine. One goroutine per index
// would grow a fresh stack for each call (the parser, the decoder and the
// encoder recurse): at 10,000 components that cost more than the work.
func forEach(n int, f func(i int)) {
	var g errgroup.Group
	var panics workerPanics
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		g.Go(panics.guard(func() error {
			for i := w; i < n; i += workers {
				f(i)
			}
			return nil
		}))
	}
	_ = g.Wait()
	panics.rethrow()
}
