package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plugin"
	"github.com/gantry-dev/gantry/internal/state"
)

// engine carries out the stages of seed 004 for the objects of a source:
// the kubernetes plugin's manifests, or the helm plugin's rendered charts.
// Nothing in it knows where the objects came from.
type engine struct{ src source }

// source is where an engine's instances get their objects.
type source interface {
	// plan reads an instance's objects as the plan sees them: its inputs
	// as written, before parameters are expanded. For a delete it returns
	// what it could alongside an error (the inputs may be gone).
	plan(req plugin.StagesRequest) (*planned, error)
	// open reads them for a run, parameters expanded, and connects to the
	// cluster.
	open(ctx context.Context, c *plugin.Call) (*opened, error)
}

// planned is what a source read of an instance for the plan.
type planned struct {
	objs []*object
	// upgrade marks a deploy that upgrades what is there: its hooks are
	// pre-upgrade and post-upgrade.
	upgrade bool
	// eitherUpgrade marks a plan that cannot tell an install from an
	// upgrade: it plans the hooks of both (Rendered.UpgradeUnknown).
	eitherUpgrade bool
	// finish labels the action's last stage, which the source's record
	// carries out (a Helm release recorded); "" for none.
	finish string
	// what names the inputs in the prepare stage's label: "the manifests",
	// "the chart".
	what string
	// deferred says why the stages are known only when the action runs;
	// the plan then has one stage (stageAll) for them.
	deferred string
	// namespace is the release namespace, where objects that name none
	// go, when the config says it without parameters; "" when only the
	// deploy knows it.
	namespace string
	// rendered marks objects a source rendered (a chart): the plan's
	// render may name them otherwise than the run's (the release's name
	// and namespace), so the plan does not tell what prune deletes.
	rendered bool
}

// opened is an instance read for a run.
type opened struct {
	planned
	cl      *cluster
	timeout time.Duration
	// record is the source's own record of the action; nil for none.
	record Record
	// helm is the Helm release the instance deploys; nil for none.
	helm *HelmRelease
}

// stagePrepare is the first stage of every action: it reads the inputs,
// expands them and checks them against the cluster before anything changes.
const stagePrepare = "prepare"

// stageAll runs every stage after prepare, in order, for an action whose
// stages the plan could not know.
const stageAll = "all"

// stageFinish is the last stage of an action whose source keeps a record
// of its own.
const stageFinish = "finish"

// claimer is a source whose instances claim what no two components of a
// stack deploy (plugin.Claimer).
type claimer interface {
	claim(req plugin.StagesRequest) string
}

// Claim is what the source says the instance's deploy claims; "" for a
// source without claims.
func (e engine) Claim(req plugin.StagesRequest) string {
	if c, ok := e.src.(claimer); ok {
		return c.claim(req)
	}
	return ""
}

// Actions is nil: the engine serves plugin lists only.
func (engine) Actions() []string { return nil }

// Validate refuses call and probe steps.
func (engine) Validate(string, map[string]any) error {
	return errors.New("this plugin serves plugin lists only")
}

// Run is never called: the plan runs the stages.
func (engine) Run(context.Context, *plugin.Call) error {
	return errors.New("internal error: the plugin runs in stages, not as one step")
}

// InputRefs are the references an instance's inputs hold
// (plugin.Referencing), for a source whose inputs are files of the
// component (manifests, a kustomization); nil for one that renders them
// (a Helm chart: its values files are the component's templates).
func (e engine) InputRefs(req plugin.StagesRequest) []params.Part {
	if r, ok := e.src.(interface {
		refs(plugin.StagesRequest) []params.Part
	}); ok {
		return r.refs(req)
	}
	return nil
}

