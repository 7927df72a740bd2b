package build

import (
	"testing"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/state"
	"github.com/google/go-cmp/cmp"
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

// TestReadChanges: what a deploy read outside the component's parameters
// (recorded as salted digests) is compared with what the same names read
// now: only those that differ are details, a secret's new value masked, a
// name no longer defined "removed", and an output not known yet changed.
func TestReadChanges(t *testing.T) {
	expand := func(t *testing.T, greeting string) *params.Expanded {
		t.Helper()
		stack := &manifest.Stack{Meta: manifest.Meta{Name: "s"}}
		if greeting != "" {
			stack.Parameters = append(stack.Parameters, manifest.Parameter{Name: "greeting", Value: manifest.Scalar(greeting)})
		}
		stack.Parameters = append(stack.Parameters, manifest.Parameter{Name: "db.password", Value: manifest.Scalar("pw-" + greeting)})
		l, diags := params.Lock(params.LockInput{Stack: stack, Env: func(string) (string, bool) { return "", false }, DeploymentID: "id"})
		if diags.HasErrors() {
			t.Fatal(diags.Err())
		}
		outs := params.NewOutputIndex([]string{"app", "late"})
		outs.Declare("late", []string{"url"})
		exp, diags := params.ExpandComponent(params.ComponentInput{Locked: l, Component: &manifest.Component{Meta: manifest.ComponentMeta{Name: "app"}}, Outputs: outs})
		if diags.HasErrors() {
			t.Fatal(diags.Err())
		}
		return exp
	}
	recordOf := func(exp *params.Expanded, names ...string) map[string]string {
		for _, n := range names {
			exp.Resolver().Lookup(n)
		}
		return ReadDigests("id", exp.Reads(), nil)
	}
	old := recordOf(expand(t, "hello"), "greeting", "db.password", "unset")
	tests := []struct {
		name     string
		greeting string
		recorded map[string]string
		want     []plan.ChangeDetail
	}{
		{"the same", "hello", old, nil},
		{"changed", "bye", old, []plan.ChangeDetail{
			{Kind: plan.ChangeRead, Name: "db.password", What: "changed", New: plan.Masked},
			{Kind: plan.ChangeRead, Name: "greeting", What: "changed", New: "bye"},
		}},
		{"no longer defined", "", recordOf(expand(t, "hello"), "greeting"), []plan.ChangeDetail{
			{Kind: plan.ChangeRead, Name: "greeting", What: "removed"},
		}},
		{"defined now", "hello", map[string]string{"unset": old["unset"], "greeting": old["greeting"]}, nil},
		{"an output not known yet", "hello", map[string]string{"late:url": "0123456789abcdef"}, []plan.ChangeDetail{
			{Kind: plan.ChangeRead, Name: "late:url", What: "changed", New: "(known once late runs)", Pending: "late"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := ReadChanges("id", tt.recorded, expand(t, tt.greeting))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
		})
	}
	// Outputs of the components it comes after are the fingerprint's.
	if d := ReadDigests("id", map[string]params.Read{"z:o": {Value: "v", From: "z"}, "o2": {Value: "v", From: "z"}, "g": {Value: "x"}}, []string{"z"}); len(d) != 1 || d["g"] == "" {
		t.Errorf("reads recorded beside the fingerprint's outputs: %v", d)
	}
	// The digests are salted: the same value in another deployment records
	// another digest, so a state tells nothing of a value by comparison.
	if other := ReadDigests("other", map[string]params.Read{"greeting": {Value: "hello"}}, nil); other["greeting"] == old["greeting"] {
		t.Error("the digest does not depend on the salt")
	}
}
