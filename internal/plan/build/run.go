package build

import (
	"fmt"

	"github.com/gantry-dev/gantry/internal/plan"
)

// Groups of the steps around a run.
const (
	GroupLeftovers = "leftovers"
	GroupHandler   = "installation-handler"
	GroupStack     = "stack"

	groupPreFlight    = "pre-flight"
	groupPostFlight   = "post-flight"
	groupPostTeardown = "post-teardown"
)

// runStartPass adds what comes before everything else of a run: waiting for
// the processes a killed run left, and the step that records the run's start
// in the state. Each waits for the one before; the rest of the plan waits for
// the last (runEndPass). The installation handler's calls are plans of their
// own, around this one (HandlerPlan).
func (b *builder) runStartPass() {
	var prev string
	add := func(n *plan.Node) {
		b.p.Add(n)
		if prev != "" {
			b.connect(prev, n.ID, plan.OnSuccess)
		}
		prev = n.ID
	}
	if lo := b.f.Leftovers; lo != nil && len(lo.Processes) > 0 {
		add(&plan.Node{ID: GroupLeftovers + "/wait", Kind: plan.KindWait, Group: GroupLeftovers, Critical: true,
			Label: fmt.Sprintf("wait for %d process group(s) the killed run left", len(lo.Processes)), Spec: b.maskedLeftovers(lo)})
	}
	if b.opts.Invoke == "" {
		b.setup = GroupStack + "/setup"
		add(&plan.Node{ID: b.setup, Kind: plan.KindSetup, Group: GroupStack, Critical: true, Hidden: true,
			Label: "record the start of the run", Spec: plan.Setup{Elaborate: b.opts.WriteElaborate}})
	}
}

// maskedLeftovers is the spec of the leftovers wait: their command lines may
// hold secrets.
func (b *builder) maskedLeftovers(lo *plan.Leftovers) plan.Leftovers {
	out := plan.Leftovers{Run: lo.Run, Processes: make([]plan.Process, len(lo.Processes))}
	for i, p := range lo.Processes {
		out.Processes[i] = plan.Process{PID: p.PID, Command: b.in.Mask(p.Command), Dir: p.Dir, Boot: p.Boot, Started: p.Started}
	}
	return out
}

// runEndPass ties the plan together: everything waits for the run's start,
// and the stack's finalisation runs when everything else has ended, whatever
// it did.
func (b *builder) runEndPass() {
	start := map[string]bool{GroupLeftovers + "/wait": true, b.setup: true}
	var lastStart string
	for _, id := range []string{b.setup, GroupLeftovers + "/wait"} {
		if id != "" && b.p.Node(id) != nil {
			lastStart = id
			break
		}
	}
	if lastStart != "" {
		for _, n := range b.p.Sources() {
			if !start[n.ID] {
				b.connect(lastStart, n.ID, plan.OnSuccess)
			}
		}
	}
	if b.setup == "" {
		return
	}
	sinks := b.p.Sinks()
	finish := GroupStack + "/finalize"
	b.p.Add(&plan.Node{ID: finish, Kind: plan.KindFinalize, Group: GroupStack, Hidden: true, Light: true, Always: true,
		Label: "record how the run left the stack", Spec: plan.Finalize{}})
	b.connect(b.setup, finish, plan.OnSuccess)
	fin := b.p.Node(finish)
	for _, n := range sinks {
		if n.ID != b.setup {
			b.connect(n.ID, finish, plan.OnComplete)
		}
		if n.Group == groupPostFlight || n.Group == groupPostTeardown {
			// How the group ended tells whether the stack is ready.
			fin.Inputs = append(fin.Inputs, n.ID)
		}
	}
}
