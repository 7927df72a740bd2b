package steps

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/plugin"
	"github.com/gantry-dev/gantry/internal/state"
)

// begun is what a component's begin hands to its other steps: its
// parameters, expanded, and its fingerprint (deploy only).
type begun struct {
	exp         *params.Expanded
	fingerprint string
	inputs      *state.Inputs
}

// begunOf reads the data of the component's begin, an input of every step
// of the component.
func begunOf(env plan.Env, comp string) *begun {
	d, _ := env.Result(comp + "/begin").Data.(*begun)
	if d == nil {
		return &begun{}
	}
	return d
}

// ReasonUnchanged is the reason of the skips of a component that --resume
// found deployed and unchanged.
const ReasonUnchanged = "unchanged"

// begin prepares a component: a deploy checks its requirements, expands its
// parameters and decides whether it needs to run at all; an undeploy and a
// custom verb take what the state recorded.
func (rt *Runtime) begin(env plan.Env, s plan.Begin) plan.Result {
	info, err := rt.comp(s.Component)
	if err != nil {
		return plan.Fail(err)
	}
	if info.Verb != plan.VerbDeploy || info.ReadOnly {
		return rt.beginRecorded(info)
	}
	c := rt.Res.Component(info.Name)
	if res, stop := rt.checkRequirements(info.Name, c); stop {
		return res
	}
	exp, diags := params.ExpandComponent(params.ComponentInput{
		Locked:    rt.Locked,
		Component: c,
		Depends:   info.Depends,
		Outputs:   rt.Outputs,
		Provides:  rt.hubProvides().For(info.Name),
	})
	diags = append(diags, exp.EnvProblems()...)
	if diags.HasErrors() {
		var msgs []string
		for _, d := range diags.Errors() {
			msgs = append(msgs, d.String())
		}
		return plan.Fail(errors.New(strings.Join(msgs, "\n")))
	}
	for _, v := range exp.Values {
		if v.Pending != "" {
			return plan.Fail(fmt.Errorf("parameter %s needs an output of %s, which has not been deployed", v.Name, v.Pending))
		}
		if v.Secret {
			rt.Masker.Add(v.Value)
		}
	}
	rec := rt.recorded(info.Name)
	fp, inputs, err := rt.fingerprint(info, exp)
	if err != nil {
		return plan.Fail(fmt.Errorf("fingerprint: %w", err))
	}
	data := &begun{exp: exp, fingerprint: fp, inputs: inputs}
	var reads []plan.ChangeDetail
	if info.Resume && rec != nil && rec.Inputs != nil {
		// Only --resume looks at what changed: a full deploy runs it anyway.
		reads, _ = build.ReadChanges(rt.Locked.DeploymentID, rec.Inputs.Reads, exp)
	}
	if info.Resume && !info.ForceReplace && rec != nil && rec.Status == state.StatusDeployed && rec.Fingerprint == fp && len(reads) == 0 {
		rt.Provides.AddFor(info.Name, rec.Provides...)
		rt.hubProvides().Provided(info.Name, rec.Provides)
		return plan.Result{Status: plan.Skipped, Cause: plan.CauseUnchanged, Reason: ReasonUnchanged, Data: data}
	}
	res := plan.OkWith(data)
	if info.Resume && info.Action == "unchanged" && rec != nil && rec.Status == state.StatusDeployed {
		// The plan found it unchanged with what was known then, and said
		// it would look again: say what it found.
		res.Reason = "changed since the plan"
		if details := append(build.Changes(rec, exp, inputs), reads...); len(details) > 0 {
			res.Reason += ": " + strings.TrimPrefix((&plan.Change{Status: plan.ChangeChanged, Details: details}).String(), "changed: ")
		}
		env.Logf("%s", res.Reason)
	}
	return res
}

