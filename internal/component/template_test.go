package component

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/bcrypt"
)

// expanded builds a component's expanded parameters from name=value pairs.
func expanded(t testing.TB, kv ...string) *params.Expanded {
	t.Helper()
	var b strings.Builder
	b.WriteString("version: 1\nkind: component\nmeta: {name: app}\nparameters:\n")
	for i := 0; i+1 < len(kv); i += 2 {
		b.WriteString("  - {name: " + kv[i] + ", value: \"" + kv[i+1] + "\"}\n")
	}
	docs, diags := manifest.ParseBytes("c.yaml", []byte(b.String()))
	c := manifest.DecodeComponent(docs[0], &diags)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	st := manifest.Stack{Meta: manifest.Meta{Name: "s"}}
	l, diags := params.Lock(params.LockInput{Stack: &st, DeploymentID: "id"})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	exp, diags := params.ExpandComponent(params.ComponentInput{Locked: l, Component: c, Outputs: params.NewOutputIndex([]string{"app"})})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	return exp
}

func TestRenderString(t *testing.T) {
	exp := expanded(t, "db.host", "db.local", "db.port", "5432", "tls.enabled", "true", "off", "false",
		"auth-service.key", "k-1", "blank", " ", "text", "line1\\nline2", "padded", "  padded  ")
	tests := []struct {
		name, kind, src, want, err string
	}{
		{"curly", "curly", "host=${db.host}:${db.port}", "host=db.local:5432", ""},
		{"curly encodings", "curly", "${db.host/base64} ${text/json} ${db.port/yaml}", "ZGIubG9jYWw= \"line1\\nline2\" \"5432\"", ""},
		{"curly expression", "curly", "#{int(db.port) + 1}", "5433", ""},
		{"curly trims", "curly", "[${padded}] [#{padded + '!'}] [${padded/base64}]", "[padded] [padded!] [ICBwYWRkZWQgIA==]", ""},
		{"curly blank is empty", "curly", "[${blank}]", "[]", ""},
		{"curly escapes", "curly", "$${db.host}", "${db.host}", ""},
		{"curly unknown", "curly", "a\nb ${nope}", "", "t.tmpl:2:3: unknown parameter \"nope\""},
		{"mustache", "mustache", "{{db.host}}:{{ db.port }} {{{db.host}}} {{&db.port}}", "db.local:5432 db.local 5432", ""},
		{"mustache sections", "mustache", "{{#tls.enabled}}tls{{/tls.enabled}}{{^off}} plain{{/off}}{{#off}}never{{/off}}{{! note}}", "tls plain", ""},
		{"mustache trims", "mustache", "[{{padded}}] [{{padded/base64}}] [{{{padded}}}]", "[padded] [ICBwYWRkZWQgIA==] [padded]", ""},
		{"mustache no html escaping", "mustache", "{{text}}", "line1\nline2", ""},
		{"mustache unknown", "mustache", "x\n  {{nope}}", "", "t.tmpl:2:3: unknown parameter \"nope\""},
		{"mustache unclosed", "mustache", "{{#tls.enabled}}x", "", "t.tmpl:1:1: section \"tls.enabled\" is not closed"},
		{"mustache bad close", "mustache", "{{#tls.enabled}}x{{/off}}", "", "closes section \"tls.enabled\""},
		{"go nested keys", "go", "{{ .db.host }}:{{ .db.port }} {{ .auth_service.key }}", "db.local:5432 k-1", ""},
		{"go functions", "go", `{{ .db.host | upper }} {{ default "x" .blank }} {{ param "auth-service.key" | b64enc }} {{ add .db.port 1 }}`, "DB.LOCAL x ay0x 5433", ""},
		{"go sprig order", "go", `{{ replace "." "-" .db.host }} {{ trimPrefix "db." .db.host }} {{ contains "loc" .db.host }} {{ list 1 2 | join "," }}`, "db-local local true 1,2", ""},
		{"go trims", "go", `[{{ .padded }}] [{{ param "padded" }}]`, "[padded] [padded]", ""},
		{"go indent", "go", "a:\n{{ .text | indent 2 }}", "a:\n  line1\n  line2", ""},
		{"go unknown key", "go", "ok\n{{ .db.nope }}", "", "t.tmpl:2:6: unknown parameter \"nope\""},
		{"go until is bounded", "go", "{{ range until 100000000000 }}x{{ end }}", "", "until: 100000000000 is more than 100000"},
		{"go until", "go", "{{ range until 3 }}{{ . }}{{ end }}", "012", ""},
		{"go syntax", "go", "{{ .db.host ", "", "t.tmpl:1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := RenderString("t.tmpl", tt.src, tt.kind, exp, nil)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("RenderString = %q, %v; want error %q", got, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("RenderString = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRenderFiles(t *testing.T) {
	dir := t.TempDir()
	gen := t.TempDir()
	write := func(name, content string, mode os.FileMode) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("app.conf.template", "host=${db.host}\n", 0o644)
	write("run.sh.gotemplate", "#!/bin/sh\necho {{ .db.host }}\n", 0o755)
	write("k8s/deploy.yaml.template", "host: ${db.host}\n", 0o644)
	write("k8s/readme.md", "not a template", 0o644)
	exp := expanded(t, "db.host", "db.local")
	tm := &manifest.Templates{Files: []string{"*.template", "*.gotemplate"}, Directories: []string{"k8s"}}
	out, err := RenderFiles(dir, gen, tm, exp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 {
		t.Fatalf("rendered %d files, want 3: %v", len(out), out)
	}
	for name, want := range map[string]string{"app.conf": "host=db.local\n", "run.sh": "#!/bin/sh\necho db.local\n", "k8s/deploy.yaml": "host: db.local\n"} {
		for _, root := range []string{dir, gen} {
			b, err := os.ReadFile(filepath.Join(root, name))
			if err != nil || string(b) != want {
				t.Errorf("%s in %s = %q, %v; want %q", name, root, b, err, want)
			}
		}
	}
	if fi, _ := os.Stat(filepath.Join(dir, "run.sh")); fi.Mode().Perm() != 0o755 {
		t.Errorf("run.sh lost its mode: %v", fi.Mode())
	}
	if _, err := OutputName("plain.yaml"); err == nil {
		t.Errorf("a file without a template suffix must not be rendered over itself")
	}
}

// A rendered file that received a secret — directly, through a parameter or
// expression computed from one, or as part of a Go template's data — is
// readable by its owner only, whatever the template's mode.
func TestRenderFileWithSecretIsOwnerOnly(t *testing.T) {
	exp := expanded(t, "db.host", "db.local", "db.password", "s3cr3t", "db.url", "postgres://app:${db.password}@${db.host}")
	plain := expanded(t, "db.host", "db.local")
	tests := []struct {
		name, file, src string
		mode, want      os.FileMode
		exp             *params.Expanded
	}{
		{"curly without secret", "a.conf.template", "host=${db.host}", 0o644, 0o644, exp},
		{"curly secret", "a.conf.template", "pw=${db.password}", 0o644, 0o600, exp},
		{"curly derived parameter", "a.conf.template", "url=${db.url}", 0o664, 0o600, exp},
		{"curly encoded secret", "a.conf.template", "pw=${db.password/base64}", 0o644, 0o600, exp},
		{"curly expression", "a.conf.template", "pw=#{db.password.substring(0, 3)}", 0o644, 0o600, exp},
		{"curly params map", "a.conf.template", "pw=#{params['db.password']}", 0o644, 0o600, exp},
		{"mustache secret", "a.conf.template", "pw={{db.password}}", 0o644, 0o600, exp},
		{"mustache section on secret", "a.conf.template", "{{#db.password}}set{{/db.password}}", 0o644, 0o600, exp},
		{"go data holds secrets", "run.sh.gotemplate", "echo {{ .db.host }}", 0o755, 0o700, exp},
		{"go param func", "run.sh.gotemplate", `echo {{ param "db.password" }}`, 0o755, 0o700, exp},
		{"go without secrets", "run.sh.gotemplate", "echo {{ .db.host }}", 0o755, 0o755, plain},
		{"go bcrypt of a plain value", "users.yaml.gotemplate", "hash: {{ .db.host | bcrypt }}", 0o644, 0o600, plain},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, tt.file)
			if err := os.WriteFile(path, []byte(tt.src), tt.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tt.mode); err != nil {
				t.Fatal(err)
			}
			kind := KindOf(path, "")
			if tt.name[:8] == "mustache" {
				kind = TemplateMustache
			}
			r, err := RenderFile(path, kind, tt.exp, nil)
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(r.Output)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != tt.want {
				t.Errorf("%s rendered with mode %v, want %v", tt.file, fi.Mode().Perm(), tt.want)
			}
			if r.Secret != (tt.want&0o077 == 0) {
				t.Errorf("Rendered.Secret = %v", r.Secret)
			}
		})
	}
}

// TestRenderBcrypt: the Hub CLI's bcrypt function (its dex component hashes
// a static password with it) gives a hash at the default cost, in the
// modular crypt format, that verifies the value; a value bcrypt would cut is
// refused without being told; each hash costs a share of the render's work.
func TestRenderBcrypt(t *testing.T) {
	exp := expanded(t, "dex.pw", "  s3cret-Pass  ", "long", strings.Repeat("p", 73))
	got, err := RenderString("c.gotemplate", "hash: '{{ .dex.pw | bcrypt }}'", TemplateGo, exp, nil)
	if err != nil {
		t.Fatal(err)
	}
	hash, ok := strings.CutPrefix(got, "hash: '")
	hash, ok2 := strings.CutSuffix(hash, "'")
	if !ok || !ok2 || !strings.HasPrefix(hash, "$2a$10$") || len(hash) != 60 {
		t.Fatalf("rendered %q, want a $2a$10$ bcrypt hash", got)
	}
	// The value is trimmed as every value of a Go template is, as the Hub does.
	if err := bcrypt.CompareHashAndPassword([]byte(hash), []byte("s3cret-Pass")); err != nil {
		t.Errorf("the hash does not verify the value: %v", err)
	}
	if cost, err := bcrypt.Cost([]byte(hash)); err != nil || cost != bcrypt.DefaultCost {
		t.Errorf("cost %d, %v; want %d", cost, err, bcrypt.DefaultCost)
	}
	_, err = RenderString("c.gotemplate", "{{ .long | bcrypt }}", TemplateGo, exp, nil)
	if err == nil || !strings.Contains(err.Error(), "longer than the 72 bytes bcrypt hashes") || strings.Contains(err.Error(), "ppp") {
		t.Errorf("a value longer than bcrypt takes: %v", err)
	}
	// A plan checks the template's text: bcrypt is a known function.
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "c.yaml.gotemplate"), []byte("{{ .dex.pw | bcrypt }}"), 0o644)
	if err := CheckTemplates(dir, &manifest.Templates{Files: []string{"*.gotemplate"}}, nil); err != nil {
		t.Errorf("check: %v", err)
	}
	saved := renderLimits
	renderLimits.work = 2*bcryptWork + 1<<20
	t.Cleanup(func() { renderLimits = saved })
	_, err = RenderString("c.gotemplate", "{{ range until 20 }}{{ bcrypt \"x\" }}{{ end }}", TemplateGo, exp, nil)
	if err == nil || !strings.Contains(err.Error(), "bcrypt: the template does more than") {
		t.Errorf("a loop of hashes: %v", err)
	}
}

