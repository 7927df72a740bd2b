package action

import (
	"fmt"
	"testing"
)

// TestDependsSet: the set of a component's depends answers as its list
// does, with few entries and with many.
func TestDependsSet(t *testing.T) {
	for _, n := range []int{0, 1, 8, 9, 100} {
		var depends []string
		for i := 0; i < n; i++ {
			depends = append(depends, fmt.Sprintf("c%d", i))
		}
		in := dependsSet(depends)
		for i := 0; i < n; i++ {
			if !in(fmt.Sprintf("c%d", i)) {
				t.Errorf("%d depends: c%d not found", n, i)
			}
		}
		for _, other := range []string{"", "c", fmt.Sprintf("c%d", n), "x"} {
			if in(other) {
				t.Errorf("%d depends: %q found", n, other)
			}
		}
	}
}