// unchanged settles a component the plan knows --resume finds unchanged
// (plan.Component.Settled), the one step of its plan: its requirements are
// checked as begin checks them, what it provides becomes known as when it
// deployed, and its record stays as its last deploy left it. A requirement
// that stops it is recorded as its end would record it.
func (rt *Runtime) unchanged(s plan.Unchanged) plan.Result {
	info, err := rt.comp(s.Component)
	if err != nil {
		return plan.Fail(err)
	}
	rec := rt.recorded(info.Name)
	if rec == nil || rec.Status != state.StatusDeployed {
		return plan.Fail(fmt.Errorf("internal error: the plan settled %s, which the state does not record deployed", info.Name))
	}
	if res, stop := rt.checkRequirements(info.Name, rt.Res.Component(info.Name)); stop {
		if res.Status == plan.Failed {
			rt.recordFailed(info, res.Reason)
		} else {
			rt.recordSkipped(info, res)
		}
		return res
	}
	rt.Provides.AddFor(info.Name, rec.Provides...)
	rt.hubProvides().Provided(info.Name, rec.Provides)
	return plan.Result{Status: plan.Skipped, Cause: plan.CauseUnchanged, Reason: ReasonUnchanged}
}

// checkRequirements applies seed 000's requirement rules at run time, when
// the capabilities provided so far (dynamic ones included) are known.
func (rt *Runtime) checkRequirements(name string, c *manifest.Component) (plan.Result, bool) {
	var dropped, depends []string
	if info := rt.Plan.Components[name]; info != nil {
		dropped, depends = info.DroppedRequires, info.Depends
	}
	if why, _ := build.UnmetCondition(rt.tuning()[name], rt.Locked, rt.Outputs, c, depends); why != "" {
		return plan.Skip(plan.CauseByDesign, why), true
	}
	for _, req := range c.Requires {
		known, learned := rt.Provides.Has(req)
		if learned {
			rt.hubProvides().AddBase(req)
		}
		if known || slices.Contains(dropped, req) {
			continue
		}
		if build.IsOptionalRequirement(rt.Res.Stack, req, name) {
			return plan.Skip(plan.CauseByDesign, fmt.Sprintf("requires %s, which nothing provides (optional requirement)", req)), true
		}
		return plan.Fail(fmt.Errorf("requires %s, which nothing provides", req)), true
	}
	return plan.Result{}, false
}

// beginRecorded prepares an undeploy, or a custom verb, from what the state
// recorded of the component.
func (rt *Runtime) beginRecorded(info *plan.Component) plan.Result {
	rec := rt.recorded(info.Name)
	if rec == nil || rec.Status == state.StatusUndeployed || rec.Status == state.StatusSkipped {
		return plan.Skip(plan.CauseByDesign, "not deployed")
	}
	if build.NeverRan(rec) && !info.ReadOnly {
		// It failed before its implementation started: nothing exists to
		// tear down, and an orphan's record can go.
		if rt.Recorder != nil {
			if info.Orphan {
				rt.Recorder.RemoveComponent(info.Name)
			} else {
				rt.Recorder.UpdateComponent(info.Name, func(c *state.Component) {
					c.Status, c.Reason, c.LastRun = state.StatusUndeployed, "never ran", rt.RunID
				})
			}
		}
		return plan.Skip(plan.CauseByDesign, build.ReasonNeverRan)
	}
	values := make([]*params.Value, len(rec.Parameters))
	for i, p := range rec.Parameters {
		values[i] = &params.Value{Name: p.Name, Value: p.Value, Env: p.Env, Secret: p.IsSecret()}
		if values[i].Secret {
			rt.Masker.Add(p.Value)
		}
	}
	exp := params.Recorded(info.Name, values, rt.Outputs, rt.Locked)
	// hub.provides is what is provided now: the state's capabilities less
	// those of the components this run undeployed already.
	exp.SetProvides(rt.Provides.String())
	return plan.OkWith(&begun{exp: exp})
}

