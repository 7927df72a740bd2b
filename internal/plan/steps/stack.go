package steps

import (
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/state"
)

// setup records in the state that the run started, before anything of it
// changes the world: the stack, the run, an incomplete status, and for a
// deploy the locked parameters.
func (rt *Runtime) setup(s plan.Setup) plan.Result {
	if s.Elaborate != "" {
		if err := rt.writeElaborated(s.Elaborate); err != nil {
			return plan.Fail(err)
		}
	}
	rt.Recorder.UpdateStack(func(doc *state.State) {
		doc.Stack = rt.Res.Stack.Meta.Name
		doc.LastRun = rt.RunID
		doc.Status = state.StatusIncomplete
		if rt.Plan.Verb == plan.VerbDeploy {
			doc.DeploymentID = rt.Locked.DeploymentID
			doc.Parameters = rt.Locked.Map()
			doc.SecretParameters = rt.Locked.SecretNames()
		}
	})
	if err := rt.Recorder.Flush(); err != nil {
		return plan.Fail(fmt.Errorf("cannot record the state: %w", err))
	}
	return plan.Ok()
}

// finalize records how the run left the stack: its status, what its
// components provide, and after a deploy its outputs, and waits until the
// state is on disk. Outputs it cannot record are warnings. The status is
// the components' unless the post-flight (post-teardown) group did not
// end well: a stack whose ready conditions failed is not deployed.
func (rt *Runtime) finalize(env plan.Env, n *plan.Node) plan.Result {
	flightFailed := false
	for _, id := range n.Inputs { // the post-flight group's end
		if r := env.Result(id); r.Status == plan.Failed || r.Status == plan.Skipped && !r.Soft() {
			flightFailed = true
		}
	}
	var warnings []string
	rt.Recorder.UpdateStack(func(s *state.State) {
		s.Provides = map[string][]string{}
		statuses := map[string]int{}
		for name, c := range s.Components {
			statuses[c.Status]++
			if c.Status == state.StatusDeployed {
				for _, cap := range c.Provides {
					s.Provides[cap] = append(s.Provides[cap], name)
				}
			}
		}
		for _, v := range s.Provides {
			sort.Strings(v)
		}
		switch {
		case statuses[state.StatusFailed] > 0 || flightFailed:
			s.Status = state.StatusFailed
		case statuses[state.StatusIncomplete] > 0 || rt.unrecorded(s) != "":
			s.Status = state.StatusIncomplete
		case statuses[state.StatusDeployed] > 0 && rt.mandatoryDown(s) != "":
			// Some of it is deployed, not all it must have (a deploy of
			// a few components, an undeploy of some): as the Hub CLI
			// records it.
			s.Status = state.StatusIncomplete
		case statuses[state.StatusDeployed] > 0:
			s.Status = state.StatusDeployed
		default:
			s.Status = state.StatusUndeployed
		}
		switch {
		case rt.Plan.Verb == plan.VerbDeploy:
			s.Outputs, s.SecretOutputs, warnings = rt.stackOutputs(rt.Outputs)
		case s.Status == state.StatusUndeployed:
			s.Outputs, s.SecretOutputs = nil, nil
		case rt.Plan.Verb == plan.VerbUndeploy:
			// Those of the components this run took down stay out (one
			// whose undeploy failed may well be up; one undeployed before
			// has no outputs to read).
			down := func(c string) bool { rec := s.Components[c]; return rec == nil || rec.Status == state.StatusUndeployed }
			s.Outputs, s.SecretOutputs, _ = rt.stackOutputs(rt.Outputs.Without(down))
		}
	})
	for _, w := range warnings {
		env.Logf("warning: %s", w)
	}
	// On disk before anything after the run (the installation handler's
	// finalize may carry the state away).
	if err := rt.Recorder.Flush(); err != nil {
		return plan.Fail(fmt.Errorf("cannot record the state: %w", err))
	}
	return plan.Ok()
}

// mandatoryDown names a mandatory component of the stack that the state
// does not record deployed (or skipped by its last run: a component its
// conditions leave out is not missing), "" when there is none. Orphans do
// not count; a partial stack cannot tell.
func (rt *Runtime) mandatoryDown(s *state.State) string {
	if rt.Res.Partial {
		return ""
	}
	for _, c := range rt.Res.Components {
		name := c.Meta.Name
		if !build.IsMandatory(rt.Res.Stack, name) {
			continue
		}
		if rec := s.Components[name]; rec == nil || rec.Status != state.StatusDeployed && rec.Status != state.StatusSkipped {
			return name
		}
	}
	return ""
}

// unrecorded names a component this deploy was to deploy that has no
// record in the state, "" when each has one: every component a deploy
// runs, fails, skips or finds unchanged is recorded, so one without a
// record is one whose steps failed before they could record anything (on
// a worker that could not reach the state), and the stack is not deployed.
func (rt *Runtime) unrecorded(s *state.State) string {
	if rt.Plan.Verb != plan.VerbDeploy {
		return ""
	}
	for name, c := range rt.Plan.Components {
		if c.Verb == plan.VerbDeploy && !c.ReadOnly && s.Components[name] == nil {
			return name
		}
	}
	return ""
}

// stackOutputs evaluates the stack's declared outputs with the outputs
// known; outputs of components that did not run stay out.
func (rt *Runtime) stackOutputs(known *params.OutputIndex) (map[string]string, []string, []string) {
	out := map[string]string{}
	var secrets, warnings []string
	for _, o := range rt.Res.Stack.Outputs {
		// An output that reads a secret is secret, secret: false or not.
		r, readSecret := params.StackSecretTracking(rt.Locked, known, rt.Order)
		var v string
		var err error
		if comp, name, ok := strings.Cut(o.Name, ":"); ok && o.Value == "" {
			v, err = r.Output(comp, name)
		} else if o.Value != "" {
			v, err = params.Expand(o.Value, r)
		} else {
			v, err = r.Lookup(o.Name)
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("stack output %s not recorded: %v", o.Name, err))
			continue
		}
		out[o.Name] = v
		if o.IsSecret() || readSecret() || manifest.LooksSecret(o.Name) {
			secrets = append(secrets, o.Name)
			rt.Masker.Add(v)
		}
	}
	sort.Strings(secrets)
	if len(out) == 0 {
		return nil, nil, warnings
	}
	return out, secrets, warnings
}

// tools checks that the tools the implementations need are on PATH.
func tools(s plan.Tools) plan.Result {
	var missing []string
	for _, t := range s.Tools {
		if _, err := exec.LookPath(t); err != nil {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return plan.Fail(fmt.Errorf("not on PATH: %s", strings.Join(missing, ", ")))
	}
	return plan.Ok()
}

// clean removes the generated files of the components that are now
// undeployed (deleting .gantry/gen is always safe).
func (rt *Runtime) clean(s plan.Clean) plan.Result {
	if rt.Recorder == nil {
		return plan.Ok()
	}
	var done []string
	rt.Recorder.View(func(st *state.State) {
		for _, name := range s.Components {
			if c, ok := st.Components[name]; ok && c.Status == state.StatusUndeployed {
				done = append(done, name)
			}
		}
	})
	for _, name := range done {
		if !state.ValidComponentName(name) {
			// The state's reader refuses such a name: never remove a
			// folder outside the workspace for one.
			return plan.Fail(fmt.Errorf("internal error: the component name %q names no folder below %s", name, rt.Dirs.GenDir("")))
		}
		if err := os.RemoveAll(rt.Dirs.GenDir(name)); err != nil {
			return plan.Fail(err)
		}
	}
	return plan.Ok()
}
