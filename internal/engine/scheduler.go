package engine

import (
	"container/heap"
	"fmt"
	"strings"

	"github.com/gantry-dev/gantry/internal/plan"
)

// Scheduler is the executor's decisions as a deterministic state machine:
// which step starts next, which is skipped and why, the --parallel slots,
// resources, the stop after a critical failure, cancellation. It runs no
// step, starts no goroutine and reads no clock: the local executor (Run)
// drives it with goroutines, and a durable workflow (internal/engine/
// temporal) drives it with activities and replays it. Given the same plan,
// options and outcomes in the same order, it makes the same decisions.
// It is not safe for concurrent use.
type Scheduler struct {
	p    *plan.Plan
	opts SchedulerOptions

	succs     [][]succ
	preds     [][]succ // kind and source
	remaining []int
	results   []plan.Result
	done      []bool
	// inFlight says a step was started and has not finished.
	inFlight []bool
	finished int

	ready   readyHeap
	light   []int
	running int
	holds   holds
	// outside counts steps waiting outside the run without a slot; wanting
	// those back and waiting for one (Env.Outside).
	outside, wanting int
	// lightRunning is a light step started and not finished: the caller
	// must finish it before asking for the next decision.
	lightRunning int

	halted    string
	haltedBy  string
	failed    bool
	cancelled bool
	// started groups finish their steps even after the run stopped: a
	// component half-way through its plan is work in flight. Light steps
	// (bookkeeping) do not start a group.
	started map[string]bool
	// failedGroups name the root cause when their failure skips other groups.
	failedGroups map[string]bool
}

// SchedulerOptions tune a Scheduler.
type SchedulerOptions struct {
	// Parallel is the most steps that run at once (light steps do not
	// count); 1 runs steps one at a time in plan order.
	Parallel int
	// Force goes on with independent branches after a critical step failed.
	Force bool
	// Paused reports whether new steps are held back (a prompt is on the
	// terminal); nil never pauses.
	Paused func() bool
}

// DecisionKind says what a Decision is.
type DecisionKind uint8

// Decisions.
const (
	// Start: run the step and report its end with Finish. A light step must
	// be finished before the next decision is asked for: the local executor
	// runs it inline.
	Start DecisionKind = iota + 1
	// Skipped: the step ends without running (Result says why); the
	// scheduler has recorded it.
	Skipped
	// Grant: give the slot back to the step that has waited longest outside
	// the run (Want).
	Grant
)

// Decision is what the scheduler decided.
type Decision struct {
	Kind   DecisionKind
	Step   int // the step's index in the plan (Start, Skipped)
	Result plan.Result
}

type succ struct {
	to   int
	kind plan.EdgeKind
}

// NewScheduler starts scheduling a plan whose edges Connect checked.
func NewScheduler(p *plan.Plan, o SchedulerOptions) *Scheduler {
	if o.Parallel < 1 {
		o.Parallel = 1
	}
	n := len(p.Nodes)
	s := &Scheduler{
		p:            p,
		opts:         o,
		succs:        make([][]succ, n),
		preds:        make([][]succ, n),
		remaining:    make([]int, n),
		results:      make([]plan.Result, n),
		done:         make([]bool, n),
		inFlight:     make([]bool, n),
		started:      map[string]bool{},
		failedGroups: map[string]bool{},
	}
	for i, e := range p.Edges {
		from, to := p.EdgeEnds(i)
		s.succs[from] = append(s.succs[from], succ{to: to, kind: e.Kind})
		s.preds[to] = append(s.preds[to], succ{to: from, kind: e.Kind})
		s.remaining[to]++
	}
	for i := range p.Nodes {
		if s.remaining[i] == 0 {
			s.markReady(i)
		}
	}
	return s
}

func (s *Scheduler) markReady(i int) {
	if s.p.Nodes[i].Light {
		s.light = append(s.light, i)
		return
	}
	heap.Push(&s.ready, i)
}

// Next returns the next decision, false when nothing can be decided until a
// running step ends (or a pause ends). Ready light steps come first, then
// slots given back to steps returning from outside the run — they are work
// in flight — then ready steps in plan order while slots are free. A step
// whose resource another holds is set aside.
func (s *Scheduler) Next() (Decision, bool) {
	if s.lightRunning > 0 {
		panic("engine: a light step must finish before the next decision")
	}
	for {
		if s.wanting > 0 && s.running < s.opts.Parallel {
			s.wanting--
			s.running++
			s.outside--
			return Decision{Kind: Grant}, true
		}
		if len(s.light) > 0 {
			i := s.light[0]
			s.light = s.light[1:]
			if res, skip := s.decide(i); skip {
				s.finish(i, res)
				return Decision{Kind: Skipped, Step: i, Result: res}, true
			}
			s.begin(i)
			return Decision{Kind: Start, Step: i}, true
		}
		if s.opts.Paused != nil && s.opts.Paused() {
			return Decision{}, false
		}
		if s.ready.Len() == 0 {
			return Decision{}, false
		}
		// Skips take no slot, so decide before counting.
		i := s.ready[0]
		if res, skip := s.decide(i); skip {
			heap.Pop(&s.ready)
			s.finish(i, res)
			return Decision{Kind: Skipped, Step: i, Result: res}, true
		}
		if res, ok := s.busy(i); ok {
			heap.Pop(&s.ready)
			s.wait(i, res)
			continue
		}
		if s.running >= s.opts.Parallel {
			return Decision{}, false
		}
		heap.Pop(&s.ready)
		s.begin(i)
		return Decision{Kind: Start, Step: i}, true
	}
}

