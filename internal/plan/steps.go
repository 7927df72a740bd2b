package plan

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plugin"
)

// injected runs one injected lifecycle step (seed 001): exec, call, probe,
// gate or delay, and applies its on_fail.
type injected struct {
	rt   *Runtime
	cr   *compRun // nil for the stack's flight groups
	step manifest.Step
	dir  string // where exec and core-plugin calls run
	vars map[string]any
}

func (s injected) Run(ctx context.Context, env Env) Result {
	res := s.run(ctx, env)
	if res.Status != Failed {
		return res
	}
	return s.onFail(res, env)
}

// onFail applies the step's on_fail list (seed 001): only next makes the
// plan go on; warn and info say how a failure that goes on is logged; pause
// holds the run and asks first whether to continue or abort. Without next,
// a failed step sends the component down its failure path, pause or not.
func (s injected) onFail(res Result, env Env) Result {
	st := &s.step
	if st.Has(manifest.OnFailPause) && !s.pause(res, env) {
		res.Abort = true
		return res
	}
	if !st.Has(manifest.OnFailNext) {
		return res
	}
	if st.Has(manifest.OnFailWarn) || st.Has(manifest.OnFailPause) && !st.Has(manifest.OnFailInfo) {
		return Result{Status: OK, Warning: res.Reason}
	}
	return Result{Status: OK, Info: res.Reason}
}

// pause holds the run after a failed step and asks whether to continue. With
// no terminal to ask, --yes continues and anything else aborts, as a gate
// would.
func (s injected) pause(res Result, env Env) bool {
	if !env.Interactive() {
		if env.Yes() {
			env.Logf("%s failed and on_fail is pause; no terminal to ask, --yes continues", s.label())
			return true
		}
		env.Logf("%s failed and on_fail is pause, but there is no terminal to ask (--yes continues): aborting", s.label())
		return false
	}
	var answer string
	err := env.Pause(func() error {
		env.Logf("%s failed: %s", s.label(), res.Reason)
		env.Logf("paused: continue or abort? [c/a]")
		var err error
		answer, err = env.Input()
		return err
	})
	return err == nil && strings.HasPrefix(strings.ToLower(strings.TrimSpace(answer)), "c")
}

func (s injected) label() string {
	if s.step.Label != "" {
		return s.step.Label
	}
	return s.step.Describe()
}

func (s injected) run(ctx context.Context, env Env) Result {
	st := &s.step
	switch st.Type {
	case manifest.StepDelay:
		d := time.Duration(st.Seconds * float64(time.Second))
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return Fail(fmt.Errorf("interrupted during the delay"))
		case <-t.C:
			return Ok()
		}
	case manifest.StepGate:
		msg, err := s.expand(st.Message)
		if err != nil {
			return Fail(err)
		}
		return gate(msg, env)
	case manifest.StepExec:
		args := make([]string, len(st.Args))
		for i, a := range st.Args {
			v, err := s.expand(a)
			if err != nil {
				return Fail(err)
			}
			args[i] = v
		}
		args[0] = resolveScript(s.dir, args[0])
		if err := component.Run(ctx, component.Process{Args: args, Dir: s.dir, Env: s.environ(), Stdout: env.Output(), Stderr: env.Output()}); err != nil {
			return Fail(err)
		}
		return Ok()
	case manifest.StepCall, manifest.StepProbe:
		args, err := s.expandArgs(st.Params)
		if err != nil {
			return Fail(err)
		}
		if st.Type == manifest.StepCall && st.Plugin == "" {
			return s.coreCall(ctx, env, st.Action)
		}
		p, ok := plugin.Lookup(st.Plugin)
		if !ok {
			return Fail(fmt.Errorf("unknown plugin %q", st.Plugin))
		}
		action := st.Action
		if action == "" {
			action = p.Actions()[0]
		}
		out := env.Output()
		if st.Logfile != "" {
			f, err := os.OpenFile(st.Logfile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
			if err != nil {
				return Fail(fmt.Errorf("probe logfile: %w", err))
			}
			defer f.Close()
			out = io.MultiWriter(out, f)
		}
		timeout := time.Duration(st.Seconds * float64(time.Second))
		if st.Type == manifest.StepCall {
			timeout = time.Duration(manifest.DefaultProbeTimeout) * time.Second
		}
		if err := p.Run(ctx, plugin.Call{Action: action, Args: args, Dir: s.dir, Env: s.environ(), Output: out, Timeout: timeout}); err != nil {
			return Fail(fmt.Errorf("%s %s: %w", st.Plugin, action, err))
		}
		return Ok()
	}
	return Fail(fmt.Errorf("unknown step type %q", st.Type))
}

