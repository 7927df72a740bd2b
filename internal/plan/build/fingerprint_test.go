package build

import (
	"testing"

	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/state"
)

// TestChangesReadsJoined: a component whose recorded files have none read
// outside its folder, and whose folder is as it was, is changed once by
// the files outside joining the fingerprint: the plan says that, not that
// someone added them. Adding a base (the kustomization changes) or changing
// one already recorded is told file by file.
func TestChangesReadsJoined(t *testing.T) {
	k := map[string]string{"kustomization.yaml": "k1"}
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for n, s := range m {
			out[n] = s
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	tests := []struct {
		name     string
		old, now map[string]string
		want     string
	}{
		{
			name: "after upgrading",
			old:  k,
			now:  with(k, "../../base/cm.yaml", "c1", "../../base/kustomization.yaml", "b1"),
			want: "changed: the files read outside its folder (../../base/cm.yaml, ../../base/kustomization.yaml) are part of its fingerprint now: once, after upgrading gantry",
		},
		{
			name: "a base added",
			old:  k,
			now:  with(k, "kustomization.yaml", "k2", "../../base/cm.yaml", "c1"),
			want: "changed: file ../../base/cm.yaml added; file kustomization.yaml changed",
		},
		{
			name: "a base changed",
			old:  with(k, "../../base/cm.yaml", "c1"),
			now:  with(k, "../../base/cm.yaml", "c2", "../../base/g.env", "g1"),
			want: "changed: file ../../base/cm.yaml changed; file ../../base/g.env added",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &state.Component{Inputs: &state.Inputs{Verb: "deploy", Files: tt.old}}
			c := &plan.Change{Status: plan.ChangeChanged, Details: Changes(rec, nil, &state.Inputs{Verb: "deploy", Files: tt.now})}
			if got := c.String(); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
