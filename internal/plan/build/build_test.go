package build

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/state"
)

// world is a stack of components built in memory, and the facts a resolve
// phase would have gathered for it: the builder sees no file system.
type world struct {
	res    *elaborate.Result
	facts  *Facts
	before *state.State
}

// newWorld makes a stack of the components, each in the folder /src/<name>
// with a Makefile implementation of deploy and undeploy, and the plugin rec
// an executable of the stack.
func newWorld(comps ...*manifest.Component) *world {
	w := &world{res: &elaborate.Result{Stack: &manifest.Stack{File: "/src/hub.yaml", Meta: manifest.Meta{Name: "test"}}, Dir: "/src"},
		facts: &Facts{WorkDir: "/work", Implementations: map[ImplKey]Implementation{}, SpecVersions: map[string]Version{"/src": {}},
			Plugins: map[PluginKey]PluginSource{}, Scripts: map[ScriptKey]bool{}, Environment: map[string]bool{}, DirSums: map[string]*component.DirDigest{}}}
	for _, c := range comps {
		dir := "/src/" + c.Meta.Name
		w.res.Stack.Components = append(w.res.Stack.Components, manifest.ComponentRef{Name: c.Meta.Name, Source: manifest.Source{Dir: dir}})
		w.res.Components = append(w.res.Components, c)
		for _, verb := range []string{plan.VerbDeploy, plan.VerbUndeploy} {
			w.facts.Implementations[ImplKey{dir, verb}] = Implementation{Impl: &component.Implementation{Kind: component.ImplMake, Args: []string{"make", verb}}}
		}
		for _, n := range []string{"rec", "echo", "fail", "gate", "delay", "http", "tcp", "exec"} {
			src := plan.SourceBuiltin
			if n == "rec" {
				src = "/src/plugins/rec/plugin"
			}
			w.facts.Plugins[PluginKey{dir, n}] = PluginSource{Source: src}
		}
	}
	return w
}

func (w *world) build(t *testing.T, opts Options) (*plan.Plan, manifest.Diagnostics) {
	t.Helper()
	g, diags := BuildGraph(w.res)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	in := params.LockInput{Stack: w.res.Stack, Env: func(string) (string, bool) { return "", false }, DeploymentID: "d"}
	locked, diags := params.Lock(in)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	return Build(&Input{Res: w.res, Graph: g, Before: w.before, Locked: locked, Facts: w.facts, StateDir: "/src", Options: opts})
}

func (w *world) mustBuild(t *testing.T, opts Options) *plan.Plan {
	t.Helper()
	p, diags := w.build(t, opts)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	return p
}

func comp(name string, plugins ...manifest.PluginEntry) *manifest.Component {
	return &manifest.Component{Meta: manifest.ComponentMeta{Name: name}, Plugins: plugins}
}

func entry(name string, args ...string) manifest.PluginEntry {
	return manifest.PluginEntry{Name: name, Args: args}
}

func control(name string, children ...manifest.PluginEntry) manifest.PluginEntry {
	return manifest.PluginEntry{Name: name, Children: children}
}

// entryOrder is the plan's entry steps in an order the executor could run
// them with --parallel 1, as "label" (with "|" between steps that may run at
// once, each branch of a parallel).
func entryOrder(p *plan.Plan) []string {
	var out []string
	for _, n := range p.Nodes {
		if n.Listed {
			out = append(out, n.Label)
		}
	}
	return out
}

// TestListsBecomeEdges checks that the nesting of plugin lists becomes the
// plan's structure: each entry waits for the ones before it, deletes run
// backwards, pinned keeps its order both ways, unpinned follows the action
// wherever it is nested, and the children of parallel wait for nothing of
// each other.
func TestListsBecomeEdges(t *testing.T) {
	list := []manifest.PluginEntry{
		entry("rec", "a"),
		control("pinned", entry("rec", "p1"), control("unpinned", entry("rec", "u1"), entry("rec", "u2"))),
		control("parallel", entry("rec", "x"), entry("rec", "y")),
		entry("rec", "z"),
	}
	tests := []struct {
		verb string
		// pairs that must be ordered (a before b) and pairs that must not be
		// (either way)
		ordered   [][2]string
		unordered [][2]string
	}{
		{plan.VerbDeploy,
			[][2]string{{"a", "p1"}, {"p1", "u1"}, {"u1", "u2"}, {"u2", "x"}, {"u2", "y"}, {"x", "z"}, {"y", "z"}},
			[][2]string{{"x", "y"}}},
		{plan.VerbUndeploy,
			[][2]string{{"z", "x"}, {"z", "y"}, {"x", "p1"}, {"p1", "u2"}, {"u2", "u1"}, {"u1", "a"}},
			[][2]string{{"x", "y"}}},
	}
	for _, tt := range tests {
		t.Run(tt.verb, func(t *testing.T) {
			w := newWorld(comp("app", list...))
			if tt.verb == plan.VerbUndeploy {
				w.before = deployedState("app")
			}
			p := w.mustBuild(t, Options{Verb: tt.verb})
			id := func(arg string) string {
				for _, n := range p.Nodes {
					if e, ok := n.Spec.(plan.Entry); ok && len(e.Args) > 0 && e.Args[0] == arg {
						return n.ID
					}
				}
				t.Fatalf("no entry step for %s in %v", arg, entryOrder(p))
				return ""
			}
			for _, o := range tt.ordered {
				if !p.Precedes(id(o[0]), id(o[1])) {
					t.Errorf("%s should come before %s", o[0], o[1])
				}
			}
			for _, u := range tt.unordered {
				if p.Precedes(id(u[0]), id(u[1])) || p.Precedes(id(u[1]), id(u[0])) {
					t.Errorf("%s and %s should be free to run at once", u[0], u[1])
				}
			}
			lanes := map[string]string{}
			for _, n := range p.Nodes {
				if e, ok := n.Spec.(plan.Entry); ok {
					lanes[e.Args[0]] = n.Lane
				}
			}
			if diff := cmp.Diff(map[string]string{"a": "", "p1": "", "u1": "", "u2": "", "x": "x", "y": "y", "z": ""}, lanes); diff != "" {
				t.Errorf("lanes (-want +got):\n%s", diff)
			}
		})
	}
}