// verb carries out a component's verb: its implementation, or for a
// component made of plugin lists, their preparation.
func (rt *Runtime) verb(ctx context.Context, env plan.Env, n *plan.Node, s plan.Verb) plan.Result {
	info, err := rt.comp(s.Component)
	if err != nil {
		return plan.Fail(err)
	}
	b := begunOf(env, info.Name)
	if info.Plugins {
		return rt.prepareLists(ctx, env, info, b)
	}
	if !info.ReadOnly {
		if err := rt.markInFlight(info, b.exp, nil, nil); err != nil {
			return plan.Fail(err)
		}
	}
	c := rt.Res.Component(info.Name)
	if err := rt.render(ctx, env, info, c, b.exp); err != nil {
		return failure(ctx, err)
	}
	var raw map[string]string
	var provides, rawSecret []string
	// A bare component (lifecycle.bare: allow) has no process: its outputs
	// come from its parameters alone.
	if info.Implementation != nil {
		// The pad is not given to the masker (one more secret per component,
		// in base64 that begins with any of 64 bytes: the masker could skip
		// hardly a byte of any line of a large run): the secrets output it
		// encrypts is masked instead (secretKeys), so a log holding the pad
		// never holds the text to decrypt with it.
		pad, padText, err := component.NewPad(padBytes(c))
		if err != nil {
			return plan.Fail(err)
		}
		stdout := newCaptureWriter(env.Stream(), rt.Masker, secretKeys(c))
		err = component.Run(ctx, component.Process{
			Args:   info.Implementation,
			Dir:    info.Dir,
			Env:    append(rt.processEnv(info, b.exp), component.PadEnv+"="+padText),
			Stdout: stdout,
			Stderr: env.Stream(),
		})
		stdout.Flush()
		if err != nil {
			return failure(ctx, err)
		}
		if err := stdout.capture.Err(); err != nil {
			return plan.Fail(err)
		}
		raw, provides = stdout.capture.Outputs(), stdout.capture.Provides()
		if text := raw[component.SecretsKey]; text != "" && info.Verb == plan.VerbDeploy {
			secrets, secretProvides, err := component.DecodeSecrets(text, pad)
			if err != nil {
				return plan.Fail(fmt.Errorf("decrypt the secrets output: %w", err))
			}
			// The text is of no use without the pad, which is gone.
			delete(raw, component.SecretsKey)
			provides = append(provides, secretProvides...)
			for k, v := range secrets {
				rt.Masker.Add(v)
				raw[k] = v
				rawSecret = append(rawSecret, k)
			}
			sort.Strings(rawSecret)
		}
	}
	if info.Verb != plan.VerbDeploy || info.ReadOnly {
		return plan.Ok()
	}
	if err := rt.recordOutputs(env, info, c, b, raw, rawSecret, provides, nil); err != nil {
		return plan.Fail(err)
	}
	return plan.Ok()
}

// padBytes is the size of the component's one-time pad (HUB_RANDOM).
func padBytes(c *manifest.Component) int {
	if c != nil && c.Lifecycle.Options != nil && c.Lifecycle.Options.Random != nil {
		return c.Lifecycle.Options.Random.Bytes
	}
	return component.DefaultPadBytes
}

// failure is the result of a process or plugin that failed; one the run's
// interruption stopped says so.
func failure(ctx context.Context, err error) plan.Result {
	if ctx.Err() != nil {
		return plan.Fail(interrupted{err: err, cause: context.Cause(ctx)})
	}
	return plan.Fail(err)
}

// interrupted is an error the run's interruption caused: "interrupted:
// exec run_wait", not "…: context canceled" after it. A run stopped for
// another reason than an interrupt (cause: another run took the state's
// lock) says that reason: "stopped (another run took the state's lock):
// exec run_wait".
type interrupted struct{ err, cause error }

func (e interrupted) Error() string {
	what := strings.TrimSuffix(e.err.Error(), ": "+context.Canceled.Error())
	if e.cause != nil && !errors.Is(e.cause, context.Canceled) {
		what = strings.TrimSuffix(what, ": "+e.cause.Error())
		return "stopped (" + e.cause.Error() + "): " + what
	}
	return "interrupted: " + what
}

