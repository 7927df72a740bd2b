package kubernetes

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plugin"
)

// paramMap resolves ${name} from a map, as a component's parameters do.
type paramMap map[string]string

func (m paramMap) Lookup(name string) (string, error) {
	v, ok := m[name]
	if !ok {
		return "", &params.UnknownError{Name: name}
	}
	return v, nil
}

func (m paramMap) Output(component, name string) (string, error) {
	return "", &params.UnknownError{Name: name, Component: component}
}

// expandWith expands as the runner does, with gantry's own templates.
func expandWith(m map[string]string) expandFunc {
	return func(s string) (string, error) { return params.Expand(s, paramMap(m)) }
}

// generatorFiles is a kustomization whose generators read parameters in
// literals, a file and an env file, from a base outside the overlay.
var generatorFiles = map[string]string{
	"base/kustomization.yaml": `configMapGenerator:
- name: web-config
  literals: ["GREETING=${greeting}", "PORT=${port}", "DEBUG=${debug}", "QUOTED=${quoted}", "RAW=${raw}", "LIT=$${kept}"]
  files: [app.conf]
  envs: [app.env]
secretGenerator:
- name: web-secret
  literals: ["password=${db.password}"]
`,
	"base/app.conf":              "greeting = ${greeting}\nport = ${port}\n",
	"base/app.env":               "# a comment with ${nothing}\nHOST=db.${domain}\n",
	"overlay/kustomization.yaml": "resources: [../base]\nnamePrefix: prod-\n",
}

// generated loads the overlay of generatorFiles with the parameters and
// returns the ConfigMap's name and data, and the Secret's data decoded.
func generated(t *testing.T, m map[string]string) (string, map[string]any, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, generatorFiles)
	objs, err := load(dir, config{Kustomize: "overlay"}, expandWith(m))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	var name string
	var data map[string]any
	secret := map[string]string{}
	for _, o := range objs {
		switch o.u.GetKind() {
		case "ConfigMap":
			name, data = o.u.GetName(), o.u.Object["data"].(map[string]any)
		case "Secret":
			for k, v := range o.u.Object["data"].(map[string]any) {
				b, err := base64.StdEncoding.DecodeString(v.(string))
				if err != nil {
					t.Fatalf("secret %s: %v", k, err)
				}
				secret[k] = string(b)
			}
		}
	}
	return name, data, secret
}

func TestKustomizeGeneratorsExpanded(t *testing.T) {
	base := map[string]string{
		"greeting": "hello", "port": "8080", "debug": "true", "quoted": `"q"`,
		"raw": "${db.password} #{1+1}", "domain": "example.org", "db.password": "VerySecretPw99",
	}
	name, data, secret := generated(t, base)
	want := map[string]any{
		"GREETING": "hello",
		// Strings, as a generator makes them, never a number or a boolean.
		"PORT": "8080", "DEBUG": "true",
		// A value in quotes keeps them.
		"QUOTED": `"q"`,
		// What a value holds is not expanded again.
		"RAW": "${db.password} #{1+1}",
		// $${ is a literal ${, as everywhere.
		"LIT":      "${kept}",
		"app.conf": "greeting = hello\nport = 8080\n",
		"HOST":     "db.example.org",
	}
	if d := cmp.Diff(want, data); d != "" {
		t.Errorf("ConfigMap data (-want +got):\n%s", d)
	}
	if secret["password"] != "VerySecretPw99" {
		t.Errorf("Secret password = %q, want the parameter's value", secret["password"])
	}
	if !strings.HasPrefix(name, "prod-web-config-") {
		t.Fatalf("ConfigMap name %q", name)
	}

	// The hash suffix covers the expanded data: another value, another
	// name; the same values, the same name.
	again, _, _ := generated(t, base)
	changed := map[string]string{}
	for k, v := range base {
		changed[k] = v
	}
	changed["greeting"] = "bonjour"
	other, _, _ := generated(t, changed)
	if again != name || other == name {
		t.Errorf("names: %s, again %s, with another greeting %s", name, again, other)
	}
}

func TestKustomizeGeneratorErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		m     map[string]string
		want  string
	}{
		{
			name:  "a literal",
			files: map[string]string{"k/kustomization.yaml": "configMapGenerator:\n- name: c\n  literals:\n  - A=${typo}\n"},
			want:  `k/kustomization.yaml:4:5: unknown parameter "typo"`,
		},
		{
			name: "a file of a base",
			files: map[string]string{
				"k/kustomization.yaml": "resources: [../b]\n",
				"b/kustomization.yaml": "configMapGenerator:\n- name: s\n  files: [key=s.txt]\n",
				"b/s.txt":              "first\nsecond ${typo}\n",
			},
			want: `b/s.txt:2:8: unknown parameter "typo"`,
		},
		{
			name: "a line break into an env file",
			files: map[string]string{
				"k/kustomization.yaml": "configMapGenerator:\n- name: c\n  envs: [a.env]\n",
				"k/a.env":              "A=${two}\n",
			},
			m:    map[string]string{"two": "x\nB=y"},
			want: `k/a.env:1:3: an env file's value cannot hold a line break`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			_, err := load(dir, config{Kustomize: "k"}, expandWith(tt.m))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error\n%v\nwant %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("one error of one line wanted:\n%v", err)
			}
		})
	}
}

// TestKustomizePlanReadsOutside: planning a kustomize instance tells the
// files its build read outside the component folder (the fingerprint adds
// them), not those inside it.
func TestKustomizePlanReadsOutside(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"overlays/prod/kustomization.yaml": "resources: [ns.yaml, ../../base]\n",
		"overlays/prod/ns.yaml":            "apiVersion: v1\nkind: Namespace\nmetadata: {name: web}\n",
		"base/kustomization.yaml":          "resources: [cm.yaml]\nconfigMapGenerator:\n- name: g\n  envs: [g.env]\n",
		"base/cm.yaml":                     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: level}\n",
		"base/g.env":                       "A=1\n",
		"base/unused.yaml":                 "not read\n",
	})
	dir := filepath.Join(root, "overlays", "prod")
	var reads []string
	req := plugin.StagesRequest{Component: "app", Dir: dir, Action: plugin.ActionDeploy,
		Entry: &plugin.Spec{Name: "kubernetes", Key: "app", Config: map[string]any{"kustomize": "."}},
		Read:  func(p string) { reads = append(reads, p) }}
	if _, err := (engine{manifests{}}).Stages(req); err != nil {
		t.Fatal(err)
	}
	want := []string{"../../base/cm.yaml", "../../base/g.env", "../../base/kustomization.yaml"}
	if d := cmp.Diff(want, reads); d != "" {
		t.Errorf("reads (-want +got):\n%s", d)
	}

	// Through a symlink to the folder's parent: the same names.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	reads = nil
	req.Dir = filepath.Join(link, "overlays", "prod")
	if _, err := (engine{manifests{}}).Stages(req); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, reads); d != "" {
		t.Errorf("reads through a symlink (-want +got):\n%s", d)
	}
}

// secretData is the decoded data of the Secret among objs.
func secretData(t *testing.T, objs []*object) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, o := range objs {
		if o.u.GetKind() != "Secret" {
			continue
		}
		for k, v := range o.u.Object["data"].(map[string]any) {
			b, err := base64.StdEncoding.DecodeString(v.(string))
			if err != nil {
				t.Fatalf("secret %s: %v", k, err)
			}
			out[k] = string(b)
		}
	}
	return out
}

// TestKustomizeSecretFilesVerbatim: the files a secretGenerator names go
// into the Secret as they are — a password holding "$${" or "#{", an app's
// own ${DB_PASS} — while its literals are expanded.
func TestKustomizeSecretFilesVerbatim(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"k/kustomization.yaml":     "secretGenerator:\n- name: s\n  envs: [app.env]\n  files: [application.properties]\n  literals: [\"password=${db.password}\"]\n",
		"k/app.env":                "API_TOKEN=Ab$${x}9##{q}Z\nOTHER=tok-Zq8#{Rk2\n",
		"k/application.properties": "spring.datasource.password=${DB_PASS}\n",
	})
	objs, err := load(dir, config{Kustomize: "k"}, expandWith(map[string]string{"db.password": "VerySecretPw99"}))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	want := map[string]string{
		"API_TOKEN":              "Ab$${x}9##{q}Z",
		"OTHER":                  "tok-Zq8#{Rk2",
		"application.properties": "spring.datasource.password=${DB_PASS}\n",
		"password":               "VerySecretPw99",
	}
	if d := cmp.Diff(want, secretData(t, objs)); d != "" {
		t.Errorf("Secret data (-want +got):\n%s", d)
	}
}

