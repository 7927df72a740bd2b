package steps

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/stepvars"
	"github.com/gantry-dev/gantry/internal/secret"
)

// expander expands the arguments of a step: ${...} and #{...} first, with
// the component's parameters (the stack's for flight groups), then the
// special variables of seed 001 ({{.component}}, {{.Model...}}).
type expander struct {
	vars map[string]any
	env  []string
	info *plan.Component
	// tracking makes a resolver of the step's values (the component's
	// parameters, the stack's for flight groups) and a function that
	// reports whether it gave out a secret.
	tracking func() (params.Resolver, func() bool)
	// masker learns what is computed from a secret (expand).
	masker *secret.Masker
}

// expander returns the expander of a step of comp ("" for the stack's).
func (rt *Runtime) expander(env plan.Env, comp string) (*expander, error) {
	stackTracking := func() (params.Resolver, func() bool) {
		return params.StackSecretTracking(rt.Locked, rt.Outputs, rt.Order)
	}
	if comp == "" {
		return &expander{vars: stepvars.For(rt.Res, rt.Locked, nil, rt.modelOf()), env: rt.stackEnv(), tracking: stackTracking, masker: rt.Masker}, nil
	}
	info, err := rt.comp(comp)
	if err != nil {
		return nil, err
	}
	b := begunOf(env, comp)
	x := &expander{info: info, env: rt.processEnv(info, b.exp), masker: rt.Masker, tracking: stackTracking}
	if b.exp != nil {
		x.tracking = b.exp.SecretTracking
	}
	if c := rt.Res.Component(comp); c != nil {
		x.vars = stepvars.For(rt.Res, rt.Locked, c, rt.modelOf())
	}
	return x, nil
}

// expand expands a value; one that computes with a secret (#{…} or a
// template function over it: #{db.password.substring(0, 6)}) becomes a
// secret of the run's masker, like a parameter computed from one: whatever
// the process prints of it is masked. A value that only substitutes a
// secret, or one of its usual encodings (${db.password/base64}), needs
// nothing more: the masker knows those, and masks them alone (the rest of
// http://host/${token} stays readable).
func (x *expander) expand(v string) (string, error) {
	out, readSecret, err := x.expandTracked(v)
	if err == nil && readSecret && x.masker != nil && computesWithValues(v) {
		x.masker.AddComputed(out)
	}
	return out, err
}

// expandTracked expands a value and says whether it read a secret.
func (x *expander) expandTracked(v string) (string, bool, error) {
	r, readSecret := x.tracking()
	out, err := params.Expand(v, r)
	if err != nil {
		return "", false, err
	}
	out, err = stepvars.Apply(out, x.vars)
	return out, readSecret(), err
}

func (x *expander) expandArgs(args map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(args))
	for k, v := range args {
		s, ok := v.(string)
		if !ok {
			out[k] = v
			continue
		}
		e, err := x.expand(s)
		if err != nil {
			return nil, fmt.Errorf("argument %s: %w", k, err)
		}
		out[k] = e
	}
	return out, nil
}

// injected runs an injected lifecycle step (seed 001) — exec, call, probe,
// gate or delay — and applies its on_fail.
func (rt *Runtime) injected(ctx context.Context, env plan.Env, n *plan.Node, s plan.Injected) plan.Result {
	if s.Component != "" {
		info, err := rt.comp(s.Component)
		if err != nil {
			return plan.Fail(err)
		}
		if err := rt.markHooksInFlight(info); err != nil {
			return plan.Fail(err)
		}
	}
	label := rt.sayLabel(env, n, s.Component)
	// Retries come before on_fail: it applies to the last attempt.
	res := limited(ctx, env, s.Step.Limits, func(ctx context.Context, env plan.Env) plan.Result { return rt.runInjected(ctx, env, s) })
	if res.Status == plan.Failed {
		res = onFail(res, s.Step.OnFail, labelOr(label, n), env)
	}
	res.Label = label
	return res
}

// sayLabel tells the displays the step's label with its values expanded
// (plan.NoteLabel), when it names any and they expand: the plan's label
// says ${db.host}, the run's says what it is. A label that does not
// expand is left as it is; the step reports its own errors. It returns the
// label said, "" when none was.
func (rt *Runtime) sayLabel(env plan.Env, n *plan.Node, comp string) string {
	if !hasValues(n.Label) {
		return ""
	}
	x, err := rt.expander(env, comp)
	if err != nil {
		return ""
	}
	// A label that computes with a secret (#{…}, or a {{…}} template the
	// secret is substituted into) stays as written: the masker hides the
	// secret and its usual encodings, not what an expression or a template
	// makes of it (printf "%.6s" is its first six characters). One that
	// only substitutes it shows it masked.
	l, readSecret, err := x.expandTracked(n.Label)
	if err != nil || l == n.Label || computesWithValues(n.Label) && readSecret {
		return ""
	}
	env.Note(plan.Note{Kind: plan.NoteLabel, Value: l})
	return l
}