// begin records that step i starts.
func (s *Scheduler) begin(i int) {
	n := s.p.Nodes[i]
	if n.Group != "" && !n.Light {
		s.started[n.Group] = true
	}
	s.take(i)
	s.inFlight[i] = true
	if n.Light {
		s.lightRunning++
	} else {
		s.running++
	}
}

// Finish records how a started step ended.
func (s *Scheduler) Finish(i int, res plan.Result) {
	if !s.inFlight[i] {
		panic(fmt.Sprintf("engine: step %s finished but it was not running", s.p.Nodes[i].ID))
	}
	s.inFlight[i] = false
	if s.p.Nodes[i].Light {
		s.lightRunning--
	} else {
		s.running--
	}
	s.finish(i, res)
}

// Leave gives the slot of a running step back while it waits for something
// outside the run (Env.Outside); Want asks for one again, and a Grant
// decision gives it.
func (s *Scheduler) Leave() {
	s.running--
	s.outside++
}

// Want asks for a slot for a step back from outside the run.
func (s *Scheduler) Want() { s.wanting++ }

// Cancel stops the run: steps not started are skipped as interrupted
// (failure paths and Always steps still run).
func (s *Scheduler) Cancel() { s.cancelled = true }

// Cancelled reports whether the run was cancelled.
func (s *Scheduler) Cancelled() bool { return s.cancelled }

// Done reports whether every step has finished or been skipped.
func (s *Scheduler) Done() bool { return s.finished == len(s.p.Nodes) }

// Idle reports whether nothing runs, nothing waits outside the run and
// nothing can start: a plan in this state and not Done cannot go on
// (Stuck says why).
func (s *Scheduler) Idle() bool {
	paused := s.opts.Paused != nil && s.opts.Paused()
	return s.running == 0 && s.outside == 0 && s.lightRunning == 0 && s.ready.Len() == 0 && len(s.light) == 0 && !paused
}

// Running is the number of steps that hold a slot.
func (s *Scheduler) Running() int { return s.running }

// Result is how step i ended (the zero Result while it has not).
func (s *Scheduler) Result(i int) plan.Result { return s.results[i] }

// Finished reports whether step i has ended.
func (s *Scheduler) Finished(i int) bool { return s.done[i] }

// Failed reports whether a critical step failed; HaltedBy names the group
// (or step) whose failure stopped new work, "" when none did.
func (s *Scheduler) Failed() bool { return s.failed }

// HaltedBy names the group (or the step) whose failure stopped new work.
func (s *Scheduler) HaltedBy() string { return s.haltedBy }

// Stuck names the steps that never became ready.
func (s *Scheduler) Stuck() error {
	var ids []string
	for i, n := range s.p.Nodes {
		if !s.done[i] {
			ids = append(ids, n.ID)
			if len(ids) == 10 {
				ids = append(ids, "…")
				break
			}
		}
	}
	if w := s.waitingNames(); w != "" {
		return fmt.Errorf("engine: the plan cannot go on: %s never became ready; steps wait for %s", strings.Join(ids, ", "), w)
	}
	return fmt.Errorf("engine: the plan cannot go on: %s never became ready (a cycle?)", strings.Join(ids, ", "))
}

// decide says whether step i must be skipped instead of run.
func (s *Scheduler) decide(i int) (plan.Result, bool) {
	n := s.p.Nodes[i]
	var failurePath, anyFailed bool
	for _, pr := range s.preds[i] {
		dep := s.results[pr.to]
		dn := s.p.Nodes[pr.to]
		if pr.kind == plan.OnFailure {
			failurePath = true
			if dep.Status == plan.Failed {
				anyFailed = true
			}
			continue
		}
		if pr.kind == plan.OnComplete {
			continue
		}
		switch {
		case dep.Status == plan.OK:
		case dep.Soft() && dn.Group != n.Group:
			// A skip by design does not hold back other groups.
		case dep.Soft():
			return plan.Skip(dep.Cause, dep.Reason), true
		case dn.Group != n.Group && dn.Group != "" && s.failedGroups[dn.Group]:
			return plan.Skip(plan.CauseUpstream, dn.Group+" failed"), true
		case dep.Status == plan.Skipped:
			return plan.Skip(upstreamCause(dep.Cause), dep.Reason), true
		default:
			return plan.Skip(plan.CauseUpstream, failedReason(dn, dep, n)), true
		}
	}
	if failurePath && !anyFailed {
		return plan.Skip(plan.CauseNotNeeded, "not needed"), true
	}
	if n.Always {
		return plan.Result{}, false
	}
	if s.halted != "" && !(n.Group != "" && s.started[n.Group]) {
		return plan.Skip(plan.CauseStopped, "not started: the run stopped after "+s.halted+" failed"), true
	}
	if s.cancelled {
		return plan.Skip(plan.CauseInterrupted, "not started: the run was interrupted"), true
	}
	return plan.Result{}, false
}

