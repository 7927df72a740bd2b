package steps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/plugin"
	"github.com/gantry-dev/gantry/internal/secret"
	"github.com/gantry-dev/gantry/internal/state"
)

// prepared is what the verb of a component made of plugin lists hands to its
// entries and its record step: the lists, expanded, and the instances that
// vanished from them.
type prepared struct {
	plugins, setup, vanished []*plugin.Spec
}

// at is the entry a step carries out.
func (p *prepared) at(list string, index []int) *plugin.Spec {
	switch list {
	case plan.ListPlugins:
		return plugin.At(p.plugins, index)
	case plan.ListSetup:
		return plugin.At(p.setup, index)
	case plan.ListVanished:
		if len(index) == 1 && index[0] >= 0 && index[0] < len(p.vanished) {
			return p.vanished[index[0]]
		}
	}
	return nil
}

// prepareLists readies a component's plugin lists for its entries: the
// manifest's get their ${...} and #{...} values — nothing ever runs with a
// reference left in it — and are recorded, with their structure, before any
// of them runs; the templates are rendered and the deployment file written.
// The lists come from where the plan says (the state's for an undeploy), so
// the entries find in them what the plan was built from.
func (rt *Runtime) prepareLists(ctx context.Context, env plan.Env, info *plan.Component, b *begun) plan.Result {
	rec := rt.recorded(info.Name)
	c := rt.Res.Component(info.Name)
	p := &prepared{}
	switch info.Lists {
	case plan.ListsRecorded:
		p.plugins, p.setup = plugin.FromRecord(rec.Plugins), plugin.FromRecord(rec.SetupPlugins)
	case plan.ListsTerraform, plan.ListsKubernetes, plan.ListsHelm:
		p.plugins = build.ListOf(info.Lists)
	case plan.ListsManifest:
		if c.Generated {
			// Lists gantry made are data: nothing in them is a reference.
			p.plugins, p.setup = plugin.Specs(c.Plugins), plugin.Specs(c.SetupPlugins)
			break
		}
		expand := expandMasked(rt.pluginParams(info, b), rt.Masker)
		var err error
		if p.plugins, err = expandSpecs(plugin.Specs(c.Plugins), expand); err != nil {
			return plan.Fail(err)
		}
		if p.setup, err = expandSpecs(plugin.Specs(c.SetupPlugins), expand); err != nil {
			return plan.Fail(err)
		}
	default:
		return plan.Fail(fmt.Errorf("internal error: component %s has plugin lists from %q", info.Name, info.Lists))
	}
	if info.Verb == plan.VerbDeploy {
		p.vanished = plugin.Vanished(rec, p.plugins, p.setup)
	}
	if !info.ReadOnly {
		if info.Verb == plan.VerbDeploy && rt.keepsData(info.Name) {
			// The data folder is decided before the lists are recorded: a
			// state that records them takes a folder an earlier gantry
			// left unmarked (workspace.PluginRoot), so a refused run must
			// not record them.
			if _, err := rt.pluginRoot(ctx, env, info); err != nil {
				return plan.Fail(err)
			}
		}
		var plugins, setup []state.PluginInstance
		if info.Verb == plan.VerbDeploy {
			m := b.exp.Map()
			plugins, setup = plugin.ToRecord(append(append([]*plugin.Spec(nil), p.vanished...), p.plugins...), m), plugin.ToRecord(p.setup, m)
		}
		if err := rt.markInFlight(info, b.exp, plugins, setup); err != nil {
			return plan.Fail(err)
		}
	}
	if err := rt.render(ctx, env, info, c, b.exp); err != nil {
		return failure(ctx, err)
	}
	if err := rt.writeDeployment(info, p, b.exp); err != nil {
		return plan.Fail(fmt.Errorf("write the deployment file: %w", err))
	}
	return plan.OkWith(p)
}

// pluginParams is what expands a component's plugin arguments and inputs: its
// begin step's parameters, or, where begin expanded none, the outputs and
// locked parameters it sees.
func (rt *Runtime) pluginParams(info *plan.Component, b *begun) *params.Expanded {
	if b.exp != nil {
		return b.exp
	}
	return params.Recorded(info.Name, nil, rt.Outputs, rt.Locked)
}

