package plan

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/lines"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plugin"
	"github.com/gantry-dev/gantry/internal/secret"
	"github.com/gantry-dev/gantry/internal/state"
)

// compRun is what the steps of one component share during a run.
type compRun struct {
	rt   *Runtime
	name string
	verb string
	c    *manifest.Component // nil for a component known only from the state
	dir  string
	deps []string // the components it runs after, in deploy order
	// depends is the manifest's depends list, in its order: dep:name lookups
	// follow it (DESIGN 4.2).
	depends []string
	// order is the component's position in the deploy order.
	order    int
	resume   bool
	impl     *component.Implementation
	recorded *state.Component // the component's record when the run began
	// readOnly runs leave the state alone (custom verbs through gantry invoke).
	readOnly bool
	// orphan is a component torn down because the stack no longer lists it.
	orphan bool
	// forceReplace redeploys even when --resume finds it unchanged.
	forceReplace bool
	// plugins and setup are the component's plugin lists when it is made of
	// plugins (sow); nil for a script, Makefile or bare component.
	plugins, setup []*plugin.Spec
	// expanded is set once plugins and setup hold expanded specs: recorded
	// ones, or the manifest's after expandPlugins.
	expanded bool
	// productDir holds the SPEC-VERSION of the component's stack (or nested
	// source); specVersion is its value, deployedVersion the recorded one.
	productDir, specVersion, deployedVersion string

	mu          sync.Mutex
	exp         *params.Expanded
	fingerprint string
	failReason  string
}

func (cr *compRun) setFailure(reason string) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if cr.failReason == "" {
		cr.failReason = reason
	}
}

func (cr *compRun) failure() string {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if cr.failReason == "" {
		return "a step failed"
	}
	return cr.failReason
}

// inGroup wraps a component's step so that its failure becomes the
// component's failure reason.
type inGroup struct {
	cr    *compRun
	inner Runner
}

func (g inGroup) Run(ctx context.Context, env Env) Result {
	r := g.inner.Run(ctx, env)
	if r.Status == Failed {
		g.cr.setFailure(r.Reason)
	}
	return r
}

// Skipped passes skips on to the inner runner when it records them.
func (g inGroup) Skipped(r Result) {
	if sr, ok := g.inner.(SkipRecorder); ok {
		sr.Skipped(r)
	}
}

// beginDeploy checks the component's requirements, expands its parameters and
// decides whether it needs to run at all.
type beginDeploy struct{ cr *compRun }

func (b beginDeploy) Run(ctx context.Context, env Env) Result {
	cr, rt := b.cr, b.cr.rt
	if res, stop := checkRequirements(cr); stop {
		return res
	}
	exp, diags := params.ExpandComponent(params.ComponentInput{
		Locked:    rt.Locked,
		Component: cr.c,
		Depends:   cr.depends,
		Outputs:   rt.Outputs,
		Provides:  rt.Provides.String(),
	})
	if diags.HasErrors() {
		var msgs []string
		for _, d := range diags.Errors() {
			msgs = append(msgs, d.String())
		}
		return Fail(errors.New(strings.Join(msgs, "\n")))
	}
	for _, v := range exp.Values {
		if v.Pending != "" {
			return Fail(fmt.Errorf("parameter %s needs an output of %s, which has not been deployed", v.Name, v.Pending))
		}
		if v.Secret {
			rt.Masker.Add(v.Value)
		}
	}
	fp, err := rt.fingerprint(cr, exp)
	if err != nil {
		return Fail(fmt.Errorf("fingerprint: %w", err))
	}
	cr.mu.Lock()
	cr.exp, cr.fingerprint = exp, fp
	cr.mu.Unlock()
	if cr.resume && !cr.forceReplace && cr.recorded != nil && cr.recorded.Status == state.StatusDeployed && cr.recorded.Fingerprint == fp {
		rt.Provides.Add(cr.recorded.Provides...)
		return Result{Status: Skipped, Soft: true, Reason: ReasonUnchanged}
	}
	return Ok()
}

// ReasonUnchanged is the reason of the skips of a component that --resume
// found deployed and unchanged.
const ReasonUnchanged = "unchanged"

