// Package terraform is gantry's terraform plugin: it applies and destroys a
// module folder with the terraform binary (through hashicorp/terraform-exec),
// keeps the state in the plugin instance's STATEDIR, and turns
// "terraform output -json" into component outputs.
package terraform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"

	"github.com/gantry-dev/gantry/internal/plugin"
)

func init() { plugin.RegisterList("terraform", tf{}) }

type tf struct{}

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

// tfVarName turns a parameter name into a terraform variable name.
func tfVarName(name string) string {
	return strings.NewReplacer(".", "_", "-", "_", "/", "_").Replace(name)
}

func (tf) Run(ctx context.Context, action string, s *plugin.Spec, env *plugin.Env, out io.Writer) error {
	if action == plugin.ActionPrepare || action == plugin.ActionCleanup {
		return nil
	}
	cfg, err := parseConfig(s.Config)
	if err != nil {
		return err
	}
	bin, err := exec.LookPath(cfg.Binary)
	if err != nil {
		return fmt.Errorf("the terraform binary %q is not on PATH", cfg.Binary)
	}
	dir := cfg.Dir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(env.Dir, dir)
	}
	stateDir, err := env.StateDir(s)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return err
	}
	t, err := tfexec.NewTerraform(dir, bin)
	if err != nil {
		return err
	}
	t.SetStderr(out)
	// The working data (providers, modules) and the state live in the
	// instance's state folder, not in the module's folder.
	vars := map[string]string{"TF_DATA_DIR": filepath.Join(stateDir, ".terraform")}
	for _, kv := range env.ProcessEnv {
		k, v, _ := strings.Cut(kv, "=")
		if !protected[k] {
			vars[k] = v
		}
	}
	if err := t.SetEnv(vars); err != nil {
		return err
	}
	statePath := filepath.Join(stateDir, "terraform.tfstate")
	declared, err := declaredVariables(dir)
	if err != nil {
		return err
	}
	byVarName := map[string]string{}
	for k, v := range env.Params {
		byVarName[tfVarName(k)] = v
	}
	// Values go in a variables file readable by the owner only, not on the
	// command line, where any user could read them (ps).
	values := map[string]any{}
	for name, typ := range declared {
		if v, ok := cfg.Vars[name]; ok {
			values[name] = v
		} else if v, ok := byVarName[name]; ok {
			values[name] = paramValue(v, typ)
		}
	}
	for k := range cfg.Vars {
		if _, ok := declared[k]; !ok {
			return fmt.Errorf("config vars: the module in %s declares no variable %q", dir, k)
		}
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
	// terraform-exec asks the binary for its version before the first
	// command; that is not for the reader.
	t.SetStdout(io.Discard)
	if _, _, err := t.Version(ctx, true); err != nil {
		return fmt.Errorf("terraform version: %w", err)
	}
	t.SetStdout(out)
	if err := t.Init(ctx, tfexec.Upgrade(false)); err != nil {
		return fmt.Errorf("terraform init: %w", err)
	}
	switch action {
	case plugin.ActionDelete:
		if err := t.Destroy(ctx, tfexec.State(statePath), tfexec.VarFile(varFile)); err != nil {
			return fmt.Errorf("terraform destroy: %w", err)
		}
		return nil
	case plugin.ActionDeploy:
		if err := t.Apply(ctx, tfexec.State(statePath), tfexec.VarFile(varFile)); err != nil {
			return fmt.Errorf("terraform apply: %w", err)
		}
		// The JSON holds sensitive values in clear: it is read, not shown.
		t.SetStdout(io.Discard)
		outs, err := t.Output(ctx, tfexec.State(statePath))
		if err != nil {
			return fmt.Errorf("terraform output: %w", err)
		}
		values, secret := outputValues(outs)
		if env.Outputs != nil {
			env.Outputs(values, secret)
		}
		return nil
	}
	return fmt.Errorf("unknown action %q", action)
}

// outputValues turns terraform outputs into component outputs: strings as
// they are, other values as JSON; sensitive ones are secret.
func outputValues(outs map[string]tfexec.OutputMeta) (map[string]string, []string) {
	values := make(map[string]string, len(outs))
	var secret []string
	for k, o := range outs {
		var s string
		if err := json.Unmarshal(o.Value, &s); err == nil {
			values[k] = s
		} else {
			values[k] = string(o.Value)
		}
		if o.Sensitive {
			secret = append(secret, k)
		}
	}
	sort.Strings(secret)
	return values, secret
}

// protected are the variables terraform-exec sets itself and refuses to take.
var protected = map[string]bool{
	"TF_APPEND_USER_AGENT": true, "TF_IN_AUTOMATION": true, "TF_INPUT": true, "TF_LOG": true,
	"TF_LOG_CORE": true, "TF_LOG_PATH": true, "TF_LOG_PROVIDER": true, "TF_REATTACH_PROVIDERS": true,
	"TF_DISABLE_PLUGIN_TLS": true, "TF_SKIP_PROVIDER_VERIFY": true, "TF_WORKSPACE": true,
	"TF_CLI_ARGS": true, "TF_CLI_ARGS_init": true, "TF_CLI_ARGS_apply": true, "TF_CLI_ARGS_destroy": true,
	"TF_CLI_ARGS_output": true, "TF_CLI_ARGS_plan": true, "CHECKPOINT_DISABLE": true,
}

var (
	variableRE = regexp.MustCompile(`(?m)^\s*variable\s+"([^"]+)"\s*\{`)
	typeRE     = regexp.MustCompile(`(?m)^\s*type\s*=\s*([a-z]+)`)
)

// declaredVariables maps the variables the module's *.tf files declare to
// the keyword of their type ("string", "number", "list", …; "" when the
// declaration has none).
func declaredVariables(dir string) (map[string]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no *.tf files in %s", dir)
	}
	out := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		text := string(data)
		for _, m := range variableRE.FindAllStringSubmatchIndex(text, -1) {
			name := text[m[2]:m[3]]
			body := block(text[m[1]:])
			typ := ""
			if t := typeRE.FindStringSubmatch(body); t != nil {
				typ = t[1]
			}
			out[name] = typ
		}
	}
	return out, nil
}

// block returns the text up to the brace that closes the block just opened.
func block(s string) string {
	depth := 1
	for i, r := range s {
		switch r {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return s[:i]
			}
		}
	}
	return s
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
