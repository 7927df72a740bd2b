package steps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/lines"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/plugin"
	"github.com/gantry-dev/gantry/internal/secret"
	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/workspace"
)

// fakeEnv is a step's environment for tests: it keeps the lines, answers
// prompts from a list, and gives the results of inputs from a map.
type fakeEnv struct {
	mu          sync.Mutex
	lines       []string
	answers     []string
	interactive bool
	yes         bool
	results     map[string]plan.Result
	notes       []plan.Note
}

func (e *fakeEnv) Stream() io.Writer {
	return lines.NewWriter(func(l string) { e.Logf("%s", l) })
}
func (e *fakeEnv) Logf(format string, args ...any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lines = append(e.lines, fmt.Sprintf(format, args...))
}
func (e *fakeEnv) Pause(fn func() error) error   { return fn() }
func (e *fakeEnv) Outside(fn func() error) error { return fn() }
func (e *fakeEnv) Interactive() bool             { return e.interactive }
func (e *fakeEnv) Ask(q string) (string, error) {
	e.Logf("%s", q)
	if len(e.answers) == 0 {
		return "", errors.New("no answer")
	}
	a := e.answers[0]
	e.answers = e.answers[1:]
	return a, nil
}
func (e *fakeEnv) Yes() bool        { return e.yes }
func (e *fakeEnv) RunID() string    { return "run-1" }
func (e *fakeEnv) Note(n plan.Note) { e.notes = append(e.notes, n) }
func (e *fakeEnv) Result(id string) plan.Result {
	r, ok := e.results[id]
	if !ok {
		panic("not an input: " + id)
	}
	return r
}

func TestGate(t *testing.T) {
	tests := []struct {
		name        string
		interactive bool
		yes         bool
		answer      string
		want        plan.Status
		line        string
	}{
		{"yes approves", false, true, "", plan.OK, `gate "ship?" approved by --yes`},
		{"no terminal fails", false, false, "", plan.Failed, ""},
		{"y approves", true, false, "y", plan.OK, `gate "ship?" approved`},
		{"YES approves", true, false, " YES ", plan.OK, `gate "ship?" approved`},
		{"yep does not", true, false, "yep", plan.Failed, ""},
		{"n refuses", true, false, "n", plan.Failed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := &fakeEnv{interactive: tt.interactive, yes: tt.yes, answers: []string{tt.answer}}
			r := gate(env, "ship?")
			if r.Status != tt.want {
				t.Fatalf("status %v, want %v (%s)", r.Status, tt.want, r.Reason)
			}
			if tt.line != "" && !contains(env.lines, tt.line) {
				t.Errorf("lines %q lack %q", env.lines, tt.line)
			}
			if !tt.interactive && !tt.yes && !strings.Contains(r.Reason, "pass --yes") {
				t.Errorf("the failure should say how to approve: %s", r.Reason)
			}
		})
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func TestOnFail(t *testing.T) {
	failed := plan.Fail(errors.New("boom"))
	tests := []struct {
		onFail  []string
		yes     bool
		want    plan.Status
		warning bool
		info    bool
		abort   bool
	}{
		{nil, false, plan.Failed, false, false, false},
		{[]string{"warn"}, false, plan.Failed, false, false, false},
		{[]string{"next"}, false, plan.OK, false, true, false},
		{[]string{"warn", "next"}, false, plan.OK, true, false, false},
		{[]string{"info", "next"}, false, plan.OK, false, true, false},
		{[]string{"pause"}, false, plan.Failed, false, false, true},
		{[]string{"pause", "next"}, true, plan.OK, true, false, false},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.onFail, ","), func(t *testing.T) {
			r := onFail(failed, tt.onFail, "step", &fakeEnv{yes: tt.yes})
			if r.Status != tt.want || (r.Warning != "") != tt.warning || (r.Info != "") != tt.info || r.Abort != tt.abort {
				t.Errorf("got %+v", r)
			}
		})
	}
}