// Stages plans an action from the inputs as they are before parameters
// are expanded: which hooks, weight groups and CRDs there are does not
// depend on parameters (prepare checks that it did not).
func (e engine) Stages(req plugin.StagesRequest) ([]plugin.Stage, error) {
	if req.Action != plugin.ActionDeploy && req.Action != plugin.ActionDelete {
		return nil, nil // nothing to prepare or clean up before the lists run
	}
	p, err := e.src.plan(req)
	if err != nil {
		if req.Action != plugin.ActionDelete || p == nil {
			return nil, err
		}
		// What was deployed is deleted from the state's record even when
		// the inputs are gone; only their delete hooks are lost (prepare
		// says so).
		p.objs = nil
	}
	if p.deferred != "" {
		out := []plugin.Stage{{ID: stagePrepare, Label: "render and check with the cluster"},
			{ID: stageAll, Label: "deploy in the stages found when it runs (" + p.deferred + ")"}}
		if req.Action == plugin.ActionDelete {
			out[0].Label = fmt.Sprintf("read what was deployed (%s)", objectCount(len(recordedResources(req.Recorded))))
			out[1].Label = "delete in the stages found when it runs (" + p.deferred + ")"
		}
		if p.finish != "" {
			out = append(out, plugin.Stage{ID: stageFinish, Label: p.finish})
		}
		return out, nil
	}
	sts, count := stagesOf(req.Action, p, recordedResources(req.Recorded))
	what := p.what
	if what == "" {
		what = "the manifests"
	}
	prepare := "read " + what + " and check them with the cluster"
	if req.Action == plugin.ActionDelete {
		prepare = "read what was deployed"
		count = len(recordedResources(req.Recorded))
	}
	out := []plugin.Stage{{ID: stagePrepare, Label: fmt.Sprintf("%s (%s)", prepare, objectCount(count))}}
	for _, st := range sts {
		ps := plugin.Stage{ID: st.ID, Label: st.Label}
		for _, o := range st.Objects {
			ps.Objects = append(ps.Objects, o.ref())
		}
		if st.ID == stagePrune && !p.rendered {
			ps.Label, ps.Objects = pruneLabel(vanished(p.objs, recordedResources(req.Recorded), p.namespace))
		}
		out = append(out, ps)
	}
	return out, nil
}

// vanished are the recorded resources no object of the manifests (as
// written, before parameters are expanded) can be: what prune will delete
// unless it finds them another's (owner.go). An object whose name or
// namespace holds a reference may be any recorded one of its kind, and one
// without a namespace one of its kind and name in the release namespace
// (releaseNS, when a literal of the config says it) or cluster-scoped, or
// any of its kind and name when only the deploy knows the release
// namespace: the list errs on the side of leaving out. Kept and adopted
// resources are left out, prune only forgets them.
func vanished(objs []*object, recorded []state.Resource, releaseNS string) []state.Resource {
	var out []state.Resource
	for _, res := range recorded {
		if res.Keep || res.Adopted {
			continue
		}
		gk := gvkOf(res).GroupKind()
		found := false
		for _, o := range objs {
			if o.u.GroupVersionKind().GroupKind() != gk {
				continue
			}
			name, ns := o.u.GetName(), o.u.GetNamespace()
			inNS := ns == res.Namespace || HasRef(ns) ||
				ns == "" && (releaseNS == "" || res.Namespace == "" || res.Namespace == releaseNS)
			if (name == res.Name || HasRef(name)) && inNS {
				found = true
				break
			}
		}
		if !found {
			out = append(out, res)
		}
	}
	return out
}

// pruneLabel is the prune stage's label and objects in a plan: which
// recorded objects it deletes (the first few in the label, all in the
// objects); the label as it always was when there are none.
func pruneLabel(stale []state.Resource) (string, []string) {
	if len(stale) == 0 {
		return "prune vanished objects", nil
	}
	refs := make([]string, len(stale))
	for i, res := range stale {
		refs[i] = resourceText(res)
	}
	sort.Strings(refs)
	const shown = 5
	text := strings.Join(refs[:min(shown, len(refs))], ", ")
	if len(refs) > shown {
		text += fmt.Sprintf(" and %d more", len(refs)-shown)
	}
	return "prune vanished objects: delete " + text, refs
}

// stagesOf lists the stages of an action after prepare, and how many
// objects the action deploys; recorded is what the state records the
// instance created (what a delete deletes).
func stagesOf(action string, p *planned, recorded []state.Resource) ([]stage, int) {
	var sts []stage
	if action == plugin.ActionDelete {
		sts = deleteStages(p.objs, recorded)
	} else {
		sts = deployStages(p.objs, p.upgrade, p.eitherUpgrade)
	}
	if p.finish != "" {
		sts = append(sts, stage{ID: stageFinish, Label: p.finish})
	}
	return sts, len(p.objs)
}

// RunStage carries out a stage; prepare hands the release to the others.
// When a stage fails, the source's record is told.
func (e engine) RunStage(ctx context.Context, c *plugin.Call, st plugin.Stage, prepared any) (any, error) {
	if st.ID == stagePrepare {
		return e.prepare(ctx, c)
	}
	r, ok := prepared.(*release)
	if !ok || r == nil {
		return nil, fmt.Errorf("internal error: stage %s ran without its prepare stage", st.ID)
	}
	err := r.run(ctx, c, st.ID)
	// Outputs are read after the record is finished: what was deployed
	// stays deployed when one cannot be read.
	if err != nil && r.rec != nil && st.ID != plugin.StageOutputs {
		// The record says the action failed even when the run is being
		// cancelled: that is when people look at it.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if rerr := r.rec.Fail(fctx, err); rerr != nil {
			r.logf("warning: %v", rerr)
		}
	}
	return nil, err
}
