package elaborate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// TestMergeOrder checks mergeOrder against the orders the Hub CLI
// (agilestacks/hub 65b7e58) elaborates for the same base and derived
// lifecycle.order, each verified with hub elaborate.
func TestMergeOrder(t *testing.T) {
	tests := []struct {
		base, derived string
		want          string
		conflict      string // "after current" of the first conflict
	}{
		{base: "a b c", derived: "p q", want: "a b c p q"},
		{base: "a b c", derived: "p b q", want: "a p b c q"},
		{base: "a b c d", derived: "p a q c r", want: "p a b q c d r"},
		{base: "a b c d", derived: "b d", want: "a b c d"},
		{base: "a b c d", derived: "d p", want: "a b c d p"},
		{base: "a b c d", derived: "p a", want: "p a b c d"},
		{base: "a b c d", derived: "x a y c z", want: "x a b y c d z"},
		{base: "a b c", derived: "c a", conflict: "c a", want: "a b c"},
		{base: "a b c d", derived: "q c p a", conflict: "c a", want: "a b c d q p"},
		// Not from the Hub (it stops at the first conflict): every
		// conflict is reported against the last anchor that held.
		{base: "a b c d", derived: "d c b", conflict: "d c", want: "a b c d"},
		{base: "", derived: "p q", want: "p q"},
		{base: "a b", derived: "", want: "a b"},
	}
	for _, tt := range tests {
		t.Run(tt.base+"+"+tt.derived, func(t *testing.T) {
			got, conflicts := mergeOrder(strings.Fields(tt.base), strings.Fields(tt.derived))
			if diff := cmp.Diff(strings.Fields(tt.want), got, cmpEmpty); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			switch {
			case tt.conflict == "" && len(conflicts) > 0:
				t.Errorf("unexpected conflicts %+v", conflicts)
			case tt.conflict != "" && len(conflicts) == 0:
				t.Errorf("no conflict, want %q", tt.conflict)
			case tt.conflict != "":
				c := conflicts[0]
				if got := c.after + " " + strings.Fields(tt.derived)[c.child]; got != tt.conflict {
					t.Errorf("conflict %q, want %q", got, tt.conflict)
				}
			}
		})
	}
}

func TestMergeOrderConflictMessage(t *testing.T) {
	base := manifest.StackLifecycle{Order: []string{"a", "b", "c"}, Positions: manifest.Positions{"order[0]": {File: "base/hub.yaml", Line: 9, Col: 11}}}
	src := manifest.StackLifecycle{Order: []string{"c", "a"}, Positions: manifest.Positions{"order[1]": {File: "hub.yaml", Line: 12, Col: 14}}}
	var dst manifest.StackLifecycle
	var diags manifest.Diagnostics
	mergeLifecycle(&dst, &base, true, nil, &diags)
	mergeLifecycle(&dst, &src, false, nil, &diags)
	want := "hub.yaml:12:14: lifecycle.order[1]: Component `c` must come after `a` in child stack `lifecycle.order` - as defined by parent stack (fromStack): \"c\" is listed before \"a\" here, but the base stack lists \"a\" first (base/hub.yaml:9:11); a derived stack places its components around the base's, it cannot reorder them"
	if len(diags) != 1 || diags[0].String() != want {
		t.Fatalf("got %v\nwant %s", diags, want)
	}
	if diff := cmp.Diff([]string{"a", "b", "c"}, dst.Order); diff != "" {
		t.Errorf("order after a conflict (-want +got):\n%s", diff)
	}
}

func TestMergeLifecycleLists(t *testing.T) {
	base := manifest.StackLifecycle{
		Bare: "allow", Verbs: []string{"deploy", "undeploy"}, Order: []string{"a", "b", "c", "d"},
		Mandatory: []string{"a", "b"}, Optional: []string{"d"},
		Requires:        manifest.RequiresTuning{Optional: []string{"vault", "gcp:b", "etcd:"}},
		ReadyConditions: []manifest.ReadyCondition{{DNS: "x", URL: "https://x"}},
		Options:         &manifest.LifecycleOptions{Random: &manifest.RandomOption{Bytes: 16}},
	}
	child := manifest.StackLifecycle{
		Bare: "other", Verbs: []string{"deploy", "undeploy", "backup"}, Order: []string{"x", "a", "y", "c", "z"},
		Mandatory: []string{"x"}, Optional: []string{"a", "y"},
		Requires:        manifest.RequiresTuning{Optional: []string{"helm", "gcp:", ":x", "vault:y"}},
		ReadyConditions: []manifest.ReadyCondition{{URL: "https://child"}},
	}
	var dst manifest.StackLifecycle
	var diags manifest.Diagnostics
	mergeLifecycle(&dst, &base, true, nil, &diags)
	mergeLifecycle(&dst, &child, false, nil, &diags)
	// What the Hub CLI elaborates for the same stacks.
	want := manifest.StackLifecycle{
		Bare: "allow", Verbs: []string{"deploy", "undeploy", "backup"}, Order: []string{"x", "a", "b", "y", "c", "d", "z"},
		Mandatory: []string{"a", "b", "x"}, Optional: []string{"d", "a", "y"},
		Requires:        manifest.RequiresTuning{Optional: []string{"helm", "vault:y"}},
		ReadyConditions: []manifest.ReadyCondition{{DNS: "x", URL: "https://x"}, {URL: "https://child"}},
	}
	dst.Positions = nil
	if diff := cmp.Diff(want, dst); diff != "" || len(diags) > 0 {
		t.Errorf("merged lifecycle (-want +got):\n%s\n%v", diff, diags)
	}
}