// writeDeployment writes the component's deployment file: its parameters
// and plugin lists as JSON (DEPLOYMENT). It holds secrets: owner only.
func (rt *Runtime) writeDeployment(info *plan.Component, p *prepared, exp *params.Expanded) error {
	doc := map[string]any{"component": info.Name, "verb": info.Verb, "plugins": p.plugins, "setupPlugins": p.setup}
	if exp != nil {
		doc["parameters"] = exp.Map()
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	path := rt.deploymentFile(info.Name)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

func (rt *Runtime) deploymentFile(comp string) string {
	return filepath.Join(rt.Dirs.GenDir(comp), "deployment.json")
}

// instance is what the component's plugin instances run with; env hears
// where their data is kept when that needs saying.
func (rt *Runtime) instance(ctx context.Context, env plan.Env, info *plan.Component, exp *params.Expanded) *plugin.Instance {
	in := &plugin.Instance{
		Component:       info.Name,
		Dir:             info.Dir,
		RootDir:         rt.StackDir,
		GenDir:          rt.Dirs.GenDir(info.Name),
		Root:            func() (string, error) { return rt.pluginRoot(ctx, env, info) },
		ExportDir:       rt.Dirs.ExportDir(info.Name),
		ProductDir:      info.ProductDir,
		SpecVersion:     info.SpecVersion,
		DeployedVersion: info.DeployedVersion,
		Templates:       info.Templates,
		Deployment:      rt.deploymentFile(info.Name),
	}
	if exp != nil {
		in.Params = exp.Map()
	}
	return in
}

// produced is what an entry hands to the component's record step: the
// outputs it printed (Outputs: blocks) or reported itself, and what it
// provides.
type produced struct {
	raw      map[string]string
	provides []string
	direct   map[string]string
	secret   []string
}

// reportTo is a plugin's Report: what it reports goes into out, its secret
// values into the masker before anything can print them.
func (rt *Runtime) reportTo(out *produced) func(values map[string]string, secret []string) {
	var mu sync.Mutex
	return func(values map[string]string, secret []string) {
		mu.Lock()
		defer mu.Unlock()
		for _, k := range secret {
			rt.Masker.Add(values[k])
			out.secret = append(out.secret, k)
		}
		for k, v := range values {
			out.direct[k] = v
		}
	}
}

// entry carries out one entry of a plugin list: a plugin instance, or a
// gate, delay or wait, which run as the steps of those kinds do. Its on_fail
// applies as a step's.
func (rt *Runtime) entry(ctx context.Context, env plan.Env, n *plan.Node, s plan.Entry) plan.Result {
	info, err := rt.comp(s.Component)
	if err != nil {
		return plan.Fail(err)
	}
	b := begunOf(env, info.Name)
	p, _ := env.Result(info.Name + "/" + info.Verb).Data.(*prepared)
	var spec *plugin.Spec
	if p != nil {
		spec = p.at(s.List, s.Index)
	}
	if spec == nil {
		return plan.Fail(fmt.Errorf("internal error: no entry %s %v in the plugin lists of %s", s.List, s.Index, info.Name))
	}
	var label string
	if s.Kind() == plan.KindPlugin && s.List != plan.ListVanished && spec.Label == "" && hasValues(n.Label) {
		// The plan's label names the values; the run knows them.
		if l := s.Action + " " + spec.Title(); l != n.Label {
			env.Note(plan.Note{Kind: plan.NoteLabel, Value: l})
			label = l
		}
	}
	var res plan.Result
	switch s.Kind() {
	case plan.KindStage:
		res = rt.stageRun(ctx, env, n, info, b, s, spec)
	case plan.KindGate:
		msg := strings.Join(spec.Args, " ")
		if msg == "" {
			msg = "go on with " + s.Action + " of " + info.Name + "?"
		}
		res = gate(env, msg)
	case plan.KindDelay:
		res = entryDelay(ctx, spec)
	case plan.KindProbe:
		res = rt.entryWait(ctx, env, info, b, spec)
	default:
		// Retries come before on_fail: it applies to the last attempt.
		res = limited(ctx, env, s.Limits, func(ctx context.Context, env plan.Env) plan.Result { return rt.instanceRun(ctx, env, info, b, s, spec) })
	}
	if res.Status == plan.Failed {
		res = onFail(res, s.OnFail, labelOr(label, n), env)
	}
	res.Label = label
	return res
}

// entryDelay waits the seconds of a delay entry, whatever the action.
func entryDelay(ctx context.Context, spec *plugin.Spec) plan.Result {
	if len(spec.Args) != 1 {
		return plan.Fail(fmt.Errorf("delay takes one argument, seconds"))
	}
	secs, err := strconv.ParseFloat(spec.Args[0], 64)
	wait, ok := manifest.Seconds(secs)
	if err != nil || !ok {
		return plan.Fail(fmt.Errorf("delay %q: expected a positive number of seconds of at most %d", spec.Args[0], int64(manifest.MaxSeconds)))
	}
	return delay(ctx, wait)
}

// entryWait waits, on deploy, until the URL of an http entry answers 2xx or
// 3xx, or the host:port of a tcp entry accepts a connection: 5 minutes at
// most, or the entry's second argument in seconds.
func (rt *Runtime) entryWait(ctx context.Context, env plan.Env, info *plan.Component, b *begun, spec *plugin.Spec) plan.Result {
	if len(spec.Args) == 0 {
		return plan.Fail(fmt.Errorf("%s takes a target", spec.Name))
	}
	timeout := time.Duration(manifest.DefaultProbeTimeout) * time.Second
	if len(spec.Args) > 1 {
		secs, err := strconv.ParseFloat(spec.Args[1], 64)
		var ok bool
		if timeout, ok = manifest.Seconds(secs); err != nil || !ok {
			return plan.Fail(fmt.Errorf("%s timeout %q: expected a positive number of seconds of at most %d", spec.Name, spec.Args[1], int64(manifest.MaxSeconds)))
		}
	}
	args, action := map[string]any{"url": spec.Args[0]}, "get_wait"
	if spec.Name == "tcp" {
		args, action = map[string]any{"address": spec.Args[0]}, "connect_wait"
	}
	return rt.probe(ctx, env, spec.Name, action, args, timeout, info.Dir, rt.processEnv(info, b.exp), env.Stream())
}

// instanceRun runs an entry's plugin: a built-in, or an executable by the
// sow contract.
func (rt *Runtime) instanceRun(ctx context.Context, env plan.Env, info *plan.Component, b *begun, s plan.Entry, spec *plugin.Spec) plan.Result {
	var p plugin.Plugin = plugin.Executable{Path: s.Source}
	if s.Source == plan.SourceBuiltin {
		var ok bool
		if p, ok = plugin.Lookup(spec.Name); !ok {
			return plan.Fail(fmt.Errorf("plugin %s: not built into this gantry", spec.Name))
		}
	}
	inst := rt.instance(ctx, env, info, b.exp)
	if s.List == plan.ListVanished {
		env.Logf("instance %s is no longer in the plugin list: deleting it", spec.InstanceName())
	}
	// Plugins print Outputs: blocks on either stream (sow's contract does not
	// say): each stream is captured, through a writer of its own.
	keys := secretKeys(rt.Res.Component(info.Name))
	stdout := newCaptureWriter(env.Stream(), rt.Masker, keys)
	stderr := newCaptureWriter(env.Stream(), rt.Masker, keys)
	out := &produced{direct: map[string]string{}}
	err := p.Run(ctx, &plugin.Call{
		Action: s.Action, Entry: spec, Instance: inst, Dir: info.Dir, Env: rt.processEnv(info, b.exp),
		Stdout: stdout, Stderr: stderr, Report: rt.reportTo(out), Outside: env.Outside,
	})
	stdout.Flush()
	stderr.Flush()
	if err != nil {
		if s.List == plan.ListVanished {
			return failure(ctx, fmt.Errorf("delete vanished instance %s: %w", spec.InstanceName(), err))
		}
		return failure(ctx, fmt.Errorf("plugin %s: %w", spec.Title(), err))
	}
	if s.List == plan.ListVanished {
		// Its record goes with the record step; its folder goes now.
		dir, err := inst.StateDir(spec)
		if err != nil {
			return plan.Fail(err)
		}
		if err := os.RemoveAll(dir); err != nil {
			return plan.Fail(err)
		}
	}
	if err := errors.Join(stdout.capture.Err(), stderr.capture.Err()); err != nil {
		return plan.Fail(fmt.Errorf("plugin %s: %w", spec.Title(), err))
	}
	out.raw = stderr.capture.Outputs()
	for k, v := range stdout.capture.Outputs() {
		out.raw[k] = v
	}
	out.provides = append(stdout.capture.Provides(), stderr.capture.Provides()...)
	return plan.OkWith(out)
}

// record ends a component's plugin lists. After a deploy, what the entries
// printed or reported becomes the component's outputs, recorded with the
// lists; after an undeploy the state forgets the lists and the instances'
// state folders go.
func (rt *Runtime) record(ctx context.Context, env plan.Env, n *plan.Node, s plan.Record) plan.Result {
	info, err := rt.comp(s.Component)
	if err != nil {
		return plan.Fail(err)
	}
	b := begunOf(env, info.Name)
	p, _ := env.Result(info.Name + "/" + info.Verb).Data.(*prepared)
	if p == nil || info.ReadOnly {
		return plan.Ok()
	}
	if info.Verb == plan.VerbUndeploy {
		rt.Recorder.UpdateComponent(info.Name, func(c *state.Component) { c.Plugins, c.SetupPlugins = nil, nil })
		keyed := plugin.Keyed(append(append([]*plugin.Spec(nil), p.plugins...), p.setup...))
		if len(keyed) == 0 || !rt.keepsData(info.Name) {
			// No instance kept data in the component's folder (the
			// kubernetes and helm plugins keep none): nothing to remove,
			// and no folder to ask for after the delete ran.
			return plan.Ok()
		}
		root, err := rt.pluginRoot(ctx, env, info)
		if err != nil {
			return plan.Fail(err)
		}
		inst := rt.instance(ctx, env, info, b.exp)
		for _, spec := range keyed {
			if dir, err := inst.StateDir(spec); err == nil {
				if err := os.RemoveAll(dir); err != nil {
					return plan.Fail(err)
				}
			}
		}
		// Emptied: the next deployment from this folder takes it.
		if err := rt.Dirs.ReleasePluginRoot(ctx, root); err != nil {
			return plan.Fail(err)
		}
		return plan.Ok()
	}
	raw := map[string]string{}
	var provides, secret []string
	var undeleted []*plugin.Spec
	for _, id := range n.Inputs {
		res := env.Result(id)
		// A vanished instance whose deletion failed and went on (on_fail:
		// next) still exists: it stays recorded, to be deleted later.
		if e, ok := rt.Plan.Node(id).Spec.(plan.Entry); ok && e.List == plan.ListVanished && (res.Warning != "" || res.Info != "") {
			if spec := p.at(e.List, e.Index); spec != nil {
				undeleted = append(undeleted, spec)
			}
		}
		out, ok := res.Data.(*produced)
		if !ok {
			continue
		}
		for k, v := range out.raw {
			raw[k] = v
		}
		for k, v := range out.direct {
			raw[k] = v
		}
		provides = append(provides, out.provides...)
		secret = append(secret, out.secret...)
	}
	kept := &prepared{plugins: append(undeleted, p.plugins...), setup: p.setup}
	if err := rt.recordOutputs(env, info, rt.Res.Component(info.Name), b, raw, secret, provides, kept); err != nil {
		return plan.Fail(err)
	}
	return plan.Ok()
}

// expandMasked returns an expansion of values with exp's parameters that
// makes a value computed from a secret (#{db.password.lowerAscii()}, a
// template over one) a secret of the run's masker, as a step's argument is
// (expander.expand): a plugin may print it, an API server's error quote it.
// A value that only substitutes a secret needs nothing more: the masker
// knows the secret and its usual encodings.
func expandMasked(exp *params.Expanded, m *secret.Masker) func(string) (string, error) {
	plain := exp.Resolver()
	return func(v string) (string, error) {
		if !computesWithValues(v) {
			return params.Expand(v, plain)
		}
		r, readSecret := exp.SecretTracking()
		out, err := params.Expand(v, r)
		if err == nil && readSecret() && m != nil {
			m.AddComputed(out)
		}
		return out, err
	}
}

// expandSpecs returns the specs with ${...} and #{...} expanded in their
// arguments and in the strings of their configs.
func expandSpecs(specs []*plugin.Spec, expand func(string) (string, error)) ([]*plugin.Spec, error) {
	if specs == nil {
		return nil, nil
	}
	out := make([]*plugin.Spec, len(specs))
	for i, s := range specs {
		c := *s
		c.Args = make([]string, len(s.Args))
		for j, a := range s.Args {
			v, err := expand(a)
			if err != nil {
				return nil, fmt.Errorf("plugin %s argument %q: %w", s.Name, a, err)
			}
			c.Args[j] = v
		}
		cfg, err := expandValue(s.Config, expand)
		if err != nil {
			return nil, fmt.Errorf("plugin %s config: %w", s.Name, err)
		}
		c.Config = cfg
		if c.Children, err = expandSpecs(s.Children, expand); err != nil {
			return nil, err
		}
		out[i] = &c
	}
	return out, nil
}

func expandValue(v any, expand func(string) (string, error)) (any, error) {
	switch x := v.(type) {
	case string:
		return expand(x)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, val := range x {
			e, err := expandValue(val, expand)
			if err != nil {
				return nil, err
			}
			m[k] = e
		}
		return m, nil
	case []any:
		l := make([]any, len(x))
		for i, val := range x {
			e, err := expandValue(val, expand)
			if err != nil {
				return nil, err
			}
			l[i] = e
		}
		return l, nil
	}
	return v, nil
}
