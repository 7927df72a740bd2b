package build

import (
	"testing"

	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/manifest"
)

// TestKnownNames: a plain output name is known to a component only when a
// component of another kind declares it, as the run's lookup finds it; the
// stack's own texts see every output.
func TestKnownNames(t *testing.T) {
	comp := func(name, kind string, outputs ...string) *manifest.Component {
		c := &manifest.Component{Meta: manifest.ComponentMeta{Name: name}}
		c.Meta.Kind = kind
		for _, o := range outputs {
			c.Outputs = append(c.Outputs, manifest.Output{Name: o})
		}
		return c
	}
	app := comp("app", "app", "host", "shared", "multi")
	app.Parameters = []manifest.Parameter{{Name: "port"}}
	app2 := comp("app2", "app", "only_apps")
	db := comp("db", "db", "shared", "dsn")
	other := comp("other", "other", "multi")
	third := comp("third", "third", "multi")
	res := &elaborate.Result{
		Stack:      &manifest.Stack{Parameters: []manifest.Parameter{{Name: "region"}, {Name: "size", Component: "db"}}},
		Components: []*manifest.Component{app, app2, db, nil, other, third},
	}
	names := StackNames(res)
	for _, tc := range []struct {
		c        *manifest.Component
		name     string
		known    bool
		ownKinds bool
	}{
		{app, "host", false, true},      // its own output
		{app, "only_apps", false, true}, // another instance of its kind's
		{app, "shared", true, false},    // db declares it too
		{app, "dsn", true, false},       // db's
		{app, "multi", true, false},     // other's and third's too
		{other, "multi", true, false},   // app's and third's
		{app, "port", true, false},      // its own parameter
		{app, "region", true, false},    // the stack's
		{app, "size|db", true, false},   // qualified stack parameter
		{app, "hub.provides", true, false},
		{app, "nosuch", false, false},
		{db, "host", true, false},
		{db, "port", false, false}, // app's parameter, not db's
		{nil, "host", true, false}, // the stack's post-flight sees every output
	} {
		who := "stack"
		kind := ""
		if tc.c != nil {
			who, kind = tc.c.Meta.Name, tc.c.Meta.Kind
		}
		if got := KnownNames(names, tc.c)(tc.name); got != tc.known {
			t.Errorf("%s knows %q = %v, want %v", who, tc.name, got, tc.known)
		}
		if got := names.OwnKindOnly(tc.name, kind); got != tc.ownKinds {
			t.Errorf("OwnKindOnly(%q, %q) = %v, want %v", tc.name, kind, got, tc.ownKinds)
		}
	}
}