// gate asks for approval on the terminal; --yes approves every gate; without
// a terminal and without --yes it fails, saying how to approve.
func gate(msg string, env Env) Result {
	if env.Yes() {
		env.Logf("gate %q approved by --yes", msg)
		return Ok()
	}
	if !env.Interactive() {
		return Fail(fmt.Errorf("gate %q needs approval: run on a terminal to answer it, or pass --yes to approve every gate", msg))
	}
	var answer string
	err := env.Pause(func() error {
		env.Logf("%s [y/N]", msg)
		var err error
		answer, err = env.Input()
		return err
	})
	if err != nil {
		return Fail(fmt.Errorf("gate %q: %w", msg, err))
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		env.Logf("gate %q approved", msg)
		return Ok()
	}
	return Fail(fmt.Errorf("gate %q was not approved", msg))
}

// coreCall calls the component's own implementation with the action as verb
// (Skopos: a call without a plugin goes to the core plugin).
func (s injected) coreCall(ctx context.Context, env Env, action string) Result {
	impl, err := component.Probe(s.dir, action)
	if err != nil {
		return Fail(err)
	}
	if impl.Kind != component.ImplMake && impl.Kind != component.ImplScript {
		return Fail(fmt.Errorf("the %s implementation has no action %q", impl.Kind, action))
	}
	if err := component.Run(ctx, component.Process{Args: impl.Args, Dir: s.dir, Env: s.environ(), Stdout: env.Output(), Stderr: env.Output()}); err != nil {
		return Fail(err)
	}
	return Ok()
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

func (s injected) environ() []string {
	if s.cr != nil {
		s.cr.mu.Lock()
		exp := s.cr.exp
		s.cr.mu.Unlock()
		return processEnv(s.cr, exp)
	}
	rt := s.rt
	return component.Environ(rt.OSEnv, rt.KeepTFVars, []string{
		"HUB_STACK_NAME=" + rt.Res.Stack.Meta.Name,
		"HUB_PROVIDES=" + rt.Provides.String(),
		"GANTRY_STATE=" + rt.StatePath,
		"GANTRY_ELABORATE=" + rt.ElaboratePath,
		"GANTRY_RUN_ID=" + rt.RunID,
	})
}

func (s injected) resolver() params.Resolver {
	if s.cr != nil {
		s.cr.mu.Lock()
		exp := s.cr.exp
		s.cr.mu.Unlock()
		if exp != nil {
			return exp.Resolver()
		}
	}
	return params.StackResolver(s.rt.Locked, s.rt.Outputs, s.rt.Graph.Order)
}

// expand substitutes ${...} and #{...} first, then the special variables of
// seed 001 ({{.component}}, {{.Model...}}).
func (s injected) expand(v string) (string, error) {
	out, err := params.Expand(v, s.resolver())
	if err != nil {
		return "", err
	}
	return applyVars(out, s.vars)
}

func (s injected) expandArgs(args map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(args))
	for k, v := range args {
		str, ok := v.(string)
		if !ok {
			out[k] = v
			continue
		}
		e, err := s.expand(str)
		if err != nil {
			return nil, fmt.Errorf("argument %s: %w", k, err)
		}
		out[k] = e
	}
	return out, nil
}

// applyVars runs a value through Go's text/template with the special
// variables; an unknown variable is an error.
func applyVars(v string, vars map[string]any) (string, error) {
	if !strings.Contains(v, "{{") {
		return v, nil
	}
	t, err := template.New("step").Option("missingkey=error").Parse(v)
	if err != nil {
		return "", fmt.Errorf("in %q: %w", v, err)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, vars); err != nil {
		msg := err.Error()
		if i := strings.Index(msg, "map has no entry for key "); i >= 0 {
			key := strings.Trim(msg[i+len("map has no entry for key "):], `"`)
			names := make([]string, 0, len(vars))
			for k := range vars {
				names = append(names, "."+k)
			}
			sort.Strings(names)
			return "", fmt.Errorf("unknown variable .%s in %q (known here: %s)", key, v, strings.Join(names, ", "))
		}
		return "", fmt.Errorf("in %q: %s", v, strings.TrimPrefix(msg, "template: step:"))
	}
	return b.String(), nil
}

// stepVars are the special variables of seed 001 for a component's steps (or
// the stack's, when comp is nil: only .project and .Model).
func stepVars(rt *Runtime, comp *manifest.Component, model map[string]any) map[string]any {
	vars := map[string]any{"project": rt.Res.Stack.Meta.Name, "Model": model}
	if comp == nil {
		return vars
	}
	image := comp.Meta.Image
	if image == "" {
		image = comp.Meta.Version
	}
	id := comp.Meta.Name
	if rt.Locked != nil {
		id = rt.Locked.DeploymentID + "-" + comp.Meta.Name
	}
	vars["component"] = comp.Meta.Name
	vars["image"] = image
	vars["id"] = id
	vars["ipaddr"] = ""
	vars["index"] = 0
	return vars
}

