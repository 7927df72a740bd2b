package terraform

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/plugin"
)

func TestDeclaredVariables(t *testing.T) {
	dir := t.TempDir()
	tf := `variable "cidr" { type = string }
variable "zones" {
  description = "a { brace } in text"
  type        = list(string)
}
variable "untyped" {}
variable "count_of" {
  type = number
  validation {
    condition = var.count_of > 0
    error_message = "positive"
  }
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(tf), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := declaredVariables(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"cidr": "string", "zones": "list", "untyped": "", "count_of": "number"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("declared (-want +got):\n%s", diff)
	}
}

func TestParamValue(t *testing.T) {
	tests := []struct {
		value, typ, want string
	}{
		{"10.0.0.0/16", "string", `"10.0.0.0/16"`},
		{`["a","b"]`, "string", `"[\"a\",\"b\"]"`},
		{`["a","b"]`, "list", `["a","b"]`},
		{`{"k":"v"}`, "map", `{"k":"v"}`},
		{`not json`, "list", `"not json"`},
		{"3", "number", `"3"`},
		{"3", "", `"3"`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(paramValue(tt.value, tt.typ))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tt.want {
			t.Errorf("paramValue(%q, %q) = %s, want %s", tt.value, tt.typ, b, tt.want)
		}
	}
}

// fakeTerraform is a terraform binary for tests: it notes its arguments and
// the variables file it was given, and answers output -json.
const fakeTerraform = `#!/bin/sh
echo "$*" >> "$CALLS"
env | grep '^TF_' | sort > "$CALLS.env"
case "$1" in
init) echo "Terraform has been successfully initialized!" ;;
apply)
  for a in "$@"; do case "$a" in -var-file=*) cat "${a#-var-file=}" > "$CALLS.vars" ;; esac; done
  echo "Apply complete! Resources: 1 added, 0 changed, 0 destroyed." ;;
destroy) echo "Destroy complete! Resources: 1 destroyed." ;;
output) echo '{"vpc_id":{"sensitive":false,"type":"string","value":"vpc-1"},"token":{"sensitive":true,"type":"string","value":"tok-9"},"zones":{"sensitive":false,"type":["list","string"],"value":["a","b"]}}' ;;
esac
`

// TestRunsTheBinary applies and destroys a module with a fake terraform: the
// commands and their arguments, variables from parameters through an owner-
// only file that is gone afterwards, outputs reported (sensitive ones
// secret), and terraform run in gantry's process registry.
func TestRunsTheBinary(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	module := filepath.Join(dir, "net")
	stateRoot := filepath.Join(dir, "state")
	for _, d := range []string{bin, module} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "terraform"), []byte(fakeTerraform), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(module, "main.tf"), []byte(`variable "cidr" { type = string }`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	calls := filepath.Join(dir, "calls")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	registryFile := filepath.Join(dir, "running")
	registry, err := component.OpenRegistry(registryFile, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer registry.Close()
	ctx := component.WithRegistry(context.Background(), registry)
	var reported map[string]string
	var secret []string
	call := func(action string) error {
		return tf{}.Run(ctx, &plugin.Call{
			Action:   action,
			Entry:    &plugin.Spec{Name: "terraform", Key: "terraform", Config: map[string]any{"dir": "."}},
			Instance: &plugin.Instance{Component: "net", Dir: module, StateRoot: stateRoot, Params: map[string]string{"cidr": "10.0.0.0/16"}},
			// No plugin cache of the machine's (plugincache.go).
			Env:    append(os.Environ(), "HOME="+dir, "XDG_CONFIG_HOME=", "TF_PLUGIN_CACHE_DIR=", "TF_CLI_CONFIG_FILE=", "TERRAFORM_CONFIG=", "CALLS="+calls, "TF_LOG=TRACE", "TF_CLI_ARGS_apply=-target=x", "TF_WORKSPACE=other", "TF_VAR_keep=1"),
			Stdout: io.Discard, Stderr: io.Discard,
			Report: func(v map[string]string, s []string) { reported, secret = v, s },
		})
	}
	if err := call(plugin.ActionDeploy); err != nil {
		t.Fatal(err)
	}
	if err := call(plugin.ActionDelete); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(calls)
	state := filepath.Join(stateRoot, "terraform", "terraform.tfstate")
	vars := filepath.Join(stateRoot, "terraform", "gantry.tfvars.json")
	want := []string{
		"init -no-color -input=false -upgrade=false",
		"apply -no-color -input=false -auto-approve -state=" + state + " -var-file=" + vars,
		"output -no-color -json -state=" + state,
		"init -no-color -input=false -upgrade=false",
		"destroy -no-color -input=false -auto-approve -state=" + state + " -var-file=" + vars,
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSpace(string(data)), "\n")); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	if got, _ := os.ReadFile(calls + ".vars"); string(got) != `{"cidr":"10.0.0.0/16"}` {
		t.Errorf("variables file: %s", got)
	}
	if _, err := os.Stat(vars); !os.IsNotExist(err) {
		t.Errorf("the variables file is left: %v", err)
	}
	if diff := cmp.Diff(map[string]string{"vpc_id": "vpc-1", "token": "tok-9", "zones": `["a","b"]`}, reported); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"token"}, secret); diff != "" {
		t.Errorf("secret outputs (-want +got):\n%s", diff)
	}
	// terraform is told it runs in automation; what would change its commands
	// or pour its logs (which hold secrets) into the display is left out.
	env, _ := os.ReadFile(calls + ".env")
	for _, want := range []string{"TF_IN_AUTOMATION=1", "TF_INPUT=0", "TF_DATA_DIR=" + filepath.Join(stateRoot, "terraform", ".terraform"), "TF_VAR_keep=1"} {
		if !strings.Contains(string(env), want+"\n") {
			t.Errorf("terraform's environment lacks %s:\n%s", want, env)
		}
	}
	for _, not := range []string{"TF_LOG", "TF_CLI_ARGS", "TF_WORKSPACE"} {
		if strings.Contains(string(env), not) {
			t.Errorf("terraform's environment has %s:\n%s", not, env)
		}
	}
	noted, _ := os.ReadFile(registryFile)
	if n := strings.Count(string(noted), "+ "); n != 5 {
		t.Errorf("the registry noted %d terraform processes, want 5:\n%s", n, noted)
	}
}

// TestOutputValues: strings are themselves; lists, maps and numbers are
// compact JSON, not a piece of terraform's indented document; sensitive
// outputs are secret.
func TestOutputValues(t *testing.T) {
	data := []byte(`{
  "list": {"sensitive": false, "type": ["list", "string"], "value": [
      "a",
      "b"
    ]},
  "map": {"sensitive": true, "type": ["map", "string"], "value": {
      "k": "v"
    }},
  "n": {"sensitive": false, "type": "number", "value": 2},
  "s": {"sensitive": false, "type": "string", "value": "text"}
}`)
	values, secret, err := outputValues(data)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"list": `["a","b"]`, "map": `{"k":"v"}`, "n": "2", "s": "text"}
	if diff := cmp.Diff(want, values); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"map"}, secret); diff != "" {
		t.Errorf("secret (-want +got):\n%s", diff)
	}
}
