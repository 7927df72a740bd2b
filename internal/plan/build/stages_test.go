package build

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plugin"
)

// stagedFake is a staged plugin for builder tests: its stages come from
// the facts, as the kubernetes plugin's do.
type stagedFake struct{}

func (stagedFake) Actions() []string                                   { return nil }
func (stagedFake) Validate(string, map[string]any) error               { return errors.New("lists only") }
func (stagedFake) Run(context.Context, *plugin.Call) error             { return errors.New("staged") }
func (stagedFake) Stages(plugin.StagesRequest) ([]plugin.Stage, error) { return nil, nil }
func (stagedFake) RunStage(context.Context, *plugin.Call, plugin.Stage, any) (any, error) {
	return nil, nil
}

func init() { plugin.Register("staged-fake", stagedFake{}, plugin.ForLists) }

// TestStagesBecomeSteps: an entry of a staged plugin is one step per stage,
// in a chain; every stage after the first reads the first (prepare), and
// the list goes on after the last.
func TestStagesBecomeSteps(t *testing.T) {
	w := newWorld(comp("app", entry("staged-fake"), entry("echo", "after")))
	w.facts.Plugins[PluginKey{"/src/app", "staged-fake"}] = PluginSource{Source: plan.SourceBuiltin}
	spec := plugin.Specs(w.res.Components[0].Plugins)[0]
	w.facts.Stages = map[StagesKey]StagesFact{StagesKeyOf("/src/app", plugin.ActionDeploy, spec, nil): {Stages: []plugin.Stage{
		{ID: "prepare", Label: "read"}, {ID: "crds", Label: "apply CRDs", Objects: []string{"CustomResourceDefinition/a"}}, {ID: "group:0", Label: "apply weight group 0"},
	}}}
	p := w.mustBuild(t, Options{Verb: plan.VerbDeploy})
	if diff := cmp.Diff([]string{"deploy staged-fake: read", "deploy staged-fake: apply CRDs", "deploy staged-fake: apply weight group 0", "deploy echo after"}, entryOrder(p)); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	prepare, crds, group := "app/deploy/plugins/0/prepare", "app/deploy/plugins/0/crds", "app/deploy/plugins/0/group:0"
	if !p.Precedes(prepare, crds) || !p.Precedes(crds, group) || !p.Precedes(group, "app/deploy/plugins/1") {
		t.Error("stages should run one after the other, before the next entry")
	}
	n := p.Node(crds)
	if n == nil || n.Kind != plan.KindStage {
		t.Fatalf("crds step: %+v", n)
	}
	if diff := cmp.Diff([]string{"app/begin", "app/deploy", prepare}, n.Inputs); diff != "" {
		t.Errorf("inputs (-want +got):\n%s", diff)
	}
	if e := n.Spec.(plan.Entry); e.Stage != "crds" || !cmp.Equal(e.Objects, []string{"CustomResourceDefinition/a"}) {
		t.Errorf("spec: %+v", e)
	}
	if rec := p.Node("app/deploy/record"); rec == nil || !strings.Contains(strings.Join(rec.Inputs, " "), group) {
		t.Errorf("the record step should read every stage: %+v", rec)
	}
}

// TestStagesErrors: stages the plugin could not plan are the input's
// error; stages nobody gathered are gantry's.
func TestStagesErrors(t *testing.T) {
	w := newWorld(comp("app", entry("staged-fake")))
	w.facts.Plugins[PluginKey{"/src/app", "staged-fake"}] = PluginSource{Source: plan.SourceBuiltin}
	_, diags := w.build(t, Options{Verb: plan.VerbDeploy})
	if !diags.HasErrors() || !strings.Contains(diags.Err().Error(), "internal error: the plan needs a fact that was not gathered: the stages of deploy of staged-fake in app") {
		t.Errorf("missing fact: %v", diags)
	}
	spec := plugin.Specs(w.res.Components[0].Plugins)[0]
	w.facts.Stages = map[StagesKey]StagesFact{StagesKeyOf("/src/app", plugin.ActionDeploy, spec, nil): {Err: "app.yaml:3:1: Job/x: bad weight"}}
	_, diags = w.build(t, Options{Verb: plan.VerbDeploy})
	if !diags.HasErrors() || !strings.Contains(diags.Err().Error(), "component app: plugin staged-fake: app.yaml:3:1: Job/x: bad weight") {
		t.Errorf("invalid input: %v", diags)
	}
}

