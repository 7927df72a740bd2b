package steps

import (
	"slices"
	"sort"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/state"
)

// Absorb takes in what this run's steps recorded elsewhere — on the other
// Temporal workers of the run (docs/temporal.md) — from the state as the
// store holds it now: the outputs and capabilities of the components whose
// steps ran there, their secrets (for the masker), and their records and the
// stack's fields (for the recorder). mine names the components whose steps
// run here: what this process knows of them is newer. st belongs to the
// runtime afterwards.
func (rt *Runtime) Absorb(st *state.State, mine func(string) bool) {
	if st == nil {
		return
	}
	names := make([]string, 0, len(st.Components))
	for name := range st.Components {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		rec := st.Components[name]
		if mine(name) || rec.LastRun != rt.RunID {
			// Not touched by this run elsewhere: what the run began with
			// stands.
			continue
		}
		rt.Outputs.Set(name, rec.Outputs, rec.SecretOutputs)
		if rec.Status == state.StatusUndeployed {
			rt.Provides.Remove(name)
		} else if len(rec.Provides) > 0 {
			rt.Provides.AddFor(name, rec.Provides...)
		}
		for k, v := range rec.Outputs {
			if slices.Contains(rec.SecretOutputs, k) || manifest.LooksSecret(k) {
				rt.Masker.Add(v)
			}
		}
		for _, p := range rec.Parameters {
			if p.IsSecret() {
				rt.Masker.Add(p.Value)
			}
		}
	}
	if rt.Recorder != nil {
		rt.Recorder.Absorb(st, mine)
	}
}