// TestKustomizeSecretLiteralErrorUnquoted: an error about a
// secretGenerator's literal names its line and what is wrong, never the
// literal's text.
func TestKustomizeSecretLiteralErrorUnquoted(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"k/kustomization.yaml": "secretGenerator:\n- name: s\n  literals:\n  - token=tok-Zq8#{Rk2 ${x}\n",
	})
	_, err := load(dir, config{Kustomize: "k"}, expandWith(map[string]string{"x": "1"}))
	if err == nil || !strings.Contains(err.Error(), "k/kustomization.yaml:4:5: unterminated #{") {
		t.Fatalf("error %v, want the literal's line and what is wrong", err)
	}
	if strings.Contains(err.Error(), "Zq8") {
		t.Errorf("the error quotes the secret: %v", err)
	}
}

// TestKustomizeLiteralNotKeyValue: a generator's literal with no "=" is
// refused at its line, a secretGenerator's without its text, and none of
// the generator's other literals is quoted (kustomize's own error quotes
// them all); a literal that is one reference says to write the key.
func TestKustomizeLiteralNotKeyValue(t *testing.T) {
	tests := []struct {
		name, gen, lit, want, never string
	}{
		{"secret", "secretGenerator", `"typo: sk_live_51Hard"`, `k/kustomization.yaml:6:5: secretGenerator: a literal must be key=value; this one has no "=" (its text is not shown: it is a secret's)`, "sk_live"},
		{"one reference", "secretGenerator", `"${extra}"`, `write the key and the "=" in the file, as key=${…}`, "k=v"},
		{"config map", "configMapGenerator", `"plain"`, `k/kustomization.yaml:6:5: configMapGenerator: a literal must be key=value, got "plain"`, "apikey"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"k/kustomization.yaml": tt.gen + ":\n- name: s\n  literals:\n  - apikey=sk_live_51Secret\n  - pw=${pw}\n  - " + tt.lit + "\n",
			})
			_, err := load(dir, config{Kustomize: "k"}, expandWith(map[string]string{"pw": "Pw-Secret-9", "extra": "k=v"}))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to say %q", err, tt.want)
			}
			for _, never := range []string{tt.never, "Pw-Secret-9", "sk_live_51Secret", "literal sources"} {
				if strings.Contains(err.Error(), never) {
					t.Errorf("the error quotes %q: %v", never, err)
				}
			}
		})
	}
}

// TestOneLineLeavesKustomizeLiteralsOut: a literal kustomize refuses
// itself (one gantry's checks let through) is not quoted, nor are the
// generator's others.
func TestOneLineLeavesKustomizeLiteralsOut(t *testing.T) {
	got := oneLine("loading KV pairs: literal sources [apikey=sk_live_51 typo: x]: invalid literal source typo: x, expected key=value")
	if want := "loading KV pairs: a literal source is not key=value"; got != want {
		t.Errorf("oneLine: %q, want %q", got, want)
	}
}