// deployedState is a state in which the components were deployed with the
// manifests' plugin lists (rec entries, keyed by their first argument).
func deployedState(names ...string) *state.State {
	st := state.New("test")
	for i, n := range names {
		st.Components[n] = &state.Component{Status: state.StatusDeployed, Started: time.Unix(1, 0), Order: i, Dir: "/src/" + n}
	}
	return st
}

// TestBuildIsPure builds the same input twice: the plans are the same to the
// byte, and no file was needed (the folders do not exist).
func TestBuildIsPure(t *testing.T) {
	w := newWorld(comp("db"), comp("app", entry("rec", "a"), control("parallel", entry("echo", "x"), entry("gate", "ok?"))))
	w.res.Stack.Components[1].Depends = []string{"db"}
	var out [2]bytes.Buffer
	for i := range out {
		p := w.mustBuild(t, Options{Verb: plan.VerbDeploy, Run: true})
		p.Created = time.Time{}
		if err := p.WriteJSON(&out[i]); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(out[0].String(), out[1].String()); diff != "" {
		t.Errorf("two builds differ:\n%s", diff)
	}
}

// TestEntryKinds: gate, delay, http and tcp entries run as the steps of
// those kinds; an executable of the same name replaces the built-in.
func TestEntryKinds(t *testing.T) {
	w := newWorld(comp("app", entry("gate", "ship?"), entry("delay", "1"), entry("http", "http://x/"), entry("tcp", "x:1"), entry("echo", "hi")))
	p := w.mustBuild(t, Options{Verb: plan.VerbDeploy})
	var kinds []string
	for _, n := range p.Nodes {
		if n.Listed {
			kinds = append(kinds, string(n.Kind))
		}
	}
	if diff := cmp.Diff([]string{"gate", "delay", "probe", "probe", "plugin"}, kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	w.facts.Plugins[PluginKey{"/src/app", "gate"}] = PluginSource{Source: "/src/plugins/gate/plugin"}
	p = w.mustBuild(t, Options{Verb: plan.VerbDeploy})
	if n := p.Node("app/deploy/plugins/0"); n == nil || n.Kind != plan.KindPlugin {
		t.Errorf("an executable gate should run as a plugin: %+v", n)
	}
}

// TestVanishedInstancesAreDeletedAfterTheList: instances the state recorded
// that the list lost are deleted after the list's entries, the last recorded
// first, each a step of the plan.
func TestVanishedInstancesAreDeletedAfterTheList(t *testing.T) {
	w := newWorld(comp("app", entry("rec", "keep")))
	w.before = deployedState("app")
	w.before.Components["app"].Plugins = []state.PluginInstance{{Name: "rec", Key: "old1", Args: []string{"old1"}}, {Name: "rec", Key: "keep", Args: []string{"keep"}}, {Name: "rec", Key: "old2", Args: []string{"old2"}}}
	p := w.mustBuild(t, Options{Verb: plan.VerbDeploy})
	if diff := cmp.Diff([]string{"deploy rec keep", "delete rec old2: no longer in the plugin list", "delete rec old1: no longer in the plugin list"}, entryOrder(p)); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if !p.Precedes("app/deploy/plugins/0", "app/deploy/vanished/old2") || !p.Precedes("app/deploy/vanished/old2", "app/deploy/vanished/old1") {
		t.Error("deletions should follow the list, last recorded first")
	}
}

// TestMissingFactIsAnInternalError: a fact the resolve phase did not gather
// is reported, not looked up.
func TestMissingFactIsAnInternalError(t *testing.T) {
	w := newWorld(comp("app"))
	delete(w.facts.Implementations, ImplKey{"/src/app", plan.VerbDeploy})
	_, diags := w.build(t, Options{Verb: plan.VerbDeploy})
	if !diags.HasErrors() || !strings.Contains(diags.Err().Error(), "internal error: the plan needs a fact that was not gathered") {
		t.Errorf("got %v", diags)
	}
}

// TestGraphDoesNotDependOnPath: a requirement of the environment (kubectl)
// that nothing in the stack provides adds no edges, whether or not its tool
// is on PATH; the check is a fact, and a missing tool is an error.
func TestGraphDoesNotDependOnPath(t *testing.T) {
	a, b := comp("a"), comp("b")
	b.Requires = []string{"kubectl"}
	for _, onPath := range []bool{true, false} {
		w := newWorld(a, b)
		w.facts.Environment["kubectl"] = onPath
		g, _ := BuildGraph(w.res)
		if g.IsAncestor("a", "b") {
			t.Errorf("on PATH=%v: a → b, an edge from what PATH holds", onPath)
		}
		_, diags := w.build(t, Options{Verb: plan.VerbDeploy})
		if got := diags.HasErrors(); got == onPath {
			t.Errorf("on PATH=%v: errors=%v (%v)", onPath, got, diags)
		}
		_, diags = w.build(t, Options{Verb: plan.VerbDeploy, EnvironmentLater: true})
		if diags.HasErrors() {
			t.Errorf("checked later: %v", diags)
		}
	}
}

// TestRunSteps: a run's plan waits for a killed run's processes, then
// records its start; everything else comes after, and the stack's
// finalisation after everything. The installation handler's calls are plans
// of their own around it, shown as one: prepare first, finalize last,
// whatever happened after prepare, and not after a failed prepare.
func TestRunSteps(t *testing.T) {
	w := newWorld(comp("db"), comp("app"))
	w.facts.Leftovers = &plan.Leftovers{Run: "r1", Processes: []plan.Process{{PID: 42, Command: "make deploy", Dir: "/src/db"}}}
	h := &plan.Handler{Name: "h.sh", Path: "/src/h.sh", Dir: "/src", Config: `{"token":"s3cret-value"}`}
	p := w.mustBuild(t, Options{Verb: plan.VerbDeploy, Run: true})
	if !p.Precedes("leftovers/wait", "stack/setup") {
		t.Error("the leftovers should be waited for before anything else")
	}
	for _, n := range p.Nodes {
		switch n.ID {
		case "leftovers/wait", "stack/setup", "stack/finalize":
			continue
		}
		if !p.Precedes("stack/setup", n.ID) {
			t.Errorf("%s does not wait for the run's set-up", n.ID)
		}
		if !p.Precedes(n.ID, "stack/finalize") {
			t.Errorf("%s is not waited for by the stack's finalisation", n.ID)
		}
	}
	mask := func(s string) string { return strings.ReplaceAll(s, "s3cret-value", "*****") }
	prepare := HandlerPlan("test", plan.VerbDeploy, h, HandlerPrepare, mask)
	finalize := HandlerPlan("test", plan.VerbDeploy, h, HandlerFinalize, mask)
	shown := Shown(p, prepare, finalize)
	for _, n := range p.Nodes {
		if !shown.Precedes("installation-handler/prepare", n.ID) || !shown.Precedes(n.ID, "installation-handler/finalize") {
			t.Errorf("%s is not between the handler's prepare and finalize", n.ID)
		}
	}
	fin := finalize.Nodes[0]
	if !fin.Always || prepare.Nodes[0].Always || !prepare.Nodes[0].Critical {
		t.Errorf("prepare %+v, finalize %+v", prepare.Nodes[0], fin)
	}
	var b bytes.Buffer
	if err := shown.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "s3cret-value") {
		t.Error("the handler's config is shown in clear")
	}
	if h.Config != `{"token":"s3cret-value"}` {
		t.Error("masking the shown config changed the handler's")
	}
}

// TestSharedTemplatedFoldersTakeTheFolder: components that render templates
// in one real folder take it in their verb and free it in their end; one
// alone in its folder, or one that renders nothing, takes nothing.
func TestSharedTemplatedFoldersTakeTheFolder(t *testing.T) {
	templated := func(name string) *manifest.Component {
		c := comp(name)
		c.Templates = &manifest.Templates{Files: []string{"*.template"}}
		return c
	}
	w := newWorld(templated("a"), templated("b"), templated("c"), comp("d"))
	// a and b are links to one folder; d is in it too but renders nothing.
	w.facts.RealDirs = map[string]string{"/src/a": "/real/x", "/src/b": "/real/x", "/src/c": "/real/c", "/src/d": "/real/x"}
	p := w.mustBuild(t, Options{})
	var got []string
	for _, n := range p.Nodes {
		for _, r := range n.Takes {
			got = append(got, n.ID+" takes "+r)
		}
		for _, r := range n.Frees {
			got = append(got, n.ID+" frees "+r)
		}
	}
	want := []string{"a/deploy takes folder:/real/x", "a/end frees folder:/real/x", "b/deploy takes folder:/real/x", "b/end frees folder:/real/x"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
