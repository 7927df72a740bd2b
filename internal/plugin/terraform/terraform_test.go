package terraform

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/plugin"
)

// TestDeclaredVariables: the variables a module declares, with the first
// word of their type, in its *.tf files (labels quoted or not; strings,
// heredocs and comments skipped as terraform reads them) and its *.tf.json
// files.
func TestDeclaredVariables(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  map[string]string
	}{
		{"blocks", map[string]string{"main.tf": `variable "cidr" { type = string }
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
`}, map[string]string{"cidr": "string", "zones": "list", "untyped": "", "count_of": "number"}},
		{"unquoted label", map[string]string{"main.tf": "variable region {\n  type    = string\n  default = \"us-east-1\"\n}\n"},
			map[string]string{"region": "string"}},
		{"braces and quotes in strings", map[string]string{"main.tf": `variable "zones" {
  description = "Zones, like [\"a\"] (not a map like {a = 1})}"
  type        = list(string)
}
variable "tpl" {
  default = "${jsonencode({a = "}"})} and $${literal} %{ if true }x%{ endif }"
  type    = map(string)
}
`}, map[string]string{"zones": "list", "tpl": "map"}},
		{"heredoc and comments", map[string]string{"main.tf": `variable "doc" {
  description = <<-EOT
    variable "fake" {
    }
  EOT
  type = set(string)
}
# variable "hashed" {}
// variable "slashed" {}
/* variable "starred" {
} */
variable "after" { type = bool }
`}, map[string]string{"doc": "set", "after": "bool"}},
		{"object type with a type attribute", map[string]string{"main.tf": `variable "o" {
  type = object({ type = string, n = number })
}
`}, map[string]string{"o": "object"}},
		{"JSON", map[string]string{"main.tf": `variable "a" {}`,
			"variables.tf.json": `{"variable": {"size": {"type": "number", "default": 1}, "zones": {"type": "list(string)"}, "free": {}}}`},
			map[string]string{"a": "", "size": "number", "zones": "list", "free": ""}},
		{"byte order mark", map[string]string{"main.tf": "\ufeffvariable \"first\" { type = list(string) }\n", "v.tf.json": "\ufeff{\"variable\": {\"j\": {}}}"},
			map[string]string{"first": "list", "j": ""}},
		{"override files last, their type only where set", map[string]string{
			"a_override.tf":    "variable \"zones\" { default = [] }\nvariable \"size\" { type = number }\n",
			"override.tf.json": `{"variable": {"name": {"type": "string"}}}`,
			"z.tf":             "variable \"zones\" { type = list(string) }\nvariable \"size\" { type = string }\nvariable \"name\" {}\n",
		}, map[string]string{"zones": "list", "size": "number", "name": "string"}},
		{"files terraform ignores", map[string]string{"main.tf": `variable "a" {}`, ".#main.tf": "{{{ an editor's lock", "#x.tf#": "", "b.tf~": "variable \"backup\" {}"},
			map[string]string{"a": ""}},
		{"JSON blocks as a list", map[string]string{"v.tf.json": `{"variable": [{"x": {"type": "string"}}, {"y": {}}], "output": {}}`},
			map[string]string{"x": "string", "y": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := declaredVariables(dir, dir)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("declared (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeclaredVariablesErrors: a file that cannot be read as terraform is
// said, with its name.
func TestDeclaredVariablesErrors(t *testing.T) {
	tests := []struct{ file, text, want string }{
		{"main.tf", "variable \"a\" {\n  description = \"open\n}\n", "main.tf:2:17: a string is not closed on its line"},
		{"main.tf", "/* never closed", "main.tf:1:1: a /* comment is not closed"},
		{"main.tf", "variable \"a\" {\n  description = <<EOT\nno end\n", "main.tf:2:17: a heredoc <<EOT is not closed"},
		{"main.tf", "\n\na = \"ü${x", "main.tf:3:7: a ${ in a string is not closed"},
		{"e.tf.json", "", "e.tf.json:1:1: not terraform JSON: unexpected end of JSON input"},
		{"b.tf.json", "\ufeff", "b.tf.json:1:1: not terraform JSON: unexpected end of JSON input"},
		{"v.tf.json", `{"variable": 3}`, `v.tf.json: "variable": expected an object of variables, or a list of them`},
		{"v.tf.json", "{\n  \"variable\": {,}\n}", "v.tf.json:2:16: not terraform JSON: invalid character ','"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, tt.file), []byte(tt.text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := declaredVariables(dir, dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

// FuzzNativeVariables: any text is read or refused, never a panic nor a
// hang.
func FuzzNativeVariables(f *testing.F) {
	for _, seed := range []string{
		"variable \"a\" { type = list(string) }",
		"variable b {\n description = <<-EOT\n x\n EOT\n}",
		`variable "c" { default = "${x("}")}" }`,
		"/* x */ # y\n// z",
		`"$${`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		vars, err := nativeVariables(text)
		if err == nil && vars == nil {
			t.Error("nil map without an error")
		}
		// As terraform's JSON syntax: read or refused, never a panic.
		_, _ = jsonVariables([]byte(text))
		_ = jsonModuleSources([]byte(text))
		// The module calls of the same text: whatever it holds, they are
		// read without a panic, and only when it tokenizes.
		if sources := nativeModuleSources(text); err != nil && len(sources) > 0 {
			t.Errorf("module sources %q of a text that does not tokenize", sources)
		}
	})
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

// TestParamsNamedAlike: parameters that give one variable (db.host,
// db-host) with different values are refused, all of them said; the same
// value, a variable the module does not declare, or config vars naming it
// are fine.
func TestParamsNamedAlike(t *testing.T) {
	tests := []struct {
		name    string
		params  map[string]string
		vars    map[string]any
		wantErr []string
		want    string // the variables file
	}{
		{"different values", map[string]string{"db.host": "a", "db-host": "b", "x.y": "1", "x/y": "2"}, nil,
			[]string{"parameters db-host and db.host both give the variable db_host, with different values", "parameters x.y and x/y both give the variable x_y"}, ""},
		{"the same value", map[string]string{"db.host": "a", "db_host": "a"}, nil, nil, `{"db_host":"a"}`},
		{"not declared", map[string]string{"db.host": "a", "db-host": "b", "other.v": "1", "other-v": "2"}, map[string]any{"db_host": "c"}, nil, `{"db_host":"c"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			bin, module := filepath.Join(dir, "bin"), filepath.Join(dir, "m")
			for _, d := range []string{bin, module} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(bin, "terraform"), []byte(fakeTerraform), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(module, "main.tf"), []byte("variable \"db_host\" {}\nvariable x_y {}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			calls := filepath.Join(dir, "calls")
			t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
			cfg := map[string]any{"dir": "."}
			if tt.vars != nil {
				cfg["vars"] = tt.vars
			}
			err := tf{}.Run(context.Background(), &plugin.Call{
				Action:   plugin.ActionDeploy,
				Entry:    &plugin.Spec{Name: "terraform", Key: "terraform", Config: cfg},
				Instance: &plugin.Instance{Component: "c", Dir: module, StateRoot: filepath.Join(dir, "state"), Params: tt.params},
				Env:      append(os.Environ(), "HOME="+dir, "TF_PLUGIN_CACHE_DIR=", "TF_CLI_CONFIG_FILE=", "CALLS="+calls),
				Stdout:   io.Discard, Stderr: io.Discard,
				Report: func(map[string]string, []string) {},
			})
			if tt.wantErr != nil {
				for _, w := range tt.wantErr {
					if err == nil || !strings.Contains(err.Error(), w) {
						t.Errorf("got %v, want %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(calls + ".vars"); string(got) != tt.want {
				t.Errorf("variables file: %s, want %s", got, tt.want)
			}
		})
	}
}

// TestTokenizeBounded: a file made of punctuation is refused past a bound
// on its tokens, with its place, rather than held in memory token by token.
func TestTokenizeBounded(t *testing.T) {
	text := "variable \"a\" {}\n" + strings.Repeat("=", maxTokens+10)
	_, err := nativeVariables(text)
	var syntax *syntaxError
	if !errors.As(err, &syntax) || syntax.line != 2 || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("got %v, want a syntax error on line 2 about the bound", err)
	}
	if sources := nativeModuleSources(text); sources != nil {
		t.Errorf("sources %q of a file refused", sources)
	}
}
