package landscape

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/plan/build"
)

// TestForeignLandscapeOrder opens a landscape from outside the repository
// (GANTRY_SOW_LANDSCAPE: a folder with an acre.yaml and a crop/, e.g.
// gardener/garden-setup as its crop) as gantry order does, and checks that
// the deploy order puts every import before its importer. It lists the
// active and inactive components.
func TestForeignLandscapeOrder(t *testing.T) {
	root := os.Getenv("GANTRY_SOW_LANDSCAPE")
	if root == "" {
		t.Skip("GANTRY_SOW_LANDSCAPE names no landscape")
	}
	l, diags := Open(context.Background(), root, Options{Graph: true})
	if l == nil {
		t.Fatalf("open: %v", diags.Err())
	}
	g, gd := build.BuildGraph(l.Result())
	if gd.HasErrors() {
		t.Fatal(gd.Err())
	}
	at := map[string]int{}
	for i, n := range g.Order {
		at[n] = i
	}
	var active, inactive []string
	edges := 0
	for _, c := range l.Components {
		if !c.Active {
			inactive = append(inactive, c.Name)
			if _, ok := at[c.Name]; ok {
				t.Errorf("inactive component %s is in the order", c.Name)
			}
			continue
		}
		active = append(active, c.Name)
		for _, im := range c.Imports {
			edges++
			if at[im.Component] >= at[c.Name] {
				t.Errorf("%s imports %s (as %s) but comes at %d, before it (%d)", c.Name, im.Component, im.Label, at[c.Name], at[im.Component])
			}
		}
	}
	if len(g.Order) != len(active) {
		t.Errorf("order has %d components, %d are active", len(g.Order), len(active))
	}
	t.Logf("%d components: %d active, %d inactive; %d import edges, all respected by the order", len(l.Components), len(active), len(inactive), edges)
	t.Logf("order: %s", strings.Join(g.Order, " "))
	t.Logf("inactive: %s", strings.Join(inactive, " "))
	for _, c := range l.Components {
		if c.Active {
			var ims []string
			for _, im := range c.Imports {
				ims = append(ims, im.Label+"="+im.Component)
			}
			t.Logf("  %s <- %s", c.Name, strings.Join(ims, ", "))
		}
	}
}
