// Package terraform is gantry's terraform plugin: it applies and destroys a
// module folder with the terraform binary, keeps the state in the plugin
// instance's STATEDIR, and turns "terraform output -json" into component
// outputs. terraform runs as every process of gantry does (component.Run): in
// a process group of its own that cancellation stops as a whole, and noted
// in the run's process registry, so that a run killed meanwhile leaves the
// next one a process to wait for, not a second terraform on the same state.
package terraform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/plugin"
)

func init() { plugin.Register("terraform", tf{}, plugin.ForLists) }

type tf struct{}

// KeepsData: an instance's local state is in its STATEDIR.
func (tf) KeepsData() {}

// config is the instance config:
//
//	terraform: {config: {dir: tf, vars: {region: eu-west-1}, binary: terraform}}
//
// Each variable the module declares gets its value from vars, else from the
// component parameter of the same name (dots and dashes read as underscores).
type config struct {
	Dir    string
	Vars   map[string]any
	Binary string
}

func parseConfig(v any) (config, error) {
	c := config{Dir: ".", Binary: "terraform"}
	if v == nil {
		return c, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return c, fmt.Errorf("config must be a mapping with dir, vars, binary; got %T", v)
	}
	for k, x := range m {
		switch k {
		case "dir":
			s, ok := x.(string)
			if !ok || s == "" {
				return c, errors.New("config dir must be a folder")
			}
			c.Dir = s
		case "binary":
			s, ok := x.(string)
			if !ok || s == "" {
				return c, errors.New("config binary must be a path or a command name")
			}
			c.Binary = s
		case "vars":
			vars, ok := x.(map[string]any)
			if !ok {
				return c, errors.New("config vars must be a mapping")
			}
			c.Vars = vars
		default:
			return c, fmt.Errorf("unknown config field %q (expected dir, vars, binary)", k)
		}
	}
	return c, nil
}

func (tf) Actions() []string { return nil }

func (tf) Validate(string, map[string]any) error {
	return errors.New("terraform serves plugin lists only")
}

// withheld reports the environment variables terraform does not get.
func withheld(k string) bool {
	switch k {
	case "TF_WORKSPACE", "TF_REATTACH_PROVIDERS", "TF_DISABLE_PLUGIN_TLS", "TF_SKIP_PROVIDER_VERIFY", "TF_APPEND_USER_AGENT":
		return true
	}
	return strings.HasPrefix(k, "TF_LOG") || strings.HasPrefix(k, "TF_CLI_ARGS")
}

// run runs one terraform command in the module's folder. When it fails, the
// error says the first error terraform printed (diagnostics).
func run(ctx context.Context, c *plugin.Call, bin, dir string, env []string, stdout *bytes.Buffer, args ...string) error {
	out := c.Stdout
	if stdout != nil {
		out = stdout
	}
	diag := &diagnostics{next: c.Stderr}
	err := component.Run(ctx, component.Process{
		Args: append([]string{bin}, args...), Dir: dir, Env: env, Stdout: out, Stderr: diag,
	})
	return diag.explain(err)
}

// automation is what terraform is told in its environment: no prompts, no
// version checks against the network, and the working data (providers,
// modules) in the instance's state folder, not in the module's folder.
// Variables that would change what the commands do or print behind gantry's
// back (TF_CLI_ARGS*, TF_WORKSPACE) or pour terraform's logs — which hold
// secrets gantry does not know — into the display (TF_LOG*) are left out, as
// terraform-exec leaves them out.
func automation(env []string, dataDir string) []string {
	kept := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !withheld(k) {
			kept = append(kept, kv)
		}
	}
	return component.Environ(kept, true, []string{
		"TF_IN_AUTOMATION=1",
		"TF_INPUT=0",
		"CHECKPOINT_DISABLE=1",
		"TF_DATA_DIR=" + dataDir,
	})
}