// testRuntime is the world of a stack of one component "app" in dir, with a
// state recorded at dir/hub.yaml.state.
func testRuntime(t *testing.T, dir string, info *plan.Component) *Runtime {
	t.Helper()
	res := &elaborate.Result{Stack: &manifest.Stack{Meta: manifest.Meta{Name: "s"}}, Dir: dir,
		Components: []*manifest.Component{{Meta: manifest.ComponentMeta{Name: info.Name}}}}
	p := plan.New("s", info.Verb)
	p.Components[info.Name] = info
	statePath := filepath.Join(dir, "hub.yaml.state")
	rt := &Runtime{Plan: p, Res: res, Order: []string{info.Name}, Locked: params.FromState("s", "d", nil), Outputs: params.NewOutputIndex([]string{info.Name}),
		Masker: secret.NewMasker(), Provides: NewCapabilities(), Dirs: workspace.For(statePath), RunID: "run-1", StatePath: statePath,
		StackDir: dir, Now: func() time.Time { return time.Unix(100, 0) }}
	rt.Recorder = state.NewRecorder(statePath, state.New("s"))
	t.Cleanup(func() { rt.Recorder.Close() })
	return rt
}

// TestEndSettlesTheComponent: end reads how the component's steps ended,
// records it, and passes the outcome on.
func TestEndSettlesTheComponent(t *testing.T) {
	tests := []struct {
		name    string
		results []plan.Result
		want    plan.Result
		status  string
		reason  string
	}{
		{"all ok", []plan.Result{plan.Ok(), plan.Ok()}, plan.Ok(), state.StatusDeployed, ""},
		{"a step failed", []plan.Result{plan.Ok(), plan.Fail(errors.New("boom\nmore")), plan.Skip(plan.CauseUpstream, "step x failed")},
			plan.Skip(plan.CauseUpstream, "app failed"), state.StatusFailed, "boom"},
		{"skipped by design", []plan.Result{plan.Skip(plan.CauseByDesign, "requires vault"), plan.Skip(plan.CauseByDesign, "requires vault")},
			plan.Skip(plan.CauseByDesign, "requires vault"), state.StatusSkipped, "requires vault"},
		{"unchanged leaves the record alone", []plan.Result{plan.Skip(plan.CauseUnchanged, "unchanged")},
			plan.Skip(plan.CauseUnchanged, "unchanged"), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := testRuntime(t, t.TempDir(), &plan.Component{Name: "app", Verb: plan.VerbDeploy})
			env := &fakeEnv{results: map[string]plan.Result{}}
			n := &plan.Node{ID: "app/end"}
			for i, r := range tt.results {
				id := fmt.Sprintf("app/s%d", i)
				n.Inputs = append(n.Inputs, id)
				env.results[id] = r
			}
			got := rt.end(env, n, plan.End{Component: "app"})
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b error) bool { return (a == nil) == (b == nil) })); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			rec := rt.Recorder.Snapshot().Components["app"]
			switch {
			case tt.status == "" && rec != nil:
				t.Errorf("recorded %+v, want nothing", rec)
			case tt.status != "" && (rec == nil || rec.Status != tt.status || rec.Reason != tt.reason):
				t.Errorf("recorded %+v, want %s (%s)", rec, tt.status, tt.reason)
			}
		})
	}
}

// TestSkipOfUndeployedRecord: a deploy that skips a component an earlier
// undeploy took down records the skip with its own verb and no times; the
// undeploy's, kept beside the skip's reason, told of a run that did not skip it.
func TestSkipOfUndeployedRecord(t *testing.T) {
	rt := testRuntime(t, t.TempDir(), &plan.Component{Name: "app", Verb: plan.VerbDeploy})
	undeployed := time.Unix(50, 0).UTC()
	rt.Recorder.UpdateComponent("app", func(c *state.Component) {
		c.Status, c.Verb, c.Started, c.Finished, c.LastRun = state.StatusUndeployed, plan.VerbUndeploy, undeployed, undeployed.Add(time.Second), "run-0"
	})
	env := &fakeEnv{results: map[string]plan.Result{"app/s0": plan.Skip(plan.CauseUpstream, "db failed")}}
	rt.end(env, &plan.Node{ID: "app/end", Inputs: []string{"app/s0"}}, plan.End{Component: "app"})
	got := rt.Recorder.Snapshot().Components["app"]
	want := state.Component{Status: state.StatusSkipped, Reason: "db failed", Verb: plan.VerbDeploy, LastRun: "run-1"}
	if got == nil || got.Status != want.Status || got.Reason != want.Reason || got.Verb != want.Verb || got.LastRun != want.LastRun ||
		!got.Started.IsZero() || !got.Finished.IsZero() {
		t.Errorf("recorded %+v, want %+v", got, want)
	}
}