func (e interrupted) Unwrap() error { return e.err }

// render renders the component's templates before its verb runs, with its
// folder locked against other runs until the component's end.
func (rt *Runtime) render(ctx context.Context, env plan.Env, info *plan.Component, c *manifest.Component, exp *params.Expanded) error {
	if c == nil || c.Templates == nil {
		return nil
	}
	if err := rt.lockFolder(ctx, env, info); err != nil {
		return err
	}
	if _, err := component.RenderFiles(info.Dir, rt.Dirs.GenDir(info.Name), c.Templates, exp, info.Templates); err != nil {
		return fmt.Errorf("render templates: %w", err)
	}
	return nil
}

// secretKeys are the raw output keys whose values are secret: a capture
// masks them as soon as it sees them. The secrets output (HUB_RANDOM's) is
// one of them.
func secretKeys(c *manifest.Component) map[string]bool {
	keys := map[string]bool{component.SecretsKey: true}
	if c == nil {
		return keys
	}
	for _, o := range c.Outputs {
		if o.IsSecret() {
			keys[o.Name] = true
			if raw := component.RawKey(o); raw != "" {
				keys[raw] = true
			}
		}
	}
	return keys
}

// recordOutputs makes the outputs a deploy produced the component's: they
// are resolved as the manifest declares them, masked where secret, known to
// the components after it, shown, and recorded with its fingerprint and its
// plugin lists.
func (rt *Runtime) recordOutputs(env plan.Env, info *plan.Component, c *manifest.Component, b *begun, raw map[string]string, directSecrets, dynamicProvides []string, lists *prepared) error {
	outputs, secret, err := component.ResolveOutputs(c, info.Dir, raw, directSecrets, b.exp)
	if err != nil {
		return err
	}
	// Sets, not lists searched: a component may print many thousands.
	isSecret := make(map[string]bool, len(secret)+len(directSecrets))
	for _, s := range secret {
		isSecret[s] = true
	}
	for _, s := range directSecrets {
		if !isSecret[s] {
			isSecret[s] = true
			secret = append(secret, s)
		}
	}
	sort.Strings(secret)
	for _, s := range secret {
		rt.Masker.Add(outputs[s])
	}
	provides := append(append([]string(nil), c.Provides...), dynamicProvides...)
	rt.Outputs.Set(info.Name, outputs, secret)
	rt.Provides.AddFor(info.Name, provides...)
	if info.Verb == plan.VerbDeploy {
		rt.hubProvides().Provided(info.Name, provides)
	}
	keys := make([]string, 0, len(outputs))
	for k := range outputs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env.Note(plan.Note{Kind: plan.NoteOutput, Name: k, Value: outputs[k], Secret: isSecret[k]})
	}
	var instances, setup []state.PluginInstance
	if lists != nil {
		instances, setup = plugin.ToRecord(lists.plugins, b.exp.Map()), plugin.ToRecord(lists.setup, b.exp.Map())
	}
	rt.Recorder.UpdateComponent(info.Name, func(rc *state.Component) {
		rc.Outputs = outputs
		rc.SecretOutputs = secret
		rc.Provides = provides
		rc.Fingerprint, rc.Inputs = b.fingerprint, b.inputs
		plugin.CarryResources(instances, rc.Plugins, rc.SetupPlugins)
		plugin.CarryResources(setup, rc.Plugins, rc.SetupPlugins)
		rc.Plugins, rc.SetupPlugins = instances, setup
		rc.SpecVersion = info.SpecVersion
	})
	return nil
}

