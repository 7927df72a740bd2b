package elaborate

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/state"
)

// TestOverPlatform: what a platform's state gives a stack elaborated over it,
// rule by rule of the Hub CLI's elaborate -s.
func TestOverPlatform(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		name     string
		requires []string
		params   []manifest.Parameter
		st       state.State
		want     []manifest.Parameter
		wantReq  []string
		provides []string
		warnings int
	}{{
		name:   "outputs by short name beat parameters; values and hub.* are kept",
		params: []manifest.Parameter{{Name: "a"}, {Name: "b"}, {Name: "c", Value: "mine"}, {Name: "hub.stackName"}, {Name: "d"}, {Name: "e", Component: "x"}},
		st: state.State{
			Parameters: map[string]string{"a": "param-a", "b": "param-b", "c": "param-c", "hub.stackName": "base", "d|comp": "qualified", "e": "param-e"},
			Outputs:    map[string]string{"net:a": "out-a"},
		},
		want: []manifest.Parameter{{Name: "a", Value: "out-a"}, {Name: "b", Value: "param-b"}, {Name: "c", Value: "mine"}, {Name: "hub.stackName"}, {Name: "d"}, {Name: "e", Component: "x", Value: "param-e"}},
	}, {
		name:     "fromEnv takes it as its default, with a warning when it had another",
		params:   []manifest.Parameter{{Name: "a", FromEnv: "A", Default: "old"}, {Name: "b", FromEnv: "B"}},
		st:       state.State{Outputs: map[string]string{"a": "x", "b": "y"}},
		want:     []manifest.Parameter{{Name: "a", FromEnv: "A", Default: "x"}, {Name: "b", FromEnv: "B", Default: "y"}},
		warnings: 1,
	}, {
		name:   "secret in the platform, secret here",
		params: []manifest.Parameter{{Name: "db.url"}, {Name: "conn"}},
		st:     state.State{Outputs: map[string]string{"db:db.url": "u", "conn": "c"}, SecretOutputs: []string{"db:db.url"}, Parameters: map[string]string{}},
		want:   []manifest.Parameter{{Name: "db.url", Value: "u", Secret: &yes}, {Name: "conn", Value: "c"}},
	}, {
		name:     "provides: platform.provides, off requires but the environment's",
		requires: []string{"vpc", "kubernetes", "dns"},
		st:       state.State{Provides: map[string][]string{"vpc": {"net"}, "kubernetes": {"eks"}}},
		wantReq:  []string{"kubernetes", "dns"},
		provides: []string{"kubernetes", "vpc"},
	}, {
		name:     "a stack requiring kubernetes gets the cluster's parameters of the provider",
		requires: []string{"kubernetes"},
		params:   []manifest.Parameter{{Name: "zone"}},
		st: state.State{
			Provides:   map[string][]string{"kubernetes": {"cluster"}},
			Components: map[string]*state.Component{"cluster": {Outputs: map[string]string{"kubernetes.api.endpoint": "https://k", "kubernetes.flavor": "eks", "other": "o"}}},
		},
		want:     []manifest.Parameter{{Name: "kubernetes.api.endpoint", Value: "https://k"}, {Name: "kubernetes.flavor", Value: "eks"}, {Name: "zone"}},
		wantReq:  []string{"kubernetes"},
		provides: []string{"kubernetes"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Result{Stack: &manifest.Stack{Requires: tc.requires, Parameters: tc.params}}
			diags := r.OverPlatform(&tc.st, "base.state")
			if diff := cmp.Diff(tc.want, r.Stack.Parameters); diff != "" {
				t.Errorf("parameters (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantReq, r.Stack.Requires); diff != "" && tc.requires != nil {
				t.Errorf("requires (-want +got):\n%s", diff)
			}
			var provides []string
			if r.Stack.Platform != nil {
				provides = r.Stack.Platform.Provides
			}
			if diff := cmp.Diff(tc.provides, provides); diff != "" {
				t.Errorf("platform.provides (-want +got):\n%s", diff)
			}
			if len(diags) != tc.warnings || diags.HasErrors() {
				t.Errorf("diagnostics: %v", diags)
			}
		})
	}
}

// TestOverPlatformSameShortName: of two platform outputs with one short
// name, the one of the component later in deploy order gives the value,
// on every run (a map's order chose it before).
func TestOverPlatformSameShortName(t *testing.T) {
	for _, tc := range []struct {
		name       string
		orderA     int
		orderB     int
		want       string
		wantSecret bool
	}{
		{"b deploys after a", 0, 1, "b-endpoint", true},
		{"a deploys after b", 1, 0, "a-endpoint", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 20 {
				st := &state.State{
					Components:    map[string]*state.Component{"a": {Order: tc.orderA}, "b": {Order: tc.orderB}},
					Outputs:       map[string]string{"a:endpoint": "a-endpoint", "b:endpoint": "b-endpoint"},
					SecretOutputs: []string{"b:endpoint"},
				}
				r := &Result{Stack: &manifest.Stack{Parameters: []manifest.Parameter{{Name: "endpoint"}}}}
				r.OverPlatform(st, "base.state")
				p := r.Stack.Parameters[0]
				if string(p.Value) != tc.want || (p.Secret != nil && *p.Secret) != tc.wantSecret {
					t.Fatalf("endpoint = %q (secret %v), want %q (secret %v)", p.Value, p.Secret != nil && *p.Secret, tc.want, tc.wantSecret)
				}
			}
		})
	}
}
