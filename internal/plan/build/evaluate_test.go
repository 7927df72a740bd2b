package build

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
)

// evaluateWorld is a chain of n components, each with a parameter made of
// its predecessor's output and a secret stack parameter, deployed: the
// components in unchanged are recorded with the fingerprint a deploy would
// compute now, the others with a stale one.
func evaluateWorld(t *testing.T, n int, unchanged func(i int) bool, extra func(c *manifest.Component, i int)) *world {
	t.Helper()
	var comps []*manifest.Component
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("c%03d", i)
		c := comp(names[i])
		c.Outputs = []manifest.Output{{Name: "out"}}
		c.Parameters = []manifest.Parameter{{Name: "token"}, {Name: "self", Value: manifest.Scalar("${hub.componentName}-x")}}
		if i > 0 {
			c.Parameters = append(c.Parameters, manifest.Parameter{Name: "prev", Value: manifest.Scalar("${" + names[i-1] + ":out}")})
		}
		if extra != nil {
			extra(c, i)
		}
		comps = append(comps, c)
	}
	w := newWorld(comps...)
	w.res.Stack.Parameters = []manifest.Parameter{{Name: "token", Value: "s3cret", Kind: "secret"}}
	for i := 1; i < n; i++ {
		w.res.Stack.Components[i].Depends = []string{names[i-1]}
	}
	for _, name := range names {
		w.facts.DirSums[component.DirKey("/src/"+name, nil, nil)] = &component.DirDigest{Sum: "sum-" + name}
	}
	w.before = deployedState(names...)
	for i, name := range names {
		w.before.Components[name].Outputs = map[string]string{"out": "o" + name}
		if i > 0 {
			w.before.Components[name].Depends = []string{names[i-1]}
		}
	}
	// The fingerprints a deploy computes, with the outputs the state holds.
	g, diags := BuildGraph(w.res)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	locked, diags := params.Lock(params.LockInput{Stack: w.res.Stack, Env: func(string) (string, bool) { return "", false }, DeploymentID: "d"})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	outputs := NewOutputIndex(w.res, g, w.before)
	for i, c := range comps {
		w.before.Components[names[i]].Fingerprint = "stale"
		if !unchanged(i) {
			continue
		}
		exp, ds := params.ExpandComponent(params.ComponentInput{Locked: locked, Component: c, Depends: w.res.Stack.Components[i].Depends, Outputs: outputs})
		if ds.HasErrors() {
			continue
		}
		upstream := map[string]map[string]string{}
		for _, d := range g.Dependencies(names[i]) {
			upstream[d] = outputs.Values(d)
		}
		w.before.Components[names[i]].Fingerprint = component.Fingerprint(plan.VerbDeploy, "sum-"+names[i], "", exp, upstream)
	}
	return w
}