// TestKustomizeBuiltinGeneratorsExpanded: the literals of a builtin
// SecretGenerator or ConfigMapGenerator that generators: names — a config
// file, a kustomization folder that builds one, a config written inline —
// are expanded as a secretGenerator's are, and a ConfigMapGenerator's
// files with them; never deployed as "${db.password}".
func TestKustomizeBuiltinGeneratorsExpanded(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"k/kustomization.yaml": `generators:
- secgen.yaml
- gens
- |
  apiVersion: builtin
  kind: SecretGenerator
  metadata: {name: inline}
  literals: ["inline=${db.password}"]
  options: {disableNameSuffixHash: true}
`,
		"k/secgen.yaml": `apiVersion: builtin
kind: SecretGenerator
metadata: {name: sec2}
literals: ["password=${db.password}"]
options: {disableNameSuffixHash: true}
---
apiVersion: builtin
kind: ConfigMapGenerator
metadata: {name: cm2}
literals: ["GREETING=${greeting}"]
files: [app.conf]
`,
		"k/app.conf":                "greeting = ${greeting}\n",
		"k/gens/kustomization.yaml": "resources: [gen.yaml]\n",
		"k/gens/gen.yaml":           "apiVersion: builtin\nkind: SecretGenerator\nmetadata: {name: fromdir}\nliterals: [\"fromdir=${db.password}\"]\noptions: {disableNameSuffixHash: true}\n",
	})
	m := map[string]string{"db.password": "VerySecretPw99", "greeting": "hello"}
	objs, err := load(dir, config{Kustomize: "k"}, expandWith(m))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	secrets := map[string]string{}
	var cm map[string]any
	var cmName string
	for _, o := range objs {
		switch o.u.GetKind() {
		case "Secret":
			for k, v := range secretData(t, []*object{o}) {
				secrets[o.u.GetName()+"/"+k] = v
			}
		case "ConfigMap":
			cm, cmName = o.u.Object["data"].(map[string]any), o.u.GetName()
		}
	}
	want := map[string]string{"sec2/password": "VerySecretPw99", "fromdir/fromdir": "VerySecretPw99", "inline/inline": "VerySecretPw99"}
	if d := cmp.Diff(want, secrets); d != "" {
		t.Errorf("Secrets (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]any{"GREETING": "hello", "app.conf": "greeting = hello\n"}, cm); d != "" {
		t.Errorf("ConfigMap data (-want +got):\n%s", d)
	}

	// The ConfigMap's hash suffix covers its expanded data.
	objs, err = load(dir, config{Kustomize: "k"}, expandWith(map[string]string{"db.password": "VerySecretPw99", "greeting": "bonjour"}))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	for _, o := range objs {
		if o.u.GetKind() == "ConfigMap" && o.u.GetName() == cmName {
			t.Errorf("another greeting, the same ConfigMap %s", cmName)
		}
	}

	// An error names the config's file and line, and not a Secret's text.
	writeFiles(t, dir, map[string]string{"k/secgen.yaml": "apiVersion: builtin\nkind: SecretGenerator\nmetadata: {name: sec2}\nliterals:\n- password=${typo}\n"})
	_, err = load(dir, config{Kustomize: "k"}, expandWith(m))
	if err == nil || !strings.Contains(err.Error(), `k/secgen.yaml:5:3: unknown parameter "typo"`) {
		t.Fatalf("error %v", err)
	}
}

// TestKustomizeFileUsedTwice: a file two ways name is read as it is for
// each — a configMapGenerator's and a secretGenerator's, a generator's and
// a resource — and not as the last kustomization that named it says: the
// ConfigMap's data is still expanded by the build's expansion after it, the
// Secret's is verbatim, the resource is parsed before it is expanded.
func TestKustomizeFileUsedTwice(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"k/kustomization.yaml": `resources: [raw.yaml]
configMapGenerator:
- name: c
  files: [shared.conf, raw.yaml]
  options: {disableNameSuffixHash: true}
secretGenerator:
- name: s
  files: [shared.conf]
`,
		"k/shared.conf": "value=${v1}\n",
		"k/raw.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: raw}\ndata:\n  msg: ${greeting}\n",
	})
	m := map[string]string{"v1": "a${b}c", "greeting": `hi "there": x`}
	objs, err := load(dir, config{Kustomize: "k"}, expandWith(m))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	data := map[string]any{}
	for _, o := range objs {
		if o.u.GetKind() == "ConfigMap" {
			data[o.u.GetName()] = o.u.Object["data"]
		}
	}
	want := map[string]any{
		"c":   map[string]any{"shared.conf": "value=a${b}c\n", "raw.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: raw}\ndata:\n  msg: hi \"there\": x\n"},
		"raw": map[string]any{"msg": `hi "there": x`},
	}
	if d := cmp.Diff(want, data); d != "" {
		t.Errorf("ConfigMaps (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[string]string{"shared.conf": "value=${v1}\n"}, secretData(t, objs)); d != "" {
		t.Errorf("Secret (-want +got):\n%s", d)
	}
}