// markInFlight records that the component is in flight. A crash must leave
// that in the state, so the mark is on disk before anything of the verb
// runs. A deploy records its parameters and, for plugin lists, the lists it
// runs with, behind the instances that left them and are not deleted yet:
// a failed or killed run loses track of nothing.
func (rt *Runtime) markInFlight(info *plan.Component, exp *params.Expanded, plugins, setup []state.PluginInstance) error {
	now := rt.Now().UTC()
	ver := rt.Recorder.UpdateComponent(info.Name, func(c *state.Component) {
		c.Status = state.StatusIncomplete
		c.Verb = info.Verb
		c.Started, c.Finished = now, time.Time{}
		c.LastRun = rt.RunID
		c.Dir = rt.RecordDir(info.Dir)
		c.Depends = info.After
		c.Order = info.Order
		c.Reason = ""
		if info.Verb == plan.VerbDeploy {
			c.Parameters = recordParams(exp)
			if info.Plugins {
				// What the instances created stays recorded until they
				// delete it, whatever the new lists say.
				plugin.CarryResources(plugins, c.Plugins, c.SetupPlugins)
				plugin.CarryResources(setup, c.Plugins, c.SetupPlugins)
				c.Plugins, c.SetupPlugins = plugins, setup
			}
		}
	})
	if err := rt.Recorder.Wait(ver); err != nil {
		return fmt.Errorf("cannot record the state before running: %w", err)
	}
	return nil
}

// markHooksInFlight records, before a lifecycle step of the component runs
// ahead of its verb (pre_component, pre_instance_create), that the
// component is in flight: a run killed in such a hook leaves it
// incomplete, and the next deploy runs it again, post steps included. It
// keeps the parameters it was last run with and leaves Started unset for a
// component that never started, or is undeployed (its implementation has
// not run since: an undeploy has nothing to do); one that did starts now.
// Once per component and run.
func (rt *Runtime) markHooksInFlight(info *plan.Component) error {
	if info.ReadOnly || rt.Recorder == nil {
		return nil
	}
	var marked bool
	rt.Recorder.View(func(st *state.State) {
		c := st.Components[info.Name]
		marked = c != nil && c.LastRun == rt.RunID && c.Status == state.StatusIncomplete
	})
	if marked {
		return nil
	}
	now := rt.Now().UTC()
	ver := rt.Recorder.UpdateComponent(info.Name, func(c *state.Component) {
		// Of one taken down (or never up), nothing stands: its undeploy
		// times must not make it one whose implementation started.
		switch {
		case c.Status == state.StatusUndeployed || c.Status == state.StatusSkipped:
			c.Started = time.Time{}
		case !c.Started.IsZero():
			c.Started = now
		}
		c.Status = state.StatusIncomplete
		c.Verb = info.Verb
		c.Finished = time.Time{}
		c.LastRun = rt.RunID
		c.Dir = rt.RecordDir(info.Dir)
		c.Depends = info.After
		c.Order = info.Order
		c.Reason = ""
	})
	if err := rt.Recorder.Wait(ver); err != nil {
		return fmt.Errorf("cannot record the state before running: %w", err)
	}
	return nil
}

func recordParams(exp *params.Expanded) []state.Parameter {
	if exp == nil {
		return nil
	}
	out := make([]state.Parameter, len(exp.Values))
	for i, v := range exp.Values {
		out[i] = state.Parameter{Name: v.Name, Value: v.Value, Env: v.Env, Secret: v.Secret && !manifest.LooksSecret(v.Name)}
	}
	return out
}