// modelOf is .Model: the elaborated stack, with its components by name.
func modelOf(rt *Runtime) map[string]any {
	comps := map[string]any{}
	for _, c := range rt.Res.Components {
		image := c.Meta.Image
		if image == "" {
			image = c.Meta.Version
		}
		ps := map[string]string{}
		for _, p := range c.Parameters {
			v := string(p.Value)
			if v == "" {
				v = string(p.Default)
			}
			ps[p.Name] = v
		}
		comps[c.Meta.Name] = map[string]any{
			"Name": c.Meta.Name, "Meta": c.Meta, "Image": image, "Version": c.Meta.Version,
			"Requires": c.Requires, "Provides": c.Provides, "Parameters": ps,
		}
	}
	stackParams := map[string]string{}
	if rt.Locked != nil {
		for _, v := range rt.Locked.Values() {
			if !v.Secret {
				stackParams[v.QName()] = v.Value
			}
		}
	}
	s := rt.Res.Stack
	return map[string]any{"Name": s.Meta.Name, "Meta": s.Meta, "Components": comps, "Parameters": stackParams}
}

// validateStep checks a step before anything runs: plugins and actions exist,
// scripts are found, and ${...} references and {{.variables}} are known.
func validateStep(rt *Runtime, st *manifest.Step, dir string, stackLevel bool, field string, vars map[string]any, known func(string) bool, diags *manifest.Diagnostics) {
	var texts []string
	switch st.Type {
	case manifest.StepExec:
		texts = append(texts, st.Args...)
		script := st.Args[0]
		if !strings.Contains(script, "{{") && !strings.Contains(script, "${") && !scriptExists(dir, script) {
			diags.Errorf(st.Pos, field, "exec: %s is neither in %s nor on PATH", script, dir)
		}
	case manifest.StepGate:
		texts = append(texts, st.Message)
	case manifest.StepCall, manifest.StepProbe:
		for _, v := range st.Params {
			if s, ok := v.(string); ok {
				texts = append(texts, s)
			}
		}
		if st.Type == manifest.StepCall && st.Plugin == "" {
			if stackLevel {
				diags.Errorf(st.Pos, field, "call: a stack-level call needs a plugin (built-in: %s)", strings.Join(plugin.Names(), ", "))
			} else if _, err := component.Probe(dir, st.Action); err != nil {
				diags.Errorf(st.Pos, field, "call %s: the component has no implementation of this action: %v", st.Action, err)
			}
			break
		}
		if err := plugin.ValidateCall(st.Plugin, st.Action, placeholderArgs(st.Params)); err != nil {
			diags.Errorf(st.Pos, field, "%s: %v", st.Type, err)
		}
	}
	for _, t := range texts {
		tm, err := params.Parse(t)
		if err != nil {
			diags.Errorf(st.Pos, field, "%v", err)
			continue
		}
		for _, r := range tm.Refs() {
			if r.Component == "" && !known(r.Name) {
				diags.Errorf(st.Pos, field, "unknown parameter %q in %q", r.Name, t)
			}
		}
		// Check the special variables with ${...} replaced by placeholders.
		var b strings.Builder
		for _, p := range tm.Parts {
			if p.Kind == params.Literal {
				b.WriteString(p.Text)
			} else {
				b.WriteString("x")
			}
		}
		if _, err := applyVars(b.String(), vars); err != nil {
			diags.Errorf(st.Pos, field, "%v", err)
		}
	}
}

// placeholderArgs stands in for arguments that are only known at run time.
func placeholderArgs(args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		if s, ok := v.(string); ok && (strings.Contains(s, "${") || strings.Contains(s, "#{") || strings.Contains(s, "{{")) {
			out[k] = placeholderFor(k)
			continue
		}
		out[k] = v
	}
	return out
}

func placeholderFor(key string) string {
	switch key {
	case "address":
		return "localhost:1"
	case "url":
		return "http://localhost/"
	case "interval":
		return "1"
	}
	return "placeholder"
}

func scriptExists(dir, script string) bool {
	if filepath.IsAbs(script) {
		_, err := os.Stat(script)
		return err == nil
	}
	if dir != "" {
		if _, err := os.Stat(filepath.Join(dir, script)); err == nil {
			return true
		}
	}
	if strings.Contains(script, "/") {
		return false
	}
	_, err := exec.LookPath(script)
	return err == nil
}

// stepID numbers the steps of an injection point.
func stepID(prefix, point string, i int) string {
	return prefix + "/" + point + "/" + strconv.Itoa(i)
}