func (tf) Run(ctx context.Context, c *plugin.Call) error {
	if c.Entry == nil || c.Instance == nil {
		return errors.New("terraform serves plugin lists only")
	}
	if c.Action == plugin.ActionPrepare || c.Action == plugin.ActionCleanup {
		return nil
	}
	cfg, err := parseConfig(c.Entry.Config)
	if err != nil {
		return err
	}
	bin, err := exec.LookPath(cfg.Binary)
	if err != nil {
		return fmt.Errorf("the terraform binary %q is not on PATH", cfg.Binary)
	}
	dir := cfg.Dir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(c.Instance.Dir, dir)
	}
	stateDir, err := c.Instance.StateDir(c.Entry)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return err
	}
	env := automation(c.Env, filepath.Join(stateDir, ".terraform"))
	statePath := filepath.Join(stateDir, "terraform.tfstate")
	declared, err := declaredVariables(dir, c.Instance.Dir)
	if err != nil {
		return err
	}
	// Parameters named alike (db.host, db-host, db_host) give one
	// variable: with different values, which would win is no rule anyone
	// wrote down, so it is refused (config vars says which).
	byVarName, from := map[string]string{}, map[string]string{}
	var clashes []error
	for _, k := range slices.Sorted(maps.Keys(c.Instance.Params)) {
		name, v := tfVarName(k), c.Instance.Params[k]
		prev, seen := from[name]
		if !seen {
			byVarName[name], from[name] = v, k
			continue
		}
		_, isDeclared := declared[name]
		_, inVars := cfg.Vars[name]
		if byVarName[name] != v && isDeclared && !inVars {
			clashes = append(clashes, fmt.Errorf("parameters %s and %s both give the variable %s, with different values: say which in the plugin's config vars, or rename one", prev, k, name))
		}
	}
	if len(clashes) > 0 {
		return errors.Join(clashes...)
	}
	// Values go in a variables file readable by the owner only, not on the
	// command line, where any user could read them (ps).
	values := map[string]any{}
	for name, typ := range declared {
		if v, ok := cfg.Vars[name]; ok {
			values[name] = v
		} else if v, ok := byVarName[name]; ok && (v != "" || typ == "" || typ == "string") {
			// An empty parameter (empty: allow, the Hub's optional one)
			// is no number, bool or collection: for those the module's
			// default stands, or terraform says the variable is
			// required. A string gets "", as it always did.
			values[name] = paramValue(v, typ)
		}
	}
	if err := undeclaredVars(cfg, declared, shown(c.Instance.Dir, dir)); err != nil {
		return err
	}
	varFile := filepath.Join(stateDir, "gantry.tfvars.json")
	data, err := json.Marshal(values)
	if err != nil {
		return fmt.Errorf("config vars: %w", err)
	}
	if err := os.WriteFile(varFile, data, 0o600); err != nil {
		return err
	}
	defer os.Remove(varFile)
	if err := initialize(ctx, c, bin, dir, env); err != nil {
		return err
	}
	switch c.Action {
	case plugin.ActionDelete:
		if err := run(ctx, c, bin, dir, env, nil, "destroy", "-no-color", "-input=false", "-auto-approve", "-state="+statePath, "-var-file="+varFile); err != nil {
			return fmt.Errorf("terraform destroy: %w", err)
		}
		return nil
	case plugin.ActionDeploy:
		if err := run(ctx, c, bin, dir, env, nil, "apply", "-no-color", "-input=false", "-auto-approve", "-state="+statePath, "-var-file="+varFile); err != nil {
			return fmt.Errorf("terraform apply: %w", err)
		}
		// The JSON holds sensitive values in clear: it is read, not shown.
		var outs bytes.Buffer
		if err := run(ctx, c, bin, dir, env, &outs, "output", "-no-color", "-json", "-state="+statePath); err != nil {
			return fmt.Errorf("terraform output: %w", err)
		}
		values, secret, err := outputValues(outs.Bytes())
		if err != nil {
			return fmt.Errorf("terraform output: %w", err)
		}
		if c.Report != nil {
			c.Report(values, secret)
		}
		return nil
	}
	return fmt.Errorf("unknown action %q", c.Action)
}

// undeclaredVars is the error about the variables config vars sets that
// the module in folder (as messages name it) does not declare, nil when
// there are none.
func undeclaredVars(cfg config, declared map[string]string, folder string) error {
	module := "the module in " + folder
	if folder == "." {
		module = "the module"
	}
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(cfg.Vars)) {
		if _, ok := declared[k]; !ok {
			errs = append(errs, fmt.Errorf("config vars: %s declares no variable %q", module, k))
		}
	}
	return errors.Join(errs...)
}

