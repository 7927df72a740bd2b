package build

import (
	"testing"

	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/state"
)

// TestRefProblem: what ${component:output} is refused for, and the name
// offered, whatever the state records and in what order its map holds it.
func TestRefProblem(t *testing.T) {
	comp := func(name, kind string) *manifest.Component {
		c := &manifest.Component{Meta: manifest.ComponentMeta{Name: name}}
		c.Meta.Kind = kind
		return c
	}
	res := &elaborate.Result{
		Stack:      &manifest.Stack{},
		Components: []*manifest.Component{comp("app", "app"), comp("app2", "app"), comp("web.db", "db"), comp("base", "base")},
	}
	recorded := func(names ...string) *state.State {
		st := &state.State{Components: map[string]*state.Component{}}
		for _, n := range names {
			st.Components[n] = &state.Component{}
		}
		return st
	}
	undeployed := func(name string) *state.State {
		st := recorded(name)
		st.Components[name].Status = state.StatusUndeployed
		return st
	}
	names := StackNames(res)
	for _, tc := range []struct {
		name      string
		before    *state.State
		component string
		want      string
	}{
		{"in the stack", nil, "base", ""},
		{"an orphan", recorded("gone"), "gone", ""},
		{"an orphan undeployed", undeployed("gone"), "gone", `unknown output gone:url: gone is no longer in the stack and its record says undeployed: it has no outputs`},
		{"no suggestion of an undeployed orphan", undeployed("gone"), "gne", `unknown output gne:url: there is no component gne`},
		{"no such component", nil, "bse", `unknown output bse:url: there is no component bse (did you mean "base"?)`},
		{"a nested leaf", nil, "db", `unknown output db:url: there is no component db (did you mean "web.db"?)`},
		{"a nested leaf, deployed", recorded("web.db", "base"), "db", `unknown output db:url: there is no component db (did you mean "web.db"?)`},
		{"two leaves: no guess", recorded("other.db"), "db", `unknown output db:url: there is no component db`},
		{"among orphans, the first", recorded("cachf", "cachd", "cacha", "cachb", "cache", "cachc"), "cach", `unknown output cach:url: there is no component cach (did you mean "cacha"?)`},
		{"its own kind", nil, "app2", `unknown output app2:url: a component does not see its own outputs, nor those of other components of its kind (meta.kind app)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			check := NameCheck(names, Components{Res: res, Before: tc.before}, res.Components[0])
			// A map's order changes from one range to the next: a
			// suggestion that depended on it would differ among these.
			for range 20 {
				if got := check(tc.component, "url"); got != tc.want {
					t.Fatalf("got  %q\nwant %q", got, tc.want)
				}
			}
		})
	}
}

// TestUnknownNameSuggestsOwnParameters: a mistaken plain name may mean a
// parameter of the component itself, as well as one of the stack.
func TestUnknownNameSuggestsOwnParameters(t *testing.T) {
	app := &manifest.Component{Meta: manifest.ComponentMeta{Name: "app"}, Parameters: []manifest.Parameter{{Name: "replicas"}}}
	app.Meta.Kind = "app"
	res := &elaborate.Result{Stack: &manifest.Stack{Parameters: []manifest.Parameter{{Name: "region"}}}, Components: []*manifest.Component{app}}
	names := StackNames(res)
	check := NameCheck(names, Components{Res: res}, app)
	for name, want := range map[string]string{
		"replica":  `unknown parameter "replica" (did you mean "replicas"?)`,
		"regoin":   `unknown parameter "regoin" (did you mean "region"?)`,
		"replicas": "",
	} {
		if got := check("", name); got != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
	}
}