func upstreamOutputs(rt *Runtime, deps []string) map[string]map[string]string {
	m := make(map[string]map[string]string, len(deps))
	for _, d := range deps {
		m[d] = rt.Outputs.Values(d)
	}
	return m
}

// checkRequirements applies seed 000's requirement rules at run time, when the
// capabilities provided so far (dynamic ones included) are known.
func checkRequirements(cr *compRun) (Result, bool) {
	rt := cr.rt
	for _, cond := range tuningConditions(rt.Res.Stack, cr.name) {
		v := rt.Locked.Get(cond)
		if v == nil || !truthy(v.Value) {
			return Skip(fmt.Sprintf("%s is not set to a true value", cond), true), true
		}
	}
	for _, req := range cr.c.Requires {
		if rt.Provides.Has(req) {
			continue
		}
		if isOptionalRequirement(rt.Res.Stack, req, cr.name) {
			return Skip(fmt.Sprintf("requires %s, which nothing provides (optional requirement)", req), true), true
		}
		return Fail(fmt.Errorf("requires %s, which nothing provides", req)), true
	}
	return Result{}, false
}

// truthy is seed 000's truth: everything but false, "", 0 and (unknown).
func truthy(v string) bool {
	switch strings.TrimSpace(v) {
	case "", "false", "0", "(unknown)":
		return false
	}
	return true
}

// isOptionalRequirement reports whether lifecycle.requires.optional softens
// req for comp: "req" for everyone or "req:comp" for comp.
func isOptionalRequirement(s *manifest.Stack, req, comp string) bool {
	for _, e := range s.Lifecycle.Requires.Optional {
		r, c, qualified := strings.Cut(e, ":")
		if r == req && (!qualified || c == comp) {
			return true
		}
	}
	return false
}