// TestEnvironmentCapabilityFoundLater: a capability of the environment is
// looked for when asked about, so a tool an installation handler put on PATH
// after the run started counts.
func TestEnvironmentCapabilityFoundLater(t *testing.T) {
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	caps := NewCapabilities("db")
	if known, _ := caps.Has("vault"); known {
		t.Fatal("vault found without its tool")
	}
	if err := os.WriteFile(filepath.Join(bin, "vault"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if known, learned := caps.Has("vault"); !known || !learned || caps.String() != "db vault" {
		t.Errorf("after the tool appeared: %v %v %q", known, learned, caps.String())
	}
	if known, learned := caps.Has("vault"); !known || learned {
		t.Errorf("asked again: %v %v", known, learned)
	}
	if known, _ := caps.Has("postgres"); known {
		t.Error("a capability that is not the environment's is never looked for")
	}
}

// TestProbeAttemptsShow: each failed attempt of a wait is a line, and a wait
// that gives up names the last error. The probe is a connection refused on
// loopback, which fails at once: the timeout (the subject) is generous.
func TestProbeAttemptsShow(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	rt := &Runtime{}
	env := &fakeEnv{}
	args := map[string]any{"address": addr, "interval": 0.05}
	r := rt.probe(context.Background(), env, "tcp", "connect_wait", args, 2*time.Second, t.TempDir(), os.Environ(), io.Discard)
	if r.Status != plan.Failed || !strings.Contains(r.Reason, "gave up after 2s") || !strings.Contains(r.Reason, "connection refused") {
		t.Errorf("result %+v", r)
	}
	if len(env.lines) < 2 || !strings.HasPrefix(env.lines[0], "attempt 1 failed (") || !strings.HasPrefix(env.lines[1], "attempt 2 failed (") {
		t.Errorf("no attempt lines: %q", env.lines)
	}
}

// TestCapabilitiesOfUndeployedComponentsGo: what a component provides goes
// when it is undeployed, unless something else provides it too; the
// environment's and the stack's stay.
func TestCapabilitiesOfUndeployedComponentsGo(t *testing.T) {
	caps := NewCapabilities("stack-cap")
	caps.AddFor("a", "cap-a", "shared", "stack-cap")
	caps.AddFor("b", "cap-b", "shared")
	if got := caps.String(); got != "cap-a cap-b shared stack-cap" {
		t.Fatalf("all: %q", got)
	}
	caps.Remove("b")
	if got := caps.String(); got != "cap-a shared stack-cap" {
		t.Errorf("after b: %q", got)
	}
	caps.Remove("a")
	if got := caps.String(); got != "stack-cap" {
		t.Errorf("after a: %q", got)
	}
}

// TestFailureOfAnInterruption: a failure the interruption caused says so,
// without the context's own words after what failed, and keeps its cause.
func TestFailureOfAnInterruption(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := fmt.Errorf("exec run_wait: %w", context.Canceled)
	got := failure(ctx, err)
	if got.Reason != "interrupted: exec run_wait" || !errors.Is(got.Err, context.Canceled) {
		t.Errorf("failure = %q (%v)", got.Reason, got.Err)
	}
	if got := failure(context.Background(), err); got.Reason != err.Error() {
		t.Errorf("not interrupted: %q", got.Reason)
	}
}

// TestHookMarkOfAnUndeployedComponent: a deploy killed in a pre hook of a
// component an undeploy took down leaves it in flight as one that never
// started: the next undeploy has nothing to tear down (its undeploy times
// made it one whose implementation ran).
func TestHookMarkOfAnUndeployedComponent(t *testing.T) {
	for _, status := range []string{state.StatusUndeployed, state.StatusDeployed} {
		t.Run(status, func(t *testing.T) {
			rt := testRuntime(t, t.TempDir(), &plan.Component{Name: "app", Verb: plan.VerbDeploy})
			rt.Recorder.UpdateComponent("app", func(c *state.Component) {
				c.Status, c.Started, c.Finished = status, time.Unix(50, 0).UTC(), time.Unix(51, 0).UTC()
			})
			info, _ := rt.comp("app")
			if err := rt.markHooksInFlight(info); err != nil {
				t.Fatal(err)
			}
			got := rt.Recorder.Snapshot().Components["app"]
			if got.Status != state.StatusIncomplete || build.NeverRan(got) != (status == state.StatusUndeployed) {
				t.Errorf("recorded %s, started %v: never ran %v", got.Status, got.Started, build.NeverRan(got))
			}
		})
	}
}

// TestPlannedDeploys: an instance is told the deploy stages of every other
// staged instance of the plan — its own component's other instances too —
// and not its own, nor stages that apply nothing or do not deploy.
func TestPlannedDeploys(t *testing.T) {
	p := plan.New("s", plan.VerbDeploy)
	stage := func(id, comp, key, action, st string, objs ...string) {
		p.Add(&plan.Node{ID: id, Spec: plan.Entry{Component: comp, Key: key, Action: action, Stage: st, Objects: objs}})
	}
	stage("a1", "a", "k1", plugin.ActionDeploy, "group-0", "ConfigMap/ns/one")
	stage("a2", "a", "k2", plugin.ActionDeploy, "group-0", "ConfigMap/ns/two")
	stage("b1", "b", "k", plugin.ActionDeploy, "crds", "CustomResourceDefinition//w")
	stage("b2", "b", "k", plugin.ActionDeploy, "prepare")
	stage("c1", "c", "k", plugin.ActionDelete, "group-0", "ConfigMap/ns/three")
	rt := &Runtime{Plan: p}
	got := rt.plannedDeploys("a", "k1")
	want := map[string][]plugin.Stage{
		"a": {{ID: "group-0", Objects: []string{"ConfigMap/ns/two"}}},
		"b": {{ID: "crds", Objects: []string{"CustomResourceDefinition//w"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("planned (-want +got):\n%s", diff)
	}
	if got := rt.plannedDeploys("b", "k"); len(got["a"]) != 2 || got["b"] != nil {
		t.Errorf("for b: %v", got)
	}
}

// TestFinalizeStackStatus: the stack's status after a run is its
// components'; after a deploy, a component of the plan with no record at
// all (its steps failed before they could record it, on a worker that
// could not reach the state) keeps the stack from reading deployed.
func TestFinalizeStackStatus(t *testing.T) {
	tests := []struct {
		name    string
		verb    string
		records map[string]string // "app" is the plan's component
		want    string
	}{
		{"all deployed", plan.VerbDeploy, map[string]string{"app": state.StatusDeployed}, state.StatusDeployed},
		{"one failed", plan.VerbDeploy, map[string]string{"app": state.StatusFailed}, state.StatusFailed},
		{"the plan's component missing", plan.VerbDeploy, map[string]string{"other": state.StatusDeployed}, state.StatusIncomplete},
		{"an undeploy with nothing recorded: some deployed, not the stack's app", plan.VerbUndeploy, map[string]string{"other": state.StatusDeployed}, state.StatusIncomplete},
		{"the stack's app skipped by its last run", plan.VerbDeploy, map[string]string{"app": state.StatusSkipped, "other": state.StatusDeployed}, state.StatusDeployed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := testRuntime(t, t.TempDir(), &plan.Component{Name: "app", Verb: tt.verb})
			for name, status := range tt.records {
				rt.Recorder.UpdateComponent(name, func(c *state.Component) { c.Status = status })
			}
			if r := rt.finalize(&fakeEnv{}, &plan.Node{ID: "stack/finalize"}); r.Status != plan.OK {
				t.Fatalf("finalize: %+v", r)
			}
			if got := rt.Recorder.Snapshot().Status; got != tt.want {
				t.Errorf("stack status %q, want %q", got, tt.want)
			}
		})
	}
}