// buildBothWays builds the world's plan with the parameters evaluated on
// every processor beforehand, and one component after the other.
func buildBothWays(t *testing.T, w *world, opts Options) (parallel, inOrder string, pd, od manifest.Diagnostics) {
	t.Helper()
	encode := func(p *plan.Plan) string {
		if p == nil {
			return ""
		}
		p.Created = time.Time{}
		var buf bytes.Buffer
		if err := p.WriteJSON(&buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	saved := evaluateFrom
	t.Cleanup(func() { evaluateFrom = saved })
	evaluateFrom = 1
	p, pd := w.build(t, opts)
	parallel = encode(p)
	evaluateFrom = 1 << 30
	p, od = w.build(t, opts)
	inOrder = encode(p)
	return parallel, inOrder, pd, od
}

// TestEvaluateMatchesInOrder: expanding the parameters of all components on
// every processor before the plan is built gives the plan, to the byte, and
// the errors, in their order, that expanding them one after the other gives.
func TestEvaluateMatchesInOrder(t *testing.T) {
	const n = 200
	cases := []struct {
		name      string
		opts      Options
		unchanged func(int) bool
		extra     func(*manifest.Component, int)
		wantErrs  int
	}{
		{name: "resume, all unchanged", opts: Options{Verb: plan.VerbDeploy, Run: true, Resume: true}, unchanged: func(int) bool { return true }},
		{name: "resume, every third changed", opts: Options{Verb: plan.VerbDeploy, Run: true, Resume: true}, unchanged: func(i int) bool { return i%3 != 0 }},
		{name: "deploy, all unchanged", opts: Options{Verb: plan.VerbDeploy, Run: true}, unchanged: func(int) bool { return true }},
		{name: "broken parameters", opts: Options{Verb: plan.VerbDeploy, Run: true, Resume: true}, unchanged: func(int) bool { return true },
			extra: func(c *manifest.Component, i int) {
				if i%50 == 7 {
					c.Parameters = append(c.Parameters, manifest.Parameter{Name: "bad", Value: "${nowhere.to.be.found}"})
				}
			}, wantErrs: 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := evaluateWorld(t, n, tc.unchanged, tc.extra)
			parallel, inOrder, pd, od := buildBothWays(t, w, tc.opts)
			if diff := cmp.Diff(inOrder, parallel); diff != "" {
				t.Errorf("the plans differ (-in order +evaluated first):\n%s", diff)
			}
			if diff := cmp.Diff(od.Err(), pd.Err(), cmp.Comparer(func(a, b error) bool { return fmt.Sprint(a) == fmt.Sprint(b) })); diff != "" {
				t.Errorf("the diagnostics differ (-in order +evaluated first):\n%s", diff)
			}
			if got := len(od.Errors()); got != tc.wantErrs {
				t.Errorf("%d errors, want %d: %v", got, tc.wantErrs, od.Err())
			}
			if tc.wantErrs == 0 && parallel == "" {
				t.Fatal("no plan")
			}
		})
	}
}

// TestEvaluateSettles: on a resume of unchanged components the evaluated
// fingerprints settle them (the test would pass vacuously if evaluate found
// every component changed).
func TestEvaluateSettles(t *testing.T) {
	w := evaluateWorld(t, 100, func(i int) bool { return i != 50 }, nil)
	saved := evaluateFrom
	t.Cleanup(func() { evaluateFrom = saved })
	evaluateFrom = 1
	p := w.mustBuild(t, Options{Verb: plan.VerbDeploy, Run: true, Resume: true})
	var settled, redeploy []string
	for name, c := range p.Components {
		switch c.Action {
		case "unchanged":
			settled = append(settled, name)
		case "redeploy":
			redeploy = append(redeploy, name)
		}
	}
	if len(settled) != 99 || len(redeploy) != 1 || redeploy[0] != "c050" {
		t.Errorf("unchanged %d, redeployed %v; want 99 unchanged and c050 redeployed", len(settled), redeploy)
	}
	// And the answers came from evaluate, not from the plan working them
	// out again.
	g, diags := BuildGraph(w.res)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	locked, _ := params.Lock(params.LockInput{Stack: w.res.Stack, Env: func(string) (string, bool) { return "", false }, DeploymentID: "d"})
	b := newBuilder(&Input{Res: w.res, Graph: g, Before: w.before, Locked: locked, Facts: w.facts, StateDir: "/src",
		Options: Options{Verb: plan.VerbDeploy, Run: true, Resume: true}})
	var cps []*compPlan
	for _, name := range g.Order {
		cps = append(cps, b.locate(name, plan.VerbDeploy, false))
	}
	b.evaluate(cps)
	for _, cp := range cps {
		e := cp.evaluated
		switch {
		case e == nil || !e.predicted || e.change == nil:
			t.Fatalf("%s: evaluate left %+v", cp.info.Name, e)
		case (e.change.Status == plan.ChangeUnchanged) == (cp.info.Name == "c050"):
			t.Errorf("%s: evaluated %s", cp.info.Name, e.change.Status)
		}
	}
}