// end settles a component once its steps have ended, whatever they did: it
// records the component deployed, undeployed, failed or skipped, and hands
// the outcome on to the components that wait for it. A failure was reported
// by the step that failed; end passes it on as a skip, which names the
// component for those waiting.
func (rt *Runtime) end(env plan.Env, n *plan.Node, s plan.End) plan.Result {
	rt.unlockFolder(s.Component)
	info, err := rt.comp(s.Component)
	if err != nil {
		return plan.Fail(err)
	}
	var failed, skipped *plan.Result
	ran, notRun := "", ""
	for _, id := range n.Inputs {
		r := env.Result(id)
		switch {
		case r.Status == plan.Failed && failed == nil:
			failed = &r
		case r.Status == plan.Skipped && skipped == nil:
			skipped = &r
		}
		if in := rt.Plan.Node(id); in != nil && !in.Hidden {
			switch {
			case r.Status == plan.OK && (in.Kind == plan.KindComponent || in.Kind == plan.KindPlugin || in.Kind == plan.KindStage):
				// The verb's work ran (a probe before it changes nothing).
				ran = in.Label
			case r.Status == plan.Skipped && notRun == "":
				notRun = in.Label
			}
		}
	}
	if info.Verb == plan.VerbDeploy && (failed != nil || skipped != nil && skipped.Cause != plan.CauseUnchanged) {
		// What it provided counts for the components after it only
		// once it deployed.
		rt.hubProvides().Provided(info.Name, nil)
	}
	switch {
	case failed != nil:
		rt.recordFailed(info, failed.Reason)
		return plan.Skip(plan.CauseUpstream, info.Name+" failed")
	case skipped != nil && ran != "" && (skipped.Cause == plan.CauseInterrupted || skipped.Cause == plan.CauseStopped):
		// Part of the component ran (its deploy may have changed the
		// world) and the rest was not started: "not started" would say
		// nothing of it ran.
		reason := ran + " ran, then " + strings.TrimPrefix(skipped.Reason, "not started: ")
		if notRun != "" {
			reason += " before " + notRun
		}
		rt.recordFailed(info, reason)
		return plan.Fail(errors.New(reason))
	case skipped != nil:
		rt.recordSkipped(info, *skipped)
		return plan.Result{Status: plan.Skipped, Cause: skipped.Cause, Reason: skipped.Reason}
	}
	var exp *params.Expanded
	if slices.Contains(n.Inputs, info.Name+"/begin") {
		exp = begunOf(env, info.Name).exp
	}
	rt.recordDone(info, exp)
	return plan.Ok()
}

// recordDone marks the component deployed (or undeployed) once all its
// steps succeeded. A deploy records beside its fingerprint what its
// templates, steps and output values read outside its parameters (exp,
// nil when its begin's data is not here).
func (rt *Runtime) recordDone(info *plan.Component, exp *params.Expanded) {
	if info.ReadOnly || rt.Recorder == nil {
		return
	}
	status := state.StatusDeployed
	if info.Verb == plan.VerbUndeploy {
		status = state.StatusUndeployed
	}
	now := rt.Now().UTC()
	var reads map[string]string
	if info.Verb == plan.VerbDeploy {
		reads = build.ReadDigests(rt.Locked.DeploymentID, exp.Reads(), info.After)
	}
	rt.Recorder.UpdateComponent(info.Name, func(c *state.Component) {
		c.Status = status
		c.Finished = now
		c.Reason = ""
		if info.Verb == plan.VerbUndeploy {
			c.Outputs, c.SecretOutputs, c.Provides, c.Fingerprint, c.Inputs = nil, nil, nil, "", nil
		}
		if info.Verb == plan.VerbDeploy && c.Inputs != nil {
			in := *c.Inputs // a record's inputs are never changed in place
			in.Reads = reads
			c.Inputs = &in
		}
	})
	if info.Verb == plan.VerbUndeploy {
		rt.Outputs.Set(info.Name, nil, nil)
		rt.Provides.Remove(info.Name)
	}
}

// recordFailed marks the component failed. gantry never undeploys on its own:
// the failure path of a component updated in place stops its steps, no more.
func (rt *Runtime) recordFailed(info *plan.Component, reason string) {
	if info.ReadOnly || rt.Recorder == nil {
		return
	}
	now := rt.Now().UTC()
	rt.Recorder.UpdateComponent(info.Name, func(c *state.Component) {
		c.Status = state.StatusFailed
		c.Finished = now
		c.Reason = firstLine(rt.masked(reason))
		c.LastRun = rt.RunID
	})
}