// CheckEntry finds before anything runs what a deploy of an entry would
// refuse (plugin.EntryChecker): a config that does not parse, and — when the
// module is the component's folder or one under it and the component
// renders no templates, so that the files are the ones the deploy reads — a
// module folder without terraform files, a file terraform cannot read
// either (a string not closed, at its line and column), a variable config
// vars sets that the module does not declare. A module rendered from
// templates (main.tf.template), or in a folder outside the component's (one
// a component before it may write), is judged when it runs; so is a folder
// named by a ${reference}.
func (tf) CheckEntry(dir string, s *plugin.Spec, templated bool) error {
	cfg, err := parseConfig(s.Config)
	if err != nil {
		return err
	}
	if templated || strings.Contains(cfg.Dir, "${") {
		return nil
	}
	module := cfg.Dir
	if !filepath.IsAbs(module) {
		module = filepath.Join(dir, module)
	}
	if rel, err := filepath.Rel(dir, module); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil
	}
	declared, err := declaredVariables(module, dir)
	if err != nil {
		return err
	}
	return undeclaredVars(cfg, declared, shown(dir, module))
}

// initialize runs "terraform init" in the module's folder, one init at a
// time on a shared plugin cache (plugincache.go).
func initialize(ctx context.Context, c *plugin.Call, bin, dir string, env []string) error {
	if caches := pluginCaches(env, dir, c.Stderr); len(caches) > 0 {
		unlock, err := lockPluginCaches(ctx, caches, c.Stderr, c.Outside)
		if err != nil {
			return fmt.Errorf("terraform init: %w", err)
		}
		defer unlock()
	}
	watch := &phraseWatcher{next: c.Stderr, phrase: backendChanged}
	init := *c
	init.Stderr = watch
	if err := run(ctx, &init, bin, dir, env, nil, "init", "-no-color", "-input=false", "-upgrade=false"); err != nil {
		if watch.Seen() {
			return backendChangedError(dir, dataDir(env), err)
		}
		return fmt.Errorf("terraform init: %w", err)
	}
	return nil
}

// dataDir is the TF_DATA_DIR of terraform's environment.
func dataDir(env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "TF_DATA_DIR="); ok {
			return v
		}
	}
	return ".terraform"
}

// tfVarName turns a parameter name into a terraform variable name.
func tfVarName(name string) string {
	return strings.NewReplacer(".", "_", "-", "_", "/", "_").Replace(name)
}

// output is one value of "terraform output -json".
type output struct {
	Sensitive bool            `json:"sensitive"`
	Value     json.RawMessage `json:"value"`
}

// outputValues turns terraform outputs into component outputs: strings as
// they are, other values as compact JSON; sensitive ones are secret.
func outputValues(data []byte) (map[string]string, []string, error) {
	var outs map[string]output
	if err := json.Unmarshal(data, &outs); err != nil {
		return nil, nil, fmt.Errorf("unexpected output: %w", err)
	}
	values := make(map[string]string, len(outs))
	var secret []string
	for k, o := range outs {
		var s string
		if err := json.Unmarshal(o.Value, &s); err == nil {
			values[k] = s
		} else {
			// Compact, as fromTfVar's /json gives it: not a piece of
			// terraform's indented document, whose layout a terraform
			// upgrade may change.
			var b bytes.Buffer
			if err := json.Compact(&b, o.Value); err != nil {
				return nil, nil, fmt.Errorf("output %s: %w", k, err)
			}
			values[k] = b.String()
		}
		if o.Sensitive {
			secret = append(secret, k)
		}
	}
	sort.Strings(secret)
	return values, secret, nil
}

// paramValue is a parameter's value for a variable: parameters are text, as
// with -var on the command line, where terraform reads the value of a
// complex type (list, map, object, …) as an expression. The variables file
// is JSON, so a value of such a type that is JSON goes in as JSON.
func paramValue(v, typ string) any {
	switch typ {
	case "", "string", "number", "bool":
		return v
	}
	if json.Valid([]byte(v)) {
		return json.RawMessage(v)
	}
	return v
}
