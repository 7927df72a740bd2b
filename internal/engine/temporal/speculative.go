package temporal

import "go.temporal.io/sdk/workflow"

// A query answered by a worker that has not the workflow in its cache
// replays the history the server gave it, and that history may end with
// events no workflow task has taken in yet (a step's heartbeat timed out
// while the query waited for the dead worker that had the workflow): the
// SDK runs the workflow over them anyway, on the clock of the last workflow
// task. What the query then sees is a state that never happens as such: the
// workflow task that takes those events in runs later, on its own clock,
// maybe with more events, and writes its own progress events in place of
// these. A client that showed them would show, say, a lost step that "took
// 0ms", and then never the real end of that step, whose index it has
// passed. So the progress query leaves out what such a replay added.
//
// Such a replay is known by how the workflow wakes up: after a wait that
// blocked, a workflow task (the history's length changed) or a local
// activity's result (the clock moved) wakes it; a workflow coroutine of its
// own may hand it something (handoffs). When none of these is what woke it,
// history beyond the last workflow task did.
//
// Not caught: a replay whose only new event is the workflow's cancellation
// (its coroutine hands it on, as in a workflow task; the events it adds are
// the task's, on a stale clock), and history that ends with a workflow task
// started but not completed (the SDK runs it as a task; were that task to
// time out, its events would be replaced).

// speculation tracks the events a replay of unprocessed history added.
type speculation struct {
	// from is the index of the first such event, -1 when there are none.
	from int
	// handoffs counts what the workflow's own coroutines handed the main
	// one: such a wake-up is not history's.
	handoffs int
}

// await runs wait, which blocks when blocks is true, and takes in what woke
// the workflow up. The SDK's test environment has no history (its length
// is 0) and moves no clock for what takes no time: nothing to tell there.
func (w *run) await(blocks bool, wait func()) {
	if !blocks {
		wait()
		return
	}
	length, now := workflow.GetInfo(w.ctx).GetCurrentHistoryLength(), workflow.Now(w.ctx)
	if length == 0 {
		wait()
		return
	}
	handoffs, events := w.spec.handoffs, len(w.events)
	wait()
	settled := w.spec.settled()
	w.spec.woke(workflow.GetInfo(w.ctx).GetCurrentHistoryLength() != length, !workflow.Now(w.ctx).Equal(now), w.spec.handoffs != handoffs, events)
	if settled && !w.spec.settled() {
		workflow.GetLogger(w.ctx).Debug("running over history no workflow task has taken in (a query's replay): progress events from here on are held back", "from", events)
	}
}

// woke takes in a wake-up after a blocking wait: whether a workflow task
// started since, the clock moved, or the workflow's own coroutine handed
// something; events is how many progress events there were before it.
func (s *speculation) woke(newTask, clockMoved, handoff bool, events int) {
	switch {
	case newTask:
		// A workflow task took in whatever came before it: all of it is
		// the run's (a wrong guess below only held events back until now).
		s.from = -1
	case !clockMoved && !handoff && s.from < 0:
		s.from = events
	}
}

// visible is how many of the progress events a query may show.
func (s *speculation) visible(events int) int {
	if s.from >= 0 {
		return min(s.from, events)
	}
	return events
}

// settled reports whether the state is a workflow task's, not a replay's
// of history no task has taken in.
func (s *speculation) settled() bool { return s.from < 0 }
