package build

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/state"
)

// TestHubProvidesBeforeInOrder: a component sees the base and what the
// components before it provide (manifest and recorded) — not what those
// after it provide, whatever the state records of them; a run of some
// components sees every capability the state records, as the Hub's.
func TestHubProvidesBeforeInOrder(t *testing.T) {
	res := &elaborate.Result{Stack: &manifest.Stack{}, Components: []*manifest.Component{
		{Meta: manifest.ComponentMeta{Name: "dns"}},
		{Meta: manifest.ComponentMeta{Name: "istio"}, Provides: []string{"istio"}},
		{Meta: manifest.ComponentMeta{Name: "app"}},
		{Meta: manifest.ComponentMeta{Name: "db"}, Provides: []string{"sql"}},
	}}
	order := []string{"dns", "istio", "app", "db"}
	before := &state.State{Components: map[string]*state.Component{
		"dns":    {Status: state.StatusDeployed, Provides: []string{"dyn-dns"}},
		"istio":  {Status: state.StatusDeployed, Provides: []string{"istio", "gateway"}},
		"db":     {Status: state.StatusDeployed, Provides: []string{"sql"}},
		"orphan": {Status: state.StatusDeployed, Provides: []string{"gone"}},
		"app":    {Status: state.StatusFailed, Provides: []string{"failed-app"}},
	}}
	all := func(string) bool { return true }
	notDB := func(n string) bool { return n != "db" }
	for _, tc := range []struct {
		name  string
		some  bool
		inRun func(string) bool
		comp  string
		want  string
	}{
		{"first sees the base", false, all, "dns", "kubernetes"},
		{"recorded dynamic provides of the one before", false, all, "istio", "dyn-dns kubernetes"},
		{"manifest and recorded of those before", false, all, "app", "dyn-dns gateway istio kubernetes"},
		{"the last sees all before it", false, all, "db", "dyn-dns gateway istio kubernetes"},
		{"cut at -l: nothing of the state's", false, notDB, "dns", "kubernetes"},
		{"some components (-c, -o): all the state's", true, notDB, "dns", "dyn-dns gateway gone istio kubernetes sql"},
		{"not of the run: everything", false, all, "other", "dyn-dns gateway istio kubernetes sql"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHubProvides(res, order, before, []string{"kubernetes"}, tc.some, tc.inRun)
			if got := h.For(tc.comp); got != tc.want {
				t.Errorf("For(%s) = %q, want %q", tc.comp, got, tc.want)
			}
		})
	}
}

// TestHubProvidesAskedInAnyOrder: asked about components in any order, with
// components deploying (and providing other than they recorded) in between,
// For lists what a count from scratch lists.
func TestHubProvidesAskedInAnyOrder(t *testing.T) {
	for seed := int64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewSource(seed))
		n := 2 + rng.Intn(12)
		res := &elaborate.Result{Stack: &manifest.Stack{}}
		var order []string
		caps := map[string][]string{}
		capName := func() string { return fmt.Sprintf("cap-%d", rng.Intn(8)) }
		for i := 0; i < n; i++ {
			name := fmt.Sprintf("c%d", i)
			c := &manifest.Component{Meta: manifest.ComponentMeta{Name: name}}
			if rng.Intn(2) == 0 {
				c.Provides = []string{capName()}
			}
			res.Components = append(res.Components, c)
			order = append(order, name)
			caps[name] = c.Provides
		}
		h := NewHubProvides(res, order, nil, []string{"base"}, false, func(string) bool { return true })
		for step := 0; step < 60; step++ {
			name := order[rng.Intn(n)]
			if rng.Intn(3) == 0 {
				caps[name] = []string{capName(), capName()}
				h.Provided(name, caps[name])
				continue
			}
			want := map[string]bool{"base": true}
			for _, before := range order {
				if before == name {
					break
				}
				for _, p := range caps[before] {
					want[p] = true
				}
			}
			var l []string
			for p := range want {
				l = append(l, p)
			}
			slices.Sort(l)
			if got := h.For(name); got != strings.Join(l, " ") {
				t.Fatalf("seed %d, step %d: For(%s) = %q, want %q", seed, step, name, got, strings.Join(l, " "))
			}
		}
	}
}
