package plugin

import (
	"slices"
	"testing"

	"github.com/gantry-dev/gantry/internal/state"
)

// TestForgetIfHeld: an instance forgets a resource only when another
// instance of the stack records it; with none it keeps it (it is the last
// holder, which deletes it).
func TestForgetIfHeld(t *testing.T) {
	ns := state.Resource{APIVersion: "v1", Kind: "Namespace", Name: "s4"}
	cm := state.Resource{APIVersion: "v1", Kind: "ConfigMap", Namespace: "s4", Name: "d"}
	isNS := func(r state.Resource) bool { return r == ns }
	mk := func(holders ...string) *state.State {
		st := state.New("own")
		st.Component("x").Plugins = []state.PluginInstance{{Name: "kubernetes", Key: "x", Resources: []state.Resource{ns, cm}}}
		for _, h := range holders {
			st.Component(h).Plugins = []state.PluginInstance{{Name: "kubernetes", Key: h, Resources: []state.Resource{ns}}}
		}
		return st
	}
	for _, tc := range []struct {
		name    string
		st      *state.State
		holders []string
	}{
		{"nobody else", mk(), nil},
		{"y holds it", mk("y"), []string{"y"}},
		{"y and z hold it", mk("z", "y"), []string{"y", "z"}},
	} {
		c := tc.st.Component("x")
		holders, forgot := ForgetIfHeld(tc.st, c, "x", "x", isNS)
		if !slices.Equal(holders, tc.holders) || forgot != (len(tc.holders) > 0) {
			t.Errorf("%s: holders %v forgot %v, want %v", tc.name, holders, forgot, tc.holders)
		}
		want := []state.Resource{ns, cm}
		if len(tc.holders) > 0 {
			want = []state.Resource{cm}
		}
		if got := c.Plugins[0].Resources; !slices.Equal(got, want) {
			t.Errorf("%s: x records %v, want %v", tc.name, got, want)
		}
	}
}
