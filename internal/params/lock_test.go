package params

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/manifest"
)

func stackFrom(t *testing.T, paramsYAML string) *manifest.Stack {
	t.Helper()
	src := "version: 1\nkind: stack\nmeta: {name: test}\nparameters:\n" + paramsYAML
	docs, diags := manifest.ParseBytes("hub.yaml", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	s := manifest.DecodeStack(docs[0], &diags)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	return s
}

type fakePrompter map[string]string

func (f fakePrompter) Prompt(p *manifest.Parameter, current string) (string, error) {
	return f[p.QName()], nil
}

func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestLockSources(t *testing.T) {
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "token")
	if err := os.WriteFile(secretFile, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const p = `  - name: p
    kind: user
    fromEnv: P_ENV
    fromFile: $DIR/token
    default: from-default
`
	tests := []struct {
		name       string
		yaml       string
		env        func(string) (string, bool)
		prompt     Prompter
		state      map[string]string
		wantValue  string
		wantSource string
		wantWarn   bool
		wantErr    string
	}{
		{name: "value wins", yaml: "  - {name: p, value: v, fromEnv: P_ENV, default: d}\n", env: env("P_ENV", "e"), wantValue: "v", wantSource: "hub.yaml:5"},
		{name: "fromEnv", yaml: p, env: env("P_ENV", "from-env", "DIR", dir), wantValue: "from-env", wantSource: "env:P_ENV"},
		{name: "empty env is no value", yaml: p, env: env("P_ENV", "", "DIR", dir), wantValue: "from-file", wantSource: "file:" + secretFile},
		{name: "fromFile", yaml: p, env: env("DIR", dir), wantValue: "from-file", wantSource: "file:" + secretFile},
		{name: "missing fromFile is an error", yaml: p, env: env("DIR", "/nonexistent"), wantErr: "fromFile $DIR/token: no such file"},
		{name: "prompt", yaml: "  - {name: p, kind: user}\n", prompt: fakePrompter{"p": "typed"}, wantValue: "typed", wantSource: "prompt"},
		{name: "no prompt when a default exists", yaml: "  - {name: p, kind: user, default: d}\n", prompt: fakePrompter{"p": "typed"}, wantValue: "d", wantSource: "default"},
		{name: "no prompt for tech", yaml: "  - {name: p, kind: tech}\n", prompt: fakePrompter{"p": "typed"}, wantValue: "", wantSource: "hub.yaml:5", wantWarn: true},
		{name: "prompt answered empty keeps state", yaml: "  - {name: p, kind: user}\n", prompt: fakePrompter{}, state: map[string]string{"p": "old"}, wantValue: "old", wantSource: "state"},
		{name: "default", yaml: "  - {name: p, kind: user, fromEnv: P_ENV, default: d}\n", env: env(), wantValue: "d", wantSource: "default"},
		{name: "default beats state", yaml: "  - {name: p, kind: user, default: d}\n", state: map[string]string{"p": "old"}, wantValue: "d", wantSource: "default"},
		{name: "state fills empty with a warning", yaml: "  - {name: p, fromEnv: P_ENV}\n", env: env(), state: map[string]string{"p": "old"}, wantValue: "old", wantSource: "state", wantWarn: true},
		{name: "empty allow", yaml: "  - {name: p, empty: allow}\n", wantValue: "", wantSource: "hub.yaml:5"},
		{name: "nothing is an error", yaml: "  - {name: p, fromEnv: P_ENV}\n", env: env(), wantErr: `parameter "p": no value: export P_ENV, give it a value or a default, pass it in a params file or allow it to be empty with empty: allow`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, diags := Lock(LockInput{Stack: stackFrom(t, tt.yaml), Env: tt.env, Prompt: tt.prompt, State: tt.state})
			if tt.wantErr != "" {
				if !diags.HasErrors() || !strings.Contains(diags.Err().Error(), tt.wantErr) {
					t.Fatalf("want error %q, got %v", tt.wantErr, diags)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags.Err())
			}
			if got := len(diags.Warnings()) > 0; got != tt.wantWarn {
				t.Errorf("warnings = %v, want warning %v", diags.Warnings(), tt.wantWarn)
			}
			v := l.Get("p")
			if v.Value != tt.wantValue || v.Source != tt.wantSource {
				t.Errorf("p = %q from %q, want %q from %q", v.Value, v.Source, tt.wantValue, tt.wantSource)
			}
		})
	}
}

func TestLockExpressions(t *testing.T) {
	s := stackFrom(t, `  - {name: dns.domain, value: example.com}
  - {name: api.host, value: "api.${dns.domain}"}
  - {name: api.url, value: "https://${api.host}:#{int(port) + 1}"}
  - {name: port, value: 8442}
  - {name: api.host, component: web, value: "web.${dns.domain}"}
  - {name: api.url, component: web, value: "https://${api.host}"}
  - {name: from.env, fromEnv: RAW}
  - {name: lnk, kind: link, value: "${db:host}"}
  - {name: id, value: "${hub.stackName}-${hub.deploymentId}"}
`)
	l, diags := Lock(LockInput{Stack: s, Env: env("RAW", "${not.expanded}"), DeploymentID: "abc"})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	got := map[string]string{}
	for _, v := range l.Values() {
		got[v.QName()] = v.Value
	}
	want := map[string]string{
		"dns.domain": "example.com", "api.host": "api.example.com", "api.url": "https://api.example.com:8443",
		"port": "8442", "api.host|web": "web.example.com", "api.url|web": "https://web.example.com",
		"from.env": "${not.expanded}", "lnk": "${db:host}", "id": "test-abc",
		"hub.deploymentId": "abc", "hub.stackName": "test",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("locked (-want +got):\n%s", diff)
	}
	if l.Get("hub.deploymentId").Source != SourceState {
		t.Errorf("deployment id should come from state")
	}
}

