package engine

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
)

// delays measures, for every step, the time from the end of the last of its
// dependencies to its own start: what the executor adds between them.
type delays struct {
	mu      sync.Mutex
	ended   map[string]time.Time
	started map[string]time.Time
}

func (d *delays) StepStarted(n *plan.Node, at time.Time) {
	d.mu.Lock()
	d.started[n.ID] = at
	d.mu.Unlock()
}

func (d *delays) StepFinished(n *plan.Node, _ plan.Result, _, ended time.Time) {
	d.mu.Lock()
	d.ended[n.ID] = ended
	d.mu.Unlock()
}

func (d *delays) Log(*plan.Node, string, time.Time) {}
func (d *delays) Note(*plan.Node, plan.Note)        {}

// noopPlan is n in-process no-op steps; step i runs after the steps
// depsOf(i) names (earlier ones).
func noopPlan(n int, depsOf func(i int) []int) (*plan.Plan, map[string][]string) {
	p := plan.New("bench", "deploy")
	deps := map[string][]string{}
	noop := plan.RunnerFunc(func(context.Context, plan.Env) plan.Result { return plan.Ok() })
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("s%05d", i)
		p.Add(&plan.Node{ID: id, Label: id, Spec: fn(noop)})
		for _, j := range depsOf(i) {
			from := fmt.Sprintf("s%05d", j)
			connect(p, from, id, plan.OnSuccess)
			deps[id] = append(deps[id], from)
		}
	}
	return p, deps
}

// randomPlan: each step after up to 3 earlier ones (bench/'s random cases).
func randomPlan(n int, seed int64) (*plan.Plan, map[string][]string) {
	r := rand.New(rand.NewSource(seed))
	return noopPlan(n, func(i int) []int {
		seen := map[int]bool{}
		var out []int
		for k := 0; k < 3 && i > 0; k++ {
			if j := r.Intn(i); !seen[j] {
				seen[j] = true
				out = append(out, j)
			}
		}
		return out
	})
}

// chainPlan: each step after the one before.
func chainPlan(n int) (*plan.Plan, map[string][]string) {
	return noopPlan(n, func(i int) []int {
		if i == 0 {
			return nil
		}
		return []int{i - 1}
	})
}

// BenchmarkDispatch runs 10,000 in-process no-op steps, 8 at once, and
// reports the executor's cost per step (random DAG).
func BenchmarkDispatch(b *testing.B) {
	const n = 10000
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		p, _ := randomPlan(n, int64(i))
		b.StartTimer()
		if out := mustRun(context.Background(), p, Options{Parallel: 8}); out.Failed {
			b.Fatal("a no-op step failed")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/step")
}

// BenchmarkDependencyDelay runs a chain of 10,000 in-process no-op steps and
// reports the delay between a step ending and the next one starting: what the
// executor adds on a critical path (p50, p99; target p99 < 2 ms). A chain,
// so that no step ever waits for a free slot.
func BenchmarkDependencyDelay(b *testing.B) {
	const n = 10000
	var all []time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		p, deps := chainPlan(n)
		d := &delays{ended: make(map[string]time.Time, n), started: make(map[string]time.Time, n)}
		b.StartTimer()
		if out := mustRun(context.Background(), p, Options{Parallel: 8, Observer: d}); out.Failed {
			b.Fatal("a no-op step failed")
		}
		b.StopTimer()
		for id, ds := range deps {
			all = append(all, d.started[id].Sub(d.ended[ds[0]]))
		}
		b.StartTimer()
	}
	b.StopTimer()
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	b.ReportMetric(float64(all[len(all)/2].Nanoseconds()), "p50-delay-ns")
	b.ReportMetric(float64(all[len(all)*99/100].Nanoseconds()), "p99-delay-ns")
}