// masked is text as the run's display shows it: a failure reason quoting a
// command line holds the values computed from secrets (an upper-cased
// password) that only this run's masker knows, and the state keeps it for
// explain, which people paste into incident channels.
func (rt *Runtime) masked(text string) string {
	if rt.Masker == nil {
		return text
	}
	return rt.Masker.Text(text)
}

// recordSkipped records why the component did not run: one never deployed
// becomes skipped; one that was keeps its status with the reason. Nothing is
// recorded of a component --resume found unchanged, or of an undeploy with
// nothing to do. A skipped record has no times and the verb of the run that
// skipped it: an undeployed one's undeploy times and verb, kept beside the
// deploy's reason, would tell of a run that did not skip it.
func (rt *Runtime) recordSkipped(info *plan.Component, r plan.Result) {
	if info.ReadOnly || rt.Recorder == nil || r.Cause == plan.CauseUnchanged || info.Verb == plan.VerbUndeploy && r.Soft() {
		return
	}
	rt.Recorder.UpdateComponent(info.Name, func(c *state.Component) {
		c.LastRun = rt.RunID
		if c.Status == "" || c.Status == state.StatusSkipped || c.Status == state.StatusUndeployed && info.Verb == plan.VerbDeploy {
			c.Status = state.StatusSkipped
			c.Verb = info.Verb
			c.Started, c.Finished = time.Time{}, time.Time{}
			c.Order = info.Order
			c.Dir = rt.RecordDir(info.Dir)
			c.Reason = rt.masked(r.Reason)
			return
		}
		c.Reason = "not run in " + rt.RunID + ": " + rt.masked(r.Reason)
	})
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// processEnv is the environment of a component's process (DESIGN 4.5): the
// OS environment (without TF_VAR_* unless asked), the parameters with env:,
// and gantry's variables.
func (rt *Runtime) processEnv(info *plan.Component, exp *params.Expanded) []string {
	var paramEnv []string
	provides, ok := "", false
	if exp != nil {
		paramEnv = exp.Env()
		provides, ok = exp.Provides()
	}
	if !ok {
		provides = rt.Provides.String()
	}
	vars := []string{
		"HUB_COMPONENT=" + info.Name,
		"HUB_PROVIDES=" + provides,
		"HUB_STACK_NAME=" + rt.Res.Stack.Meta.Name,
		"HUB_DEPLOYMENT_ID=" + rt.Locked.DeploymentID,
		"GANTRY_STATE=" + rt.StateLocation,
		"GANTRY_ELABORATE=" + rt.ElaboratePath,
		"GANTRY_RUN_ID=" + rt.RunID,
		"GANTRY_VERB=" + info.Verb,
		"SPECVERSION=" + info.SpecVersion,
		"DEPLOYEDVERSION=" + info.DeployedVersion,
		"TEMPLATES=" + strings.Join(info.Templates, string(os.PathListSeparator)),
	}
	// COMPONENT_NAME is the component's name unless a parameter sets it,
	// as the Hub CLI does: Hub components name their Helm release with a
	// parameter whose env is COMPONENT_NAME.
	if !slices.ContainsFunc(paramEnv, func(kv string) bool { return strings.HasPrefix(kv, "COMPONENT_NAME=") }) {
		vars = append(vars, "COMPONENT_NAME="+info.Name)
	}
	return rt.baseEnv().Environ(paramEnv, vars)
}

// stackEnv is the environment of the stack's own steps (flight groups).
func (rt *Runtime) stackEnv() []string {
	return rt.baseEnv().Environ([]string{
		"HUB_STACK_NAME=" + rt.Res.Stack.Meta.Name,
		"HUB_PROVIDES=" + rt.Provides.String(),
		"GANTRY_STATE=" + rt.StateLocation,
		"GANTRY_ELABORATE=" + rt.ElaboratePath,
		"GANTRY_RUN_ID=" + rt.RunID,
	})
}