// labelOr is the label a step said, or its plan's when it said none: what
// its messages name it by.
func labelOr(said string, n *plan.Node) string {
	if said != "" {
		return said
	}
	return n.Label
}

// computesWithValues reports whether a label computes with the values it
// names: a #{…} expression, or a ${…} or #{…} inside a {{…}} action,
// whose functions get the value substituted.
func computesWithValues(label string) bool {
	if strings.Contains(label, "#{") {
		return true
	}
	for rest := label; ; {
		i := strings.Index(rest, "{{")
		if i < 0 {
			return false
		}
		rest = rest[i+2:]
		end := strings.Index(rest, "}}")
		if end < 0 {
			end = len(rest)
		}
		if strings.Contains(rest[:end], "${") {
			return true
		}
		rest = rest[end:]
	}
}

// hasValues reports whether a label names values to expand: ${…}, #{…}
// or {{…}}.
func hasValues(label string) bool {
	return strings.Contains(label, "${") || strings.Contains(label, "#{") || strings.Contains(label, "{{")
}

func (rt *Runtime) runInjected(ctx context.Context, env plan.Env, s plan.Injected) plan.Result {
	st := &s.Step
	x, err := rt.expander(env, s.Component)
	if err != nil {
		return plan.Fail(err)
	}
	switch manifest.StepType(st.Type) {
	case manifest.StepDelay:
		return delay(ctx, time.Duration(st.Seconds*float64(time.Second)))
	case manifest.StepGate:
		msg, err := x.expand(st.Message)
		if err != nil {
			return plan.Fail(err)
		}
		return gate(env, msg)
	case manifest.StepExec:
		args := make([]string, len(st.Args))
		for i, a := range st.Args {
			if args[i], err = x.expand(a); err != nil {
				return plan.Fail(err)
			}
		}
		args[0] = resolveScript(s.Dir, args[0])
		if err := component.Run(ctx, component.Process{Args: args, Dir: s.Dir, Env: x.env, Stdout: env.Stream(), Stderr: env.Stream()}); err != nil {
			return failure(ctx, err)
		}
		return plan.Ok()
	case manifest.StepCall, manifest.StepProbe:
		args, err := x.expandArgs(st.Arguments)
		if err != nil {
			return plan.Fail(err)
		}
		if manifest.StepType(st.Type) == manifest.StepCall && st.Plugin == "" {
			return coreCall(ctx, env, s.Dir, st.Action, x.env)
		}
		out := env.Stream()
		if st.Logfile != "" {
			f, err := os.OpenFile(st.Logfile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
			if err != nil {
				return plan.Fail(fmt.Errorf("probe logfile: %w", err))
			}
			defer f.Close()
			out = io.MultiWriter(out, f)
		}
		timeout := time.Duration(st.Seconds * float64(time.Second))
		if manifest.StepType(st.Type) == manifest.StepCall {
			timeout = time.Duration(manifest.DefaultProbeTimeout) * time.Second
		}
		return rt.probe(ctx, env, st.Plugin, st.Action, args, timeout, s.Dir, x.env, out)
	}
	return plan.Fail(fmt.Errorf("unknown step type %q", st.Type))
}

// coreCall calls the component's own implementation with the action as verb
// (Skopos: a call without a plugin goes to the core plugin).
func coreCall(ctx context.Context, env plan.Env, dir, action string, procEnv []string) plan.Result {
	impl, err := component.Probe(dir, action)
	if err != nil {
		return plan.Fail(err)
	}
	if impl.Kind != component.ImplMake && impl.Kind != component.ImplScript {
		return plan.Fail(fmt.Errorf("the %s implementation has no action %q", impl.Kind, action))
	}
	if err := component.Run(ctx, component.Process{Args: impl.Args, Dir: dir, Env: procEnv, Stdout: env.Stream(), Stderr: env.Stream()}); err != nil {
		return failure(ctx, err)
	}
	return plan.Ok()
}

// resolveScript makes a relative script path that exists in dir absolute, so
// that "./check.sh" and "check.sh" both mean the component's script.
func resolveScript(dir, script string) string {
	if filepath.IsAbs(script) || dir == "" {
		return script
	}
	p := filepath.Join(dir, script)
	if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
		return p
	}
	return script
}
