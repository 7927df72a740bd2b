package build

import (
	"testing"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// TestGroupNamesAreReserved: no stack can call a component like one of the
// plan's own groups, whose logs, times and status would merge with it.
func TestGroupNamesAreReserved(t *testing.T) {
	for _, g := range []string{GroupLeftovers, GroupHandler, GroupStack, groupPreFlight, groupPostFlight, groupPostTeardown} {
		if !manifest.ReservedComponentName(g) {
			t.Errorf("the plan's group %q is not a reserved component name", g)
		}
	}
}
