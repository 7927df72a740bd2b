package elaborate

import (
	"strings"
	"testing"

	"golang.org/x/sync/errgroup"
)

// TestWorkerPanicReachesTheCaller: a panic in a worker is not lost and does
// not end the process from the worker: the caller panics with it and the
// worker's stack.
func TestWorkerPanicReachesTheCaller(t *testing.T) {
	var g errgroup.Group
	var panics workerPanics
	for i := 0; i < 4; i++ {
		g.Go(panics.guard(func() error {
			if i == 2 {
				var m map[string]int
				m["x"] = i // a nil map: a real runtime panic
			}
			return nil
		}))
	}
	_ = g.Wait()
	defer func() {
		p := recover()
		if p == nil || !strings.Contains(p.(string), "assignment to entry in nil map") || !strings.Contains(p.(string), "in a worker goroutine") {
			t.Errorf("recovered %v", p)
		}
	}()
	panics.rethrow()
	t.Error("rethrow did not panic")
}
