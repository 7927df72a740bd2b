package engine

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
)

// panicking is an observer that panics at the 50th step's end, out of the
// executor's loop.
type panicking struct {
	recorder
	finished int
}

func (p *panicking) StepFinished(*plan.Node, plan.Result, time.Time, time.Time) {
	if p.finished++; p.finished == 50 {
		panic("observer")
	}
}

// TestWorkersEndWithTheRun: the goroutines that carry steps out outlive no
// run, whether it ends well, cancelled, or by a panic out of the executor's
// loop. Waits for the count to come back (a worker leaves once it sees the
// run's end); the deadline only turns a leak into a failure instead of a
// hang.
func TestWorkersEndWithTheRun(t *testing.T) {
	for _, end := range []string{"finished", "cancelled", "panicked"} {
		t.Run(end, func(t *testing.T) {
			cancel := end == "cancelled"
			before := runtime.NumGoroutine()
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			p := plan.New("s", "deploy")
			for i := 0; i < 200; i++ {
				id := fmt.Sprint(i)
				p.Add(&plan.Node{ID: id, Group: id, Spec: fn(plan.RunnerFunc(func(context.Context, plan.Env) plan.Result {
					if cancel && id == "100" {
						stop()
					}
					return plan.Ok()
				}))})
				if i >= 8 {
					connect(p, fmt.Sprint(i-8), id, plan.OnSuccess)
				}
			}
			if end == "panicked" {
				func() {
					defer func() {
						if recover() == nil {
							t.Fatal("the observer's panic did not reach Run's caller")
						}
					}()
					mustRun(ctx, p, Options{Parallel: 8, Observer: &panicking{}})
				}()
			} else if o := mustRun(ctx, p, Options{Parallel: 8}); o.Cancelled != cancel {
				t.Fatalf("cancelled %v, want %v", o.Cancelled, cancel)
			}
			deadline := time.Now().Add(time.Minute)
			for runtime.NumGoroutine() > before {
				if time.Now().After(deadline) {
					buf := make([]byte, 1<<20)
					t.Fatalf("%d goroutines a minute after the run, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
				}
				time.Sleep(time.Millisecond)
			}
		})
	}
}
