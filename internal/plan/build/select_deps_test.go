package build

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/state"
)

// TestSelectedDepsMatchTheWalk: what selectedDeps remembers of the
// unselected components gives, for every component, exactly the list (and
// order) a walk of its own gives — on random graphs and selections, with
// dependencies the state recorded for undeploy, departed components, and
// recorded dependencies that close cycles with the graph's.
func TestSelectedDepsMatchTheWalk(t *testing.T) {
	cases := []struct {
		name     string
		n        int
		selected float64 // the share of components selected
		undeploy bool
		recorded bool // the state records dependencies of its own
		cycles   bool // some recorded dependencies point forwards
		departed int  // components only the state knows
	}{
		{name: "deploy, most selected", n: 60, selected: 0.8},
		{name: "deploy, few selected", n: 60, selected: 0.1},
		{name: "deploy, none selected", n: 30, selected: 0},
		{name: "undeploy, recorded dependencies", n: 60, selected: 0.3, undeploy: true, recorded: true},
		{name: "undeploy, departed components", n: 60, selected: 0.3, undeploy: true, recorded: true, departed: 10},
		{name: "undeploy, recorded cycles", n: 40, selected: 0.3, undeploy: true, recorded: true, cycles: true},
		{name: "deploy, departed with cycles", n: 40, selected: 0.5, recorded: true, cycles: true, departed: 8},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for seed := int64(1); seed <= 40; seed++ {
				rng := rand.New(rand.NewSource(seed))
				g, before, names := randomSelectionWorld(t, rng, tc.n, tc.recorded, tc.cycles, tc.departed)
				selected := map[string]bool{}
				for _, n := range names {
					if rng.Float64() < tc.selected {
						selected[n] = true
					}
				}
				deps := newSelectedDeps(g, before, selected, tc.undeploy)
				plain := newSelectedDeps(g, before, selected, tc.undeploy)
				// Every component, in an order of its own: what is
				// remembered must not depend on who asked first.
				order := slices.Clone(names)
				rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
				for _, n := range order {
					got, want := deps.of(n), plain.walk(n)
					if len(got) == 0 && len(want) == 0 {
						continue
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("seed %d, %s (-walk +remembered):\n%s", seed, n, diff)
					}
				}
			}
		})
	}
}

// randomSelectionWorld makes a random stack of n components (each depending
// on up to three earlier ones), its graph, and a state that records every
// component, with dependencies of its own when recorded (forwards, closing
// cycles with the graph's, when cycles), and departed components only the
// state knows.
func randomSelectionWorld(t *testing.T, rng *rand.Rand, n int, recorded, cycles bool, departed int) (*Graph, *state.State, []string) {
	t.Helper()
	var comps []*manifest.Component
	var names []string
	for i := 0; i < n; i++ {
		names = append(names, fmt.Sprintf("c%02d", i))
		comps = append(comps, comp(names[i]))
	}
	w := newWorld(comps...)
	for i := 1; i < n; i++ {
		for k := rng.Intn(4); k > 0; k-- {
			d := names[rng.Intn(i)]
			if !slices.Contains(w.res.Stack.Components[i].Depends, d) {
				w.res.Stack.Components[i].Depends = append(w.res.Stack.Components[i].Depends, d)
			}
		}
	}
	g, diags := BuildGraph(w.res)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	before := &state.State{Components: map[string]*state.Component{}}
	all := slices.Clone(names)
	for i := 0; i < departed; i++ {
		all = append(all, fmt.Sprintf("gone%02d", i))
	}
	for i, name := range all {
		c := &state.Component{Status: state.StatusDeployed}
		if recorded || i >= n {
			for k := rng.Intn(3); k > 0; k-- {
				j := rng.Intn(len(all))
				if !cycles && j >= i {
					continue
				}
				if all[j] != name {
					c.Depends = append(c.Depends, all[j])
				}
			}
		}
		before.Components[name] = c
	}
	return g, before, all
}