// upstreamCause is the cause of a skip passed on from a skipped step: a stop
// or an interruption stays what it was; anything else is upstream.
func upstreamCause(c plan.Cause) plan.Cause {
	if c == plan.CauseStopped || c == plan.CauseInterrupted {
		return c
	}
	return plan.CauseUpstream
}

func failedReason(dep *plan.Node, res plan.Result, n *plan.Node) string {
	if dep.Group != "" && dep.Group != n.Group {
		return dep.Group + " failed"
	}
	return "step " + labelOf(dep, res) + " failed"
}

// labelOf names a step that ended with res: by the label it said with its
// values expanded, as its own lines name it, else by the plan's.
func labelOf(n *plan.Node, res plan.Result) string {
	if res.Label != "" {
		return res.Label
	}
	return n.Label
}

// finish records how step i ended and makes the steps waiting only for it
// ready.
func (s *Scheduler) finish(i int, res plan.Result) {
	if s.done[i] {
		panic("engine: step finished twice")
	}
	n := s.p.Nodes[i]
	s.done[i] = true
	s.finished++
	s.results[i] = res
	if res.Status == plan.Failed && n.Group != "" {
		s.failedGroups[n.Group] = true
	}
	s.free(i)
	if res.Status == plan.Failed && (n.Critical || res.Abort) {
		s.failed = true
		if (!s.opts.Force || res.Abort) && s.halted == "" {
			s.halted = n.Group
			if s.halted == "" {
				s.halted = labelOf(n, res)
			}
			s.haltedBy = s.halted
		}
	}
	for _, sc := range s.succs[i] {
		s.remaining[sc.to]--
		if s.remaining[sc.to] == 0 {
			s.markReady(sc.to)
		}
	}
}

// readyHeap orders ready steps by their position in the plan.
type readyHeap []int

func (h readyHeap) Len() int           { return len(h) }
func (h readyHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h readyHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *readyHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *readyHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Reset takes a group's steps back to before they ran, so that they run
// again: a component whose steps ran on a worker that died, and that may
// run again, starts over from its first step elsewhere. Steps of the group
// that were running are forgotten (their slots are free again); what they
// held is released. A group whose finished steps another group has already
// read cannot start over: Reset refuses it and changes nothing.
func (s *Scheduler) Reset(group string) error {
	if group == "" {
		return fmt.Errorf("engine: only a group's steps can start over")
	}
	in := func(i int) bool { return s.p.Nodes[i].Group == group }
	for i := range s.p.Nodes {
		if !in(i) || !(s.done[i] || s.inFlight[i]) {
			continue
		}
		for _, sc := range s.succs[i] {
			if !in(sc.to) && (s.done[sc.to] || s.inFlight[sc.to]) {
				return fmt.Errorf("engine: group %s cannot start over: step %s has read step %s", group, s.p.Nodes[sc.to].ID, s.p.Nodes[i].ID)
			}
		}
	}
	for i := range s.p.Nodes {
		if !in(i) {
			continue
		}
		if s.inFlight[i] {
			s.inFlight[i] = false
			if s.p.Nodes[i].Light {
				s.lightRunning--
			} else {
				s.running--
			}
		}
		if s.done[i] {
			s.done[i] = false
			s.finished--
			s.results[i] = plan.Result{}
			for _, sc := range s.succs[i] {
				s.remaining[sc.to]++
			}
		}
	}
	delete(s.failedGroups, group)
	delete(s.started, group)
	// What the group held is free; steps waiting for it are ready again.
	var woken []int
	for res, h := range s.holds.holder {
		if in(h) {
			delete(s.holds.holder, res)
			woken = append(woken, s.holds.waiting[res]...)
			delete(s.holds.waiting, res)
		}
	}
	for res, ws := range s.holds.waiting {
		s.holds.waiting[res] = filterSteps(ws, func(i int) bool { return !in(i) })
	}
	// Rebuild what is ready: no step of the group but those whose
	// dependencies ended, and no step that waits again.
	keep := func(i int) bool { return !in(i) && s.remaining[i] == 0 && !s.done[i] && !s.inFlight[i] }
	ready := filterSteps(append([]int(s.ready), woken...), keep)
	s.light = filterSteps(s.light, keep)
	for i := range s.p.Nodes {
		if in(i) && s.remaining[i] == 0 && !s.done[i] {
			if s.p.Nodes[i].Light {
				s.light = append(s.light, i)
			} else {
				ready = append(ready, i)
			}
		}
	}
	s.ready = dedupe(ready)
	heap.Init(&s.ready)
	return nil
}

func filterSteps(l []int, keep func(int) bool) []int {
	var out []int
	for _, i := range l {
		if keep(i) {
			out = append(out, i)
		}
	}
	return out
}

func dedupe(l []int) []int {
	seen := make(map[int]bool, len(l))
	var out []int
	for _, i := range l {
		if !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	return out
}
