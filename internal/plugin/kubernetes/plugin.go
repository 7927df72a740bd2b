package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/gantry-dev/gantry/internal/plugin"
)

func init() { plugin.Register("kubernetes", kube{}, plugin.ForLists) }

// kube is the kubernetes plugin: an entry of a plugin list, or a folder
// holding a kustomization, deployed in the stages of seed 004.
type kube struct{}

// stagePrepare is the first stage of every action: it reads the manifests,
// expands them and checks them against the cluster before anything changes.
const stagePrepare = "prepare"

// Actions is nil: the plugin serves plugin lists only.
func (kube) Actions() []string { return nil }

// Validate refuses call and probe steps.
func (kube) Validate(string, map[string]any) error {
	return errors.New("kubernetes serves plugin lists only")
}

// Run is never called: the plan runs the plugin's stages.
func (kube) Run(context.Context, *plugin.Call) error {
	return errors.New("internal error: the kubernetes plugin runs in stages, not as one step")
}

// Stages plans an action from the manifests as they are before parameters
// are expanded: which hooks, weight groups and CRDs there are does not
// depend on parameters (prepare checks that it did not).
func (kube) Stages(req plugin.StagesRequest) ([]plugin.Stage, error) {
	if req.Action != plugin.ActionDeploy && req.Action != plugin.ActionDelete {
		return nil, nil // nothing to prepare or clean up before the lists run
	}
	cfg, err := parseConfig(req.Entry.Config)
	if err != nil {
		return nil, err
	}
	objs, err := load(req.Dir, cfg, nil)
	if err != nil {
		if req.Action == plugin.ActionDelete {
			// What was deployed is deleted from the state's record even
			// when the manifests are gone; only their delete hooks are lost
			// (prepare says so).
			objs = nil
		} else {
			return nil, err
		}
	}
	var sts []stage
	var count int
	if req.Action == plugin.ActionDeploy {
		sts, count = deployStages(objs, upgrading(req.Recorded)), len(objs)
	} else {
		sts, count = deleteStages(objs, recordedResources(req.Recorded)), len(recordedResources(req.Recorded))
	}
	prepare := "read the manifests and check them with the cluster"
	if req.Action == plugin.ActionDelete {
		prepare = "read what was deployed"
	}
	out := []plugin.Stage{{ID: stagePrepare, Label: fmt.Sprintf("%s (%s)", prepare, objectCount(count))}}
	for _, st := range sts {
		ps := plugin.Stage{ID: st.ID, Label: st.Label}
		for _, o := range st.Objects {
			ps.Objects = append(ps.Objects, o.ref())
		}
		out = append(out, ps)
	}
	return out, nil
}

// RunStage carries out a stage; prepare hands the release to the others.
func (kube) RunStage(ctx context.Context, c *plugin.Call, st plugin.Stage, prepared any) (any, error) {
	if st.ID == stagePrepare {
		return prepare(ctx, c)
	}
	r, ok := prepared.(*release)
	if !ok || r == nil {
		return nil, fmt.Errorf("internal error: stage %s ran without its prepare stage", st.ID)
	}
	return nil, r.run(ctx, c, st.ID)
}

func init() { plugin.RegisterEnvironment("kubernetes", reachable) }

// reachable is the kubernetes capability of the environment: a kubeconfig
// (KUBECONFIG, else ~/.kube/config) whose cluster answers.
func reachable(ctx context.Context, env []string) error {
	dir, _ := os.Getwd()
	if _, err := connect(ctx, targetOf(config{}, nil, env), dir); err != nil {
		return fmt.Errorf("no kubeconfig reaches a cluster (%v)", err)
	}
	return nil
}
