package build

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