// lookupRecorder resolves every name to its value in vals and notes the
// names asked for.
type lookupRecorder struct {
	vals  map[string]string
	asked []string
}

func (r *lookupRecorder) Lookup(n string) (string, error) {
	r.asked = append(r.asked, n)
	return r.vals[n], nil
}
func (r *lookupRecorder) Output(c, n string) (string, error) { return r.Lookup(c + ":" + n) }

// TestMustacheMutedReadsNothing: names inside a section that does not emit
// are not looked up (a lookup is a recorded read: a change of it would
// redeploy the component for text it never emits), nested sections
// included, and the text after the section reads on.
func TestMustacheMutedReadsNothing(t *testing.T) {
	r := &lookupRecorder{vals: map[string]string{"off": "false", "on": "true", "d": "D"}}
	got, err := renderMustache("t.tmpl", "{{#off}}{{#a}}{{b}}{{/a}}{{^c}}x{{/c}}{{e}}{{/off}}{{#on}}{{d}}{{/on}}", r)
	if err != nil || got != "D" {
		t.Fatalf("render = %q, %v; want \"D\"", got, err)
	}
	if want := []string{"off", "on", "d"}; !cmp.Equal(r.asked, want) {
		t.Errorf("looked up %v, want %v", r.asked, want)
	}
}
