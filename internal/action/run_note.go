package action

import (
	"context"
	"fmt"

	"github.com/gantry-dev/gantry/internal/state"
)

// HasIncomplete reports whether a component is recorded incomplete: a run
// is going on or was cut short. (A stack incomplete with none is one whose
// mandatory components are not all deployed: a deploy of a few.)
func HasIncomplete(st *state.State) bool {
	for _, c := range st.Components {
		if c.Status == state.StatusIncomplete {
			return true
		}
	}
	return false
}

// RunNote says, of a state with incomplete components, whether a run holds
// the state now (live: its components are running) or the run that left
// them was cut short: the state alone reads the same in both cases. "" when
// nothing is incomplete, or the store cannot tell.
func RunNote(ctx context.Context, store state.Store, st *state.State) (note string, live bool) {
	if st == nil || !HasIncomplete(st) {
		return "", false
	}
	if m, ok := store.(state.Mirror); ok && len(m) > 0 {
		store = m[0]
	}
	p, ok := store.(state.LockProbe)
	if !ok {
		return "", false
	}
	held, h, err := p.HeldBy(ctx)
	switch {
	case err != nil:
		return "", false
	case held && h != nil:
		return fmt.Sprintf("a run holds the state now (%s): its incomplete components are running", h), true
	case held:
		return "a run holds the state now: its incomplete components are running", true
	}
	return "no run holds the state: the run that left components incomplete was cut short (processes it started may still run); the next deploy takes them up", false
}