func TestLockCollectsEveryError(t *testing.T) {
	s := stackFrom(t, `  - {name: a, value: "${b}"}
  - {name: b, value: "${a}"}
  - {name: c, value: "${dns.domian}"}
  - {name: dns.domain, value: x}
  - {name: d, fromEnv: MISSING}
  - {name: e, value: "#{1 +}"}
  - {name: f, value: "${lnk}"}
  - {name: lnk, kind: link, value: "${x:y}"}
  - {name: g, value: "${db.host}"}
  - {name: h, value: "${self}"}
  - {name: self, value: "${self}"}
`)
	_, diags := Lock(LockInput{Stack: s, Env: env(), Outputs: map[string][]string{"db": {"db.host"}}})
	var got []string
	for _, d := range diags.Errors().Sorted() {
		got = append(got, strings.SplitN(d.String(), "\n", 2)[0])
	}
	want := []string{
		`hub.yaml:5:6: parameter cycle: a → b → a`,
		`hub.yaml:7:6: parameter "c": unknown parameter "dns.domian" (did you mean "dns.domain"?)`,
		`hub.yaml:9:6: parameter "d": no value: export MISSING, give it a value or a default, pass it in a params file or allow it to be empty with empty: allow`,
		`hub.yaml:10:6: parameter "e": #{1 +}: syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}`,
		`hub.yaml:11:6: parameter "f": refers to link parameter "lnk", which is resolved per component; make this parameter kind: link too`,
		`hub.yaml:13:6: parameter "g": unknown parameter "db.host"; it is an output of component db, known only once it has run; make this parameter kind: link`,
		`hub.yaml:15:6: parameter cycle: self → self`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestLinkCyclesAreFoundAtLock(t *testing.T) {
	s := stackFrom(t, `  - {name: x, kind: link, value: "${y}"}
  - {name: y, kind: link, value: "${x}-${b:out}"}
  - {name: z, kind: link, value: "${x}"}
`)
	_, diags := Lock(LockInput{Stack: s, Env: env()})
	errs := diags.Errors()
	if len(errs) != 1 || !strings.Contains(errs[0].Msg, "parameter cycle: x → y → x") {
		t.Fatalf("want the link cycle x → y → x, got %v", diags)
	}
}

// TestLockNonUserParameters: as in the Hub CLI, only kind: user parameters
// take their default (and fromEnv, fromFile) and must have a value; any other
// without a value is empty, with a warning, and a default it has is not used,
// with a warning too.
func TestLockNonUserParameters(t *testing.T) {
	s := stackFrom(t, `  - {name: tech, kind: tech, default: d}
  - {name: nokind, default: d}
  - {name: lnk, kind: link, default: "${tech}"}
  - {name: given, kind: tech, value: x, default: d}
  - {name: allowed, kind: tech, empty: allow}
  - {name: fromenv, kind: tech, fromEnv: F}
  - {name: user.env, fromEnv: F}
  - {name: stated, kind: tech}
  - {name: db.password, kind: tech, value: x, default: hunter2}
  - {name: user, kind: user, default: ud}
`)
	l, diags := Lock(LockInput{Stack: s, Env: env("F", "from-env"), State: map[string]string{"stated": "old"}})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	values := map[string]string{}
	for _, v := range l.Values() {
		values[v.QName()] = v.Value
	}
	wantValues := map[string]string{
		"tech": "", "nokind": "", "lnk": "", "given": "x", "allowed": "", "fromenv": "",
		"user.env": "from-env", "stated": "old", "db.password": "x", "user": "ud",
	}
	for name, want := range wantValues {
		if values[name] != want {
			t.Errorf("%s = %q, want %q", name, values[name], want)
		}
	}
	var got []string
	for _, d := range diags.Warnings() {
		got = append(got, d.String())
	}
	want := []string{
		`hub.yaml:5:6: warning: parameter "tech" default "d" won't be used as the parameter is not kind: user but kind: tech`,
		`hub.yaml:5:6: warning: parameter "tech" has no value: it is empty (only kind: user parameters must have one)`,
		`hub.yaml:6:6: warning: parameter "nokind" default "d" won't be used as the parameter is not kind: user`,
		`hub.yaml:6:6: warning: parameter "nokind" has no value: it is empty (only kind: user parameters must have one)`,
		`hub.yaml:7:6: warning: parameter "lnk" default "${tech}" won't be used as the parameter is not kind: user but kind: link`,
		`hub.yaml:7:6: warning: parameter "lnk" has no value: it is empty (only kind: user parameters must have one)`,
		`hub.yaml:8:6: warning: parameter "given" default "d" won't be used as the parameter is not kind: user but kind: tech`,
		`hub.yaml:10:6: warning: parameter "fromenv" has no value: it is empty (only kind: user parameters must have one); fromEnv and fromFile are read for kind: user parameters only`,
		`hub.yaml:12:6: warning: parameter "stated" has no value; using the one from the last run (state)`,
		`hub.yaml:13:6: warning: parameter "db.password" default ***** won't be used as the parameter is not kind: user but kind: tech`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}