// TestObjectOutputsStage: a component's fromObject outputs are read by the
// last staged instance of its deploy, in a stage after the whole list (its
// objects may come from any branch of a parallel); the instance's first
// stage knows of it. Undeploy reads none; a component without a staged
// instance cannot read them.
func TestObjectOutputsStage(t *testing.T) {
	keyed := func(key string) manifest.PluginEntry {
		e := entry("staged-fake")
		e.Key = key
		return e
	}
	c := comp("app", keyed("a"), control("parallel", keyed("b"), entry("echo", "x")), entry("echo", "after"))
	c.Outputs = []manifest.Output{{Name: "host", FromObject: &manifest.ObjectRef{Kind: "Service", Name: "web", Path: ".spec.clusterIP"}},
		{Name: "plain", Value: "x"},
		{Name: "pw", FromObject: &manifest.ObjectRef{Kind: "Secret", Name: "db", Namespace: "data", Path: ".data.pw"}}}
	w := newWorld(c)
	w.facts.Plugins[PluginKey{"/src/app", "staged-fake"}] = PluginSource{Source: plan.SourceBuiltin}
	w.facts.Stages = map[StagesKey]StagesFact{}
	for _, spec := range plugin.Keyed(plugin.Specs(c.Plugins)) {
		for _, action := range []string{plugin.ActionDeploy, plugin.ActionDelete} {
			w.facts.Stages[StagesKeyOf("/src/app", action, spec, nil)] = StagesFact{Stages: []plugin.Stage{{ID: "prepare", Label: "read"}, {ID: "group:0", Label: "apply"}}}
		}
	}
	p := w.mustBuild(t, Options{Verb: plan.VerbDeploy})
	outputs := "app/deploy/plugins/1.0/outputs"
	n := p.Node(outputs)
	if n == nil {
		t.Fatalf("no outputs stage on the last staged instance; entries: %v", entryOrder(p))
	}
	if p.Node("app/deploy/plugins/0/outputs") != nil {
		t.Error("only the last staged instance reads outputs")
	}
	e := n.Spec.(plan.Entry)
	if diff := cmp.Diff([]string{"Service/web", "data/Secret/db"}, e.Objects); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	if n.Label != "deploy staged-fake (b): read outputs host, pw from the cluster" {
		t.Errorf("label %q", n.Label)
	}
	for _, before := range []string{"app/deploy/plugins/0/group:0", "app/deploy/plugins/1.0/group:0", "app/deploy/plugins/1.1", "app/deploy/plugins/2"} {
		if !p.Precedes(before, outputs) {
			t.Errorf("the outputs stage should run after the whole list, after %s", before)
		}
	}
	if !cmp.Equal(n.Inputs, []string{"app/begin", "app/deploy", "app/deploy/plugins/1.0/prepare"}) {
		t.Errorf("the outputs stage should read the reader's prepare: %v", n.Inputs)
	}
	if first := p.Node("app/deploy/plugins/1.0/prepare").Spec.(plan.Entry); !cmp.Equal(first.Stages, []string{"group:0", "outputs"}) {
		t.Errorf("the first stage should list the outputs stage: %v", first.Stages)
	}
	if rec := p.Node("app/deploy/record"); !strings.Contains(strings.Join(rec.Inputs, " "), outputs) {
		t.Errorf("the record step should read the outputs stage: %v", rec.Inputs)
	}

	// Nothing is read on undeploy.
	w.before = deployedState("app")
	p = w.mustBuild(t, Options{Verb: plan.VerbUndeploy})
	if !strings.Contains(strings.Join(entryOrder(p), "|"), "delete staged-fake (b): apply") {
		t.Fatalf("undeploy should delete the instances in stages: %v", entryOrder(p))
	}
	for _, n := range p.Nodes {
		if strings.HasSuffix(n.ID, "/outputs") {
			t.Errorf("undeploy reads outputs: %s", n.ID)
		}
	}

	// A component made by its Makefile has nothing to read them with.
	mk := comp("mk")
	mk.Outputs = c.Outputs
	_, diags := newWorld(mk).build(t, Options{Verb: plan.VerbDeploy})
	if !diags.HasErrors() || !strings.Contains(diags.Err().Error(), "outputs[0].fromObject: component mk: output host reads Service/web from the cluster, but nothing in the component deploys to a cluster") ||
		!strings.Contains(diags.Err().Error(), "outputs[2].fromObject: component mk: output pw") {
		t.Errorf("diags: %v", diags)
	}
}

// TestStageObjectsMasked: a stage's objects are masked as its label is:
// the prune stage's names come from the state, expanded, and one may hold
// a secret parameter's value.
func TestStageObjectsMasked(t *testing.T) {
	w := newWorld(comp("app", entry("staged-fake")))
	w.facts.Plugins[PluginKey{"/src/app", "staged-fake"}] = PluginSource{Source: plan.SourceBuiltin}
	spec := plugin.Specs(w.res.Components[0].Plugins)[0]
	w.facts.Stages = map[StagesKey]StagesFact{StagesKeyOf("/src/app", plugin.ActionDeploy, spec, nil): {Stages: []plugin.Stage{
		{ID: "prepare", Label: "read"}, {ID: "prune", Label: "prune vanished objects: delete Secret/web/s3cret-db", Objects: []string{"Secret/web/s3cret-db"}},
	}}}
	g, diags := BuildGraph(w.res)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	locked, diags := params.Lock(params.LockInput{Stack: w.res.Stack, Env: func(string) (string, bool) { return "", false }, DeploymentID: "d"})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	mask := func(s string) string { return strings.ReplaceAll(s, "s3cret", "***") }
	p, diags := Build(&Input{Res: w.res, Graph: g, Before: w.before, Locked: locked, Facts: w.facts, StateDir: "/src", Options: Options{Verb: plan.VerbDeploy}, Mask: mask})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	n := p.Node("app/deploy/plugins/0/prune")
	if n == nil {
		t.Fatalf("no prune stage: %v", entryOrder(p))
	}
	if e := n.Spec.(plan.Entry); !cmp.Equal(e.Objects, []string{"Secret/web/***-db"}) || strings.Contains(n.Label, "s3cret") {
		t.Errorf("objects %v, label %q: the secret shows", e.Objects, n.Label)
	}
}
