package build

import (
	"slices"
	"sync"

	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/state"
)

// HubProvides is hub.provides (HUB_PROVIDES) of the components a deploy
// runs: one rule for the plan, which predicts it, and the run, which gives
// it. A component sees the capabilities the run starts with (the
// environment's, the stack's own, its platform's) and what the components
// before it in deploy order provide: their manifests' provides and what the
// state recorded of them, or, once one ended in this run, what it provided
// (nothing, if it was skipped or failed). A run of some components (-c,
// -o) also sees every capability the state records, as the Hub CLI's does;
// a full run, and one cut at -l, none of the state's. Run one at a time
// (--parallel 1) that is the Hub CLI's list, the same on every deploy. With
// --parallel a component before it that has not finished counts with what
// it provided last time, so the list does not depend on which finished
// first; a run differs from its plan only where a component's dynamic
// provides change. Safe for concurrent use.
type HubProvides struct {
	mu  sync.Mutex
	set CapabilitySet // the base, and the components of slots[:cursor]
	// cursor is where the last list was made: components are mostly asked
	// about in deploy order, so the set moves a few slots at a time.
	cursor int
	slots  []hubSlot
	slotOf map[string]int
}

// hubSlot is a component of the run, in deploy order, with what it
// provides for the components after it.
type hubSlot struct {
	name string
	caps []string
}

// NewHubProvides starts the rule for a deploy of the components inRun says
// it runs, in the stack's deploy order, from the capabilities known at the
// start (base: InitialProvides without the state) and the state before the
// run, whose capabilities all count when some says the run deploys some
// components (plan.Plan.SomeComponents).
func NewHubProvides(res *elaborate.Result, order []string, before *state.State, base []string, some bool, inRun func(string) bool) *HubProvides {
	h := &HubProvides{slotOf: map[string]int{}}
	h.set.Add(base...)
	deployed := func(name string) *state.Component {
		if before == nil {
			return nil
		}
		if rc := before.Components[name]; rc != nil && rc.Status == state.StatusDeployed {
			return rc
		}
		return nil
	}
	if before != nil && some {
		// As the run's own: a component providing otherwise in this run
		// does not take the state's away.
		for _, rc := range before.Components {
			if rc.Status == state.StatusDeployed {
				h.set.Add(rc.Provides...)
			}
		}
	}
	for _, name := range order {
		c := res.Component(name)
		if c == nil || !inRun(name) {
			continue
		}
		caps := c.Provides
		if rc := deployed(name); rc != nil && len(rc.Provides) > 0 {
			caps = append(slices.Clip(caps), rc.Provides...)
		}
		h.slotOf[name] = len(h.slots)
		h.slots = append(h.slots, hubSlot{name: name, caps: caps})
	}
	return h
}

// For is hub.provides of comp: space-separated, sorted. A component not of
// the run sees what every component of the run provides.
func (h *HubProvides) For(comp string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	at, ok := h.slotOf[comp]
	if !ok {
		at = len(h.slots)
	}
	for h.cursor < at {
		s := &h.slots[h.cursor]
		h.set.AddFor(s.name, s.caps...)
		h.cursor++
	}
	for h.cursor > at {
		h.cursor--
		h.set.Remove(h.slots[h.cursor].name)
	}
	return h.set.String()
}

// Provided records what comp provided in this run, when it deployed —
// nothing when it was skipped or failed: the components after it see that
// from now on.
func (h *HubProvides) Provided(comp string, caps []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	i, ok := h.slotOf[comp]
	if !ok || sameCapabilities(h.slots[i].caps, caps) {
		return
	}
	h.slots[i].caps = slices.Clone(caps)
	if i < h.cursor {
		h.set.Remove(comp)
		h.set.AddFor(comp, caps...)
	}
}

// AddBase records capabilities every component sees from now on: an
// environment capability whose tools appeared on PATH during the run.
func (h *HubProvides) AddBase(caps ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.set.Add(caps...)
}

// sameCapabilities reports whether a and b hold the same capabilities.
func sameCapabilities(a, b []string) bool {
	for _, p := range a {
		if !slices.Contains(b, p) {
			return false
		}
	}
	for _, p := range b {
		if !slices.Contains(a, p) {
			return false
		}
	}
	return true
}
