package build

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/state"
)

// evaluated is what a component's parameters tell the plan, worked out
// before the plan is built around it (evaluate).
type evaluated struct {
	// predicted says change and reads are predictChange's answer.
	predicted bool
	change    *plan.Change
	reads     runReads
	// lifecycle is the component's effective lifecycle, when worked out.
	lifecycle *manifest.ComponentLifecycle
}

// evaluateFrom is the number of components from which evaluate works on
// every processor: below it, starting the workers costs more than it saves.
var evaluateFrom = 64

// evaluate expands the parameters of the located components of a deploy on
// every processor, as checkParameters and predictChange would one after the
// other: at 10,000 components that is two expansions and a fingerprint each,
// most of building the plan. It keeps the answers only when no expansion
// failed. Otherwise the plan works everything out in order as ever, so that
// its errors, and which expansion ran out of the shared budget, do not
// depend on the order in which workers came to them; the trial's spending
// is then thrown away (the budget bounds the work at twice its limits).
func (b *builder) evaluate(cps []*compPlan) {
	if b.verb != plan.VerbDeploy || b.in.Locked == nil || b.in.Locked.Budget() == nil || len(cps) < evaluateFrom {
		return
	}
	trial, commit := b.in.Locked.Budget().Trial()
	locked := b.in.Locked.WithBudget(trial)
	planned := b.plannedOutputs()
	provides := make([]string, len(cps))
	for i, cp := range cps {
		provides[i] = b.hubProvidesFor(cp.info.Name)
	}
	results := make([]evaluated, len(cps))
	if !forEachIndex(len(cps), func(i int) bool {
		return b.evaluateOne(cps[i], &results[i], locked, planned, provides[i])
	}) {
		return
	}
	commit()
	for i, cp := range cps {
		if cp.c != nil {
			cp.evaluated = &results[i]
		}
	}
}

// locateAll locates the selected components of the plan, on every
// processor when there are many (locate only reads the stack, the graph
// and the state).
func (b *builder) locateAll(names []string) []*compPlan {
	out := make([]*compPlan, len(names))
	if len(names) < evaluateFrom {
		for i, name := range names {
			out[i] = b.locate(name, b.verb, false)
		}
		return out
	}
	b.stackRef("") // its index is made once, before the workers read it
	forEachIndex(len(names), func(i int) bool {
		out[i] = b.locate(names[i], b.verb, false)
		return true
	})
	return out
}

// forEachIndex calls fn for 0 ≤ i < n on a worker per processor, until
// one call returns false; it reports whether none did. A panic in fn is
// raised again in the caller's goroutine, where the command reports it.
func forEachIndex(n int, fn func(i int) bool) bool {
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	var panicked atomic.Pointer[any]
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					panicked.CompareAndSwap(nil, &r)
					failed.Store(true)
				}
			}()
			for !failed.Load() {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if !fn(i) {
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	if r := panicked.Load(); r != nil {
		panic(*r)
	}
	return !failed.Load()
}

// evaluateOne is evaluate of one component; false when an expansion failed.
func (b *builder) evaluateOne(cp *compPlan, out *evaluated, locked *params.Locked, planned *params.OutputIndex, provides string) bool {
	if cp.c == nil {
		return true
	}
	info := cp.info
	if exp, ds := b.expand(cp, locked, planned, provides); ds.HasErrors() || b.readsLeftOut(exp) {
		return false
	}
	// What predictAction asks predictChange for.
	rec := cp.recorded
	if info.ReadOnly || info.Orphan || rec == nil || rec.Status != state.StatusDeployed {
		return true
	}
	lc := EffectiveLifecycle(cp.c, cp.ref)
	change, reads, expandFailed := b.changeOf(cp, locked, provides, FingerprintExclude(&lc, info.Dir, b.in.StateFiles))
	if expandFailed {
		return false
	}
	out.predicted, out.change, out.reads, out.lifecycle = true, change, reads, &lc
	return true
}
