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
	stateDir := filepath.Join(env.StateRoot, s.InstanceName())
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return err
	}
	t, err := tfexec.NewTerraform(dir, bin)
	if err != nil {
		return err
	}
	t.SetStdout(out)
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
	var assignments []string
	for _, name := range declared {
		if v, ok := cfg.Vars[name]; ok {
			switch x := v.(type) {
			case string:
				assignments = append(assignments, name+"="+x)
			default:
				b, _ := json.Marshal(x)
				assignments = append(assignments, name+"="+string(b))
			}
		} else if v, ok := byVarName[name]; ok {
			assignments = append(assignments, name+"="+v)
		}
	}
	for k := range cfg.Vars {
		if !containsStr(declared, k) {
			return fmt.Errorf("config vars: the module in %s declares no variable %q", dir, k)
		}
	}
	if err := t.Init(ctx, tfexec.Upgrade(false)); err != nil {
		return fmt.Errorf("terraform init: %w", err)
	}
	switch action {
	case plugin.ActionDelete:
		opts := []tfexec.DestroyOption{tfexec.State(statePath)}
		for _, a := range assignments {
			opts = append(opts, tfexec.Var(a))
		}
		if err := t.Destroy(ctx, opts...); err != nil {
			return fmt.Errorf("terraform destroy: %w", err)
		}
		return nil
	case plugin.ActionDeploy:
		opts := []tfexec.ApplyOption{tfexec.State(statePath)}
		for _, a := range assignments {
			opts = append(opts, tfexec.Var(a))
		}
		if err := t.Apply(ctx, opts...); err != nil {
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

var variableRE = regexp.MustCompile(`(?m)^\s*variable\s+"([^"]+)"`)

// declaredVariables lists the variables the module's *.tf files declare.
func declaredVariables(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.tf"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no *.tf files in %s", dir)
	}
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, m := range variableRE.FindAllStringSubmatch(string(data), -1) {
			if !containsStr(out, m[1]) {
				out = append(out, m[1])
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}
