package elaborate

import (
	"fmt"
	"runtime/debug"
	"sync"
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
