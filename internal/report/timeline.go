package report

import (
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
)

// timing is when a step was ready, started and ended, in milliseconds
// since the run started; -1 when it did not happen.
type timing struct {
	ready, start, end int64
}

// ran reports whether the step started and ended.
func (t timing) ran() bool { return t.end >= 0 }

// timeSteps places every step of the plan (hidden ones too) on the run's
// clock: when it started and ended, and when it was ready — when the last
// of the steps it waits for ended, or the run's start. What it waited
// beyond that it waited for a free slot (--parallel) or a folder another
// component held. A step that started and never ended (a killed run) ends
// where the run does.
func timeSteps(p *plan.Plan, facts *runFacts, t0 time.Time, runEnd int64) []timing {
	ms := func(t time.Time) int64 {
		if t.IsZero() {
			return -1
		}
		return max(t.Sub(t0).Milliseconds(), 0)
	}
	out := make([]timing, len(p.Nodes))
	for i, n := range p.Nodes {
		t := timing{ready: -1, start: -1, end: -1}
		if s := facts.steps[n.ID]; s != nil {
			t.start, t.end = ms(s.started), ms(s.ended)
			switch {
			case t.start < 0 && t.end >= 0: // skipped without starting
				t.start = t.end
			case t.start >= 0 && t.end < 0: // never ended
				t.end = max(runEnd, t.start)
			}
		}
		out[i] = t
	}
	preds := predecessors(p)
	for i := range p.Nodes {
		if !out[i].ran() {
			continue
		}
		ready := int64(0)
		for _, j := range preds[i] {
			if out[j].ran() && out[j].end <= out[i].start {
				ready = max(ready, out[j].end)
			}
		}
		out[i].ready = min(ready, out[i].start)
	}
	return out
}

// predecessors lists, for each step, the positions of the steps it waits for.
func predecessors(p *plan.Plan) [][]int {
	preds := make([][]int, len(p.Nodes))
	for _, e := range p.Edges {
		from, to := p.Node(e.From), p.Node(e.To)
		preds[to.Index()] = append(preds[to.Index()], from.Index())
	}
	return preds
}

// criticalPath is the chain of steps that decided how long the run took:
// from the step that ended last, back through the step each one waited
// for longest (the one that ended last before it started), to a step that
// waited for nothing. Positions in the plan, first to last.
func criticalPath(p *plan.Plan, times []timing) []int {
	last := -1
	for i, t := range times {
		if t.ran() && (last < 0 || t.end > times[last].end) {
			last = i
		}
	}
	if last < 0 {
		return nil
	}
	preds := predecessors(p)
	path := []int{last}
	for cur := last; ; {
		next := -1
		for _, j := range preds[cur] {
			if times[j].ran() && times[j].end <= times[cur].start && (next < 0 || times[j].end > times[next].end) {
				next = j
			}
		}
		if next < 0 {
			break
		}
		path = append(path, next)
		cur = next
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}