// tuningConditions returns the parameters that gate comp: entries
// "parameter:comp" of lifecycle.requires.optional whose left side is a
// stack parameter rather than a capability.
func tuningConditions(s *manifest.Stack, comp string) []string {
	var out []string
	for _, e := range s.Lifecycle.Requires.Optional {
		r, c, qualified := strings.Cut(e, ":")
		if !qualified || c != comp || r == "" {
			continue
		}
		for _, p := range s.Parameters {
			if p.Name == r && p.Component == "" {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// verbStep runs the component's implementation for a verb.
type verbStep struct{ cr *compRun }

func (v verbStep) Run(ctx context.Context, env Env) Result {
	cr, rt := v.cr, v.cr.rt
	cr.mu.Lock()
	exp, fp := cr.exp, cr.fingerprint
	cr.mu.Unlock()
	if err := cr.expandPlugins(exp); err != nil {
		return Fail(err)
	}
	if !cr.readOnly {
		if err := markInFlight(cr, exp); err != nil {
			return Fail(err)
		}
	}
	if cr.c != nil && cr.c.Templates != nil {
		if _, err := component.RenderFiles(cr.dir, rt.Dirs.GenDir(cr.name), cr.c.Templates, exp, cr.templateChain()); err != nil {
			return Fail(fmt.Errorf("render templates: %w", err))
		}
	}
	secretOutputs := map[string]bool{}
	if cr.c != nil {
		for _, o := range cr.c.Outputs {
			if o.IsSecret() {
				secretOutputs[o.Name] = true
				if raw := component.RawKey(o); raw != "" {
					secretOutputs[raw] = true
				}
			}
		}
	}
	var rawOutputs map[string]string
	var dynamicProvides, directSecrets []string
	// A bare component (lifecycle.bare: allow) has no process: its outputs
	// come from its parameters alone.
	switch {
	case cr.plugins != nil || cr.setup != nil:
		raw, secret, provides, err := runPlugins(ctx, env, cr, exp, secretOutputs)
		if err != nil {
			if ctx.Err() != nil {
				return Fail(fmt.Errorf("interrupted: %w", err))
			}
			return Fail(err)
		}
		rawOutputs, directSecrets, dynamicProvides = raw, secret, provides
	case cr.impl != nil:
		stdout := newCaptureWriter(env.Output(), "", rt.Masker, secretOutputs)
		err := component.Run(ctx, component.Process{
			Args:   cr.impl.Args,
			Dir:    cr.dir,
			Env:    processEnv(cr, exp),
			Stdout: stdout,
			Stderr: env.Output(),
		})
		stdout.Flush()
		if err != nil {
			if ctx.Err() != nil {
				return Fail(fmt.Errorf("interrupted: %w", err))
			}
			return Fail(err)
		}
		rawOutputs, dynamicProvides = stdout.capture.Outputs(), stdout.capture.Provides()
	}
	if cr.verb != VerbDeploy || cr.readOnly {
		if cr.verb == VerbUndeploy && !cr.readOnly {
			rt.Recorder.UpdateComponent(cr.name, func(c *state.Component) { c.Plugins, c.SetupPlugins = nil, nil })
		}
		return Ok()
	}
	outputs, secret, err := component.ResolveOutputs(cr.c, rawOutputs, exp)
	if err != nil {
		return Fail(err)
	}
	for _, s := range directSecrets {
		if !containsName(secret, s) {
			secret = append(secret, s)
		}
	}
	sort.Strings(secret)
	for _, s := range secret {
		rt.Masker.Add(outputs[s])
	}
	provides := append(append([]string(nil), cr.c.Provides...), dynamicProvides...)
	rt.Outputs.Set(cr.name, outputs, secret)
	rt.Provides.Add(provides...)
	for _, k := range sortedKeys(outputs) {
		env.Note(Note{Kind: "output", Name: k, Value: outputs[k], Secret: containsName(secret, k)})
	}
	var instances, setup []state.PluginInstance
	if cr.plugins != nil || cr.setup != nil {
		instances, setup = recordSpecs(cr.plugins, exp.Map()), recordSpecs(cr.setup, exp.Map())
	}
	rt.Recorder.UpdateComponent(cr.name, func(c *state.Component) {
		c.Outputs = outputs
		c.SecretOutputs = secret
		c.Provides = provides
		c.Fingerprint = fp
		c.Plugins, c.SetupPlugins = instances, setup
		c.SpecVersion = cr.specVersion
	})
	return Ok()
}

// templateChain is the component's folder, then its template chain: where
// lookupfile looks.
func (cr *compRun) templateChain() []string {
	if dirs := cr.rt.Res.TemplateDirs[cr.name]; len(dirs) > 0 {
		return absAll(dirs)
	}
	return []string{cr.dir}
}

// markInFlight records that the component is in flight. A crash must leave
// that in the state, so the mark is on disk before the process starts.
func markInFlight(cr *compRun, exp *params.Expanded) error {
	rt := cr.rt
	now := rt.Now().UTC()
	ver := rt.Recorder.UpdateComponent(cr.name, func(c *state.Component) {
		c.Status = state.StatusIncomplete
		c.Verb = cr.verb
		c.Started, c.Finished = now, time.Time{}
		c.LastRun = rt.RunID
		c.Dir = rt.RecordDir(cr.dir)
		c.Depends = cr.deps
		c.Order = cr.order
		c.Reason = ""
		if cr.verb == VerbDeploy {
			c.Parameters = recordParams(exp)
			if cr.plugins != nil || cr.setup != nil {
				c.Plugins, c.SetupPlugins = cr.pluginRecord(exp.Map())
			}
		}
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
		out[i] = state.Parameter{Name: v.Name, Value: v.Value, Env: v.Env}
	}
	return out
}

// processEnv is the environment of a component's process (DESIGN 4.5): the OS
// environment (without TF_VAR_* unless asked), the parameters with env:, and
// gantry's variables.
func processEnv(cr *compRun, exp *params.Expanded) []string {
	rt := cr.rt
	var paramEnv []string
	if exp != nil {
		paramEnv = exp.Env()
	}
	provides := rt.Provides.String()
	stack := rt.Res.Stack.Meta.Name
	return component.Environ(rt.OSEnv, rt.KeepTFVars, paramEnv, []string{
		"COMPONENT_NAME=" + cr.name,
		"HUB_COMPONENT=" + cr.name,
		"HUB_PROVIDES=" + provides,
		"HUB_STACK_NAME=" + stack,
		"HUB_DEPLOYMENT_ID=" + rt.Locked.DeploymentID,
		"GANTRY_STATE=" + rt.StatePath,
		"GANTRY_ELABORATE=" + rt.ElaboratePath,
		"GANTRY_RUN_ID=" + rt.RunID,
		"GANTRY_VERB=" + cr.verb,
		"SPECVERSION=" + cr.specVersion,
		"DEPLOYEDVERSION=" + cr.deployedVersion,
		"TEMPLATES=" + strings.Join(cr.templateChain(), string(os.PathListSeparator)),
	})
}

// captureWriter feeds process output to the Outputs: parser line by line and
// passes it on, after prefix; values of secret outputs are made secret before
// their line is shown. It is safe for concurrent writes: a plugin may point
// its stdout and stderr at it and copy both on goroutines of their own.
type captureWriter struct {
	*lines.Writer
	capture    *component.Capture
	out        io.Writer
	prefix     string // "[child] " for the children of parallel
	masker     *secret.Masker
	secretKeys map[string]bool
}

func newCaptureWriter(out io.Writer, prefix string, masker *secret.Masker, secretKeys map[string]bool) *captureWriter {
	w := &captureWriter{capture: component.NewCapture(), out: out, prefix: prefix, masker: masker, secretKeys: secretKeys}
	w.Writer = lines.NewWriter(w.line)
	return w
}

func (w *captureWriter) line(text string) {
	inBlock := w.capture.InOutputsBlock()
	w.capture.Line(text)
	if inBlock {
		if k, v, ok := strings.Cut(component.StripANSI(text), "="); ok {
			k = strings.TrimSpace(k)
			if w.secretKeys[k] || manifest.LooksSecret(k) {
				w.masker.Add(strings.Trim(strings.TrimSpace(v), `"'`))
			}
		}
	}
	_, _ = io.WriteString(w.out, w.prefix+text+"\n")
}

// endDeploy marks the component deployed once all its steps succeeded.
type endStep struct{ cr *compRun }

func (e endStep) Run(ctx context.Context, env Env) Result {
	cr, rt := e.cr, e.cr.rt
	if cr.readOnly {
		return Ok()
	}
	status := state.StatusDeployed
	if cr.verb == VerbUndeploy {
		status = state.StatusUndeployed
	}
	now := rt.Now().UTC()
	rt.Recorder.UpdateComponent(cr.name, func(c *state.Component) {
		c.Status = status
		c.Finished = now
		c.Reason = ""
		if cr.verb == VerbUndeploy {
			c.Outputs, c.SecretOutputs, c.Provides, c.Fingerprint = nil, nil, nil, ""
		}
	})
	if cr.verb == VerbUndeploy {
		rt.Outputs.Set(cr.name, nil, nil)
	}
	return Ok()
}

// Skipped records why the component did not run: a component that was never
// deployed becomes skipped; one that was keeps its status with the reason.
func (e endStep) Skipped(r Result) {
	cr, rt := e.cr, e.cr.rt
	if cr.readOnly || r.Reason == ReasonUnchanged || cr.verb == VerbUndeploy && r.Soft {
		return
	}
	rt.Recorder.UpdateComponent(cr.name, func(c *state.Component) {
		c.LastRun = rt.RunID
		if c.Status == "" || c.Status == state.StatusSkipped || c.Status == state.StatusUndeployed && cr.verb == VerbDeploy {
			c.Status = state.StatusSkipped
			c.Order = cr.order
			c.Dir = rt.RecordDir(cr.dir)
			c.Reason = r.Reason
			return
		}
		c.Reason = "not run in " + rt.RunID + ": " + r.Reason
	})
}

// failedStep is the failure path of a script component: its remaining steps
// were skipped, and it ends failed. gantry never undeploys on its own.
type failedStep struct{ cr *compRun }

func (f failedStep) Run(ctx context.Context, env Env) Result {
	cr, rt := f.cr, f.cr.rt
	if cr.readOnly {
		return Ok()
	}
	now := rt.Now().UTC()
	reason := cr.failure()
	rt.Recorder.UpdateComponent(cr.name, func(c *state.Component) {
		c.Status = state.StatusFailed
		c.Finished = now
		c.Reason = firstLine(reason)
		c.LastRun = rt.RunID
	})
	return Ok()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
