package build

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
)

// TestCapabilitySetListsAsItChanges: after any sequence of capabilities
// added, provided by components and removed with them, String lists what a
// listing of them all, sorted, lists.
func TestCapabilitySetListsAsItChanges(t *testing.T) {
	for seed := int64(1); seed <= 50; seed++ {
		rng := rand.New(rand.NewSource(seed))
		var caps CapabilitySet
		caps.Add("fixed-0")
		fixed := map[string]bool{"fixed-0": true}
		by := map[string]map[string]bool{} // component -> what it provides
		capName := func() string { return fmt.Sprintf("cap-%d", rng.Intn(12)) }
		for step := 0; step < 200; step++ {
			comp := fmt.Sprintf("c%d", rng.Intn(6))
			switch rng.Intn(4) {
			case 0:
				p := capName()
				caps.Add(p)
				fixed[p] = true
			case 1, 2:
				ps := []string{capName(), capName()}
				caps.AddFor(comp, ps...)
				if by[comp] == nil {
					by[comp] = map[string]bool{}
				}
				for _, p := range ps {
					by[comp][p] = true
				}
			case 3:
				caps.Remove(comp)
				delete(by, comp)
			}
			all := map[string]bool{}
			for p := range fixed {
				all[p] = true
			}
			for _, ps := range by {
				for p := range ps {
					all[p] = true
				}
			}
			var want []string
			for p := range all {
				want = append(want, p)
			}
			sort.Strings(want)
			if got := caps.String(); got != strings.Join(want, " ") {
				t.Fatalf("seed %d, step %d: %q, want %q", seed, step, got, strings.Join(want, " "))
			}
			for _, p := range []string{capName(), "fixed-0"} {
				if caps.Has(p) != all[p] {
					t.Fatalf("seed %d, step %d: Has(%s) = %v", seed, step, p, !all[p])
				}
			}
		}
	}
}
