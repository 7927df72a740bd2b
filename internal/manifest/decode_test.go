package manifest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func decodeStackString(t *testing.T, src string) (*Stack, []string) {
	t.Helper()
	docs, diags := ParseBytes("hub.yaml", []byte(src))
	var s *Stack
	if !diags.HasErrors() {
		s = DecodeStack(docs[0], &diags)
	}
	var msgs []string
	for _, d := range diags.Sorted() {
		msgs = append(msgs, d.String())
	}
	return s, msgs
}

const header = "version: 1\nkind: stack\nmeta: {name: s}\n"

func TestDecodeStackDiagnostics(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"valid", header + "components: [{name: a, source: {dir: a}}]\n", nil},
		{"source null said once", header + "components:\n  - name: a\n    source: null\n", []string{`hub.yaml:6:13: components[0].source: "source" must not be empty`}},
		{"source empty", header + "components:\n  - name: a\n    source: {}\n", []string{`hub.yaml:6:13: components[0].source: expected dir (a folder) or git (a repository gantry pull fetches), got neither`}},
		// Only the stack deployed needs meta (elaborate says so); a nested
		// or base one does not.
		{"no meta", "version: 1\nkind: stack\n", nil},
		{"meta null said once", "version: 1\nkind: stack\nmeta: null\n", []string{`hub.yaml:3:7: meta: missing required field "name"`}},
		{"a value twice in one list", header + "parameters:\n  - {name: p, value: a}\n  - {name: p, component: c, value: b}\n  - {name: p, value: c}\n  - name: p\n    parameters: [{name: q, value: d}]\n",
			[]string{`hub.yaml:7:6: warning: parameters[2]: parameter "p" is given a value twice in this list (first at line 5): this one's value is used`}},
		// Entries merge field by field: a value wins over a later fromEnv.
		{"a value, then fromEnv", header + "parameters:\n  - {name: p, value: a}\n  - {name: p, fromEnv: P}\n",
			[]string{`hub.yaml:6:6: warning: parameters[1]: parameter "p" is given a value twice in this list (first at line 5): line 5's value is used (a value wins over fromEnv and fromFile)`}},
		{"fromEnv, then fromFile", header + "parameters:\n  - {name: p, fromEnv: P}\n  - {name: p, fromFile: p.txt}\n  - {name: p, fromEnv: Q}\n",
			[]string{
				`hub.yaml:6:6: warning: parameters[1]: parameter "p" is given a value twice in this list (first at line 5): line 5's fromEnv is read, then this one's fromFile when P is unset or empty`,
				`hub.yaml:7:6: warning: parameters[2]: parameter "p" is given a value twice in this list (first at line 5): this one's fromEnv is read, then line 6's fromFile when Q is unset or empty`,
			}},
		{"unknown top-level field", header + "componets: []\n", []string{`hub.yaml:4:1: componets: unknown field "componets" (did you mean "components"?)`}},
		{"unknown field far from any", header + "zzz: 1\n", []string{`hub.yaml:4:1: zzz: unknown field "zzz"`}},
		{"annotations accept anything", "version: 1\nkind: stack\nmeta: {name: s, annotations: {any: {thing: [1]}}}\n", nil},
		{"bool expected", header + "lifecycle: {pre_flight: {skip_standard_steps: yes}}\n", []string{`hub.yaml:4:47: lifecycle.pre_flight.skip_standard_steps: expected true or false, got "yes"`}},
		{"integer expected", header + "lifecycle: {parallel: 1.5}\n", []string{`hub.yaml:4:23: lifecycle.parallel: expected an integer, got the number 1.5`}},
		{"negative parallel", header + "lifecycle: {parallel: -2}\n", []string{`hub.yaml:4:23: lifecycle.parallel: expected a number of components to run at once from 1 to 4096, got -2`}},
		{"parallel past its bound", header + "lifecycle: {parallel: 99999999999}\n", []string{`hub.yaml:4:23: lifecycle.parallel: expected a number of components to run at once from 1 to 4096, got 99999999999`}},
		{"mapping expected", header + "lifecycle: [1]\n", []string{`hub.yaml:4:12: lifecycle: expected a mapping, got a list`}},
		{"swap typo", header + "outputs: [{naem: x}]\n", []string{
			`hub.yaml:4:12: outputs[0]: unknown field "naem" (did you mean "name"?)`,
			`hub.yaml:4:12: outputs[0]: missing required field "name"`,
		}},
		{"ready condition needs something to check", header + "lifecycle: {readyConditions: [{waitSeconds: 3}]}\n", []string{`hub.yaml:4:32: lifecycle.readyConditions[0]: a ready condition needs url, dns or pauseSeconds`}},
		{"a pause that is no integer is said once", header + "lifecycle: {readyConditions: [{pauseSeconds: 0.1}]}\n", []string{`hub.yaml:4:46: lifecycle.readyConditions[0].pauseSeconds: expected an integer, got the number 0.1`}},
		{"ready condition waits past a duration", header + "lifecycle: {readyConditions: [{url: \"http://x\", waitSeconds: 18446744074}]}\n", []string{`hub.yaml:4:32: lifecycle.readyConditions[0]: waitSeconds and pauseSeconds are at most 9223372036`}},
		{"catalog field misspelt", "version: 1\nkind: stack\nmeta: {name: c, categroy: x}\n", []string{`hub.yaml:3:17: meta: unknown field "categroy" (did you mean "category"?)`}},
		{"version missing", "kind: stack\nmeta: {name: s}\n", []string{`hub.yaml:1:1: version: missing required field "version" (expected 1)`}},
		{"not a mapping", "- a\n- b\n", []string{`hub.yaml:1:1: expected a manifest of kind: stack (a mapping), got a list`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := decodeStackString(t, tt.src)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNodeAliasesAndMerges(t *testing.T) {
	src := header + `parameters:
  - &p {name: a, value: "1", brief: shared}
  - <<: *p
    name: b
  - {<<: [{name: ignored, value: "3"}, {kind: tech}], name: c}
`
	s, diags := decodeStackString(t, src)
	if len(diags) > 0 {
		t.Fatalf("unexpected diagnostics: %v", diags)
	}
	var got []string
	for _, p := range s.Parameters {
		got = append(got, p.Name+"="+string(p.Value)+"/"+p.Brief+"/"+p.Kind)
	}
	want := []string{"a=1/shared/", "b=1/shared/", "c=3//tech"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parameters (-want +got):\n%s", diff)
	}
}

func TestAliasBombIsBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	_, diags := ParseBytes("bomb.yaml", []byte(b.String()))
	if !diags.HasErrors() || !strings.Contains(diags[0].Msg, "alias bomb") {
		t.Fatalf("want an alias bomb error, got %v", diags)
	}
}

// TestAliasTextIsBounded: aliases of long strings that stay well under the
// count of values still stop at the text they repeat (an 11 KB stack wrote
// out gigabytes into its elaborated file); a few repeats of a long string
// load.
func TestAliasTextIsBounded(t *testing.T) {
	long := strings.Repeat("x", 10_000)
	bomb := "big: &b " + long + "\nl1: &l1 [" + strings.Repeat("*b, ", 99) + "*b]\nl2: &l2 [" + strings.Repeat("*l1, ", 99) + "*l1]\nl3: [" + strings.Repeat("*l2, ", 29) + "*l2]\n"
	_, diags := ParseBytes("bomb.yaml", []byte(bomb))
	if len(diags) != 1 || !strings.Contains(diags[0].Msg, "aliases expand to more than 64 MiB of text") {
		t.Fatalf("want one error on the text aliases repeat, got %v", diags)
	}
	// Long keys count as text too, and the error is said even when a key
	// is what crossed the bound.
	var keys strings.Builder
	keys.WriteString("m: &m {")
	for i := range 100 {
		fmt.Fprintf(&keys, "%s%d: x, ", strings.Repeat("k", 1000), i)
	}
	keys.WriteString("}\nl: [" + strings.Repeat("*m, ", 799) + "*m]\n")
	_, diags = ParseBytes("keys.yaml", []byte(keys.String()))
	if len(diags) != 1 || !strings.Contains(diags[0].Msg, "MiB of text") {
		t.Fatalf("aliases of long keys: want one error on the text, got %v", diags)
	}
	few := "big: &b " + long + "\nl1: [" + strings.Repeat("*b, ", 99) + "*b]\n"
	docs, diags := ParseBytes("few.yaml", []byte(few))
	if len(diags) != 0 || len(docs[0].Get("l1").Items) != 100 || docs[0].Get("l1").Items[99].Value != long {
		t.Fatalf("100 repeats of 10 KB: %v", diags)
	}
}

func TestFlattenInherits(t *testing.T) {
	src := header + `parameters:
  - name: component.db
    kind: user
    empty: allow
    component: db
    parameters:
      - name: port
        value: 5432
      - name: tls
        kind: tech
        parameters:
          - name: mode
            component: other
`
	s, diags := decodeStackString(t, src)
	if len(diags) > 0 {
		t.Fatalf("unexpected diagnostics: %v", diags)
	}
	var got []string
	for _, p := range s.Parameters {
		got = append(got, strings.Join([]string{p.QName(), p.Kind, p.Empty}, " "))
	}
	want := []string{"component.db.port|db user allow", "component.db.tls.mode|other tech allow"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("flattened (-want +got):\n%s", diff)
	}
}

func TestLooksSecret(t *testing.T) {
	tests := map[string]bool{
		// The Hub CLI's rule: a name ending with password, secret, key,
		// cert, token or cookie after . or _, capitalised, or in capitals.
		"db.password":                          true,
		"component.auth-service.authApiSecret": true,
		"github.token":                         true,
		"tls.privateKey":                       true,
		"ingress.tls.cert":                     true,
		"session.cookie":                       true,
		"aws_secret_access_key":                true,
		"API_KEY":                              true,
		"DB_PASSWORD":                          true,
		"db-password":                          true,
		"password":                             true,
		"Token":                                true,
		"db.password|db":                       true,
		"db:api.token":                         true,
		// The Hub's exception: the name of an SSH key pair.
		"cloud.sshKey": false,
		"dns.domain":   false,
		"db.port":      false,
		"keycloak.url": false,
		"monkey":       false,
		"turkey.count": false,
		"keyName":      false,
		"secret1":      false,
		"db.pass":      false,
		"tokens.limit": false,
		"db2.token2":   false,
	}
	for name, want := range tests {
		if got := LooksSecret(name); got != want {
			t.Errorf("LooksSecret(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestDeclaredSecrecy(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		p    Parameter
		want bool
	}{
		{Parameter{Name: "cloud.sshKey"}, false},
		{Parameter{Name: "tls.cert", Secret: &no}, false},
		{Parameter{Name: "dns.domain", Secret: &yes}, true},
		{Parameter{Name: "db.password"}, true},
	}
	for _, tt := range tests {
		if got := tt.p.IsSecret(); got != tt.want {
			t.Errorf("%s (secret: %v).IsSecret() = %v, want %v", tt.p.Name, tt.p.Secret, got, tt.want)
		}
	}
	outs := []struct {
		o    Output
		want bool
	}{
		{Output{Name: "url"}, false},
		{Output{Name: "url", Kind: "secret"}, true},
		{Output{Name: "url", Kind: "secret/password"}, true},
		{Output{Name: "api.token"}, true},
		{Output{Name: "api.token", Secret: &no}, false},
		{Output{Name: "url", Secret: &yes}, true},
	}
	for _, tt := range outs {
		if got := tt.o.IsSecret(); got != tt.want {
			t.Errorf("output %s (kind %q, secret: %v).IsSecret() = %v, want %v", tt.o.Name, tt.o.Kind, tt.o.Secret, got, tt.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"name", "source", "depends", "lifecycle"}
	tests := map[string]string{"depnds": "depends", "dependss": "depends", "lifecylce": "lifecycle", "nmae": "name", "xyz": "", "sauce": ""}
	for in, want := range tests {
		if got := suggest(in, known); got != want {
			t.Errorf("suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

// A file that writes out more values than an alias bomb may expand to is not
// a bomb: its size bounds it (issue 12, item 4: a params file of 700,000
// parameters was refused as an "alias bomb").
func TestManyValuesWrittenOutLoad(t *testing.T) {
	const n = maxAliasNodes + 1000
	data := []byte("values: [" + strings.Repeat("0,", n-1) + "0]\n")
	docs, diags := ParseBytes("many.yaml", data)
	if diags.HasErrors() {
		t.Fatalf("want no error, got %v", diags)
	}
	if got := len(docs[0].Get("values").Items); got != n {
		t.Fatalf("got %d values, want %d", got, n)
	}
}

func TestSyntaxErrorsArePositioned(t *testing.T) {
	for _, tt := range []struct{ name, src, want string }{
		{"unclosed flow mapping", "a: 1\nb: [\n  {x: 1\n", "x.yaml:3:3: invalid YAML"},
		{"tab indentation", "a:\n\tb: 1\n", "x.yaml:2:1: invalid YAML"},
		{"bad indentation", "a:\n  b: 1\n c: 2\n", "x.yaml:3:"},
		{"a NUL in a comment", "a: 1\n# x\x00\n", "x.yaml:2:4: invalid YAML: control character U+0000 is not allowed"},
		{"a control character in a value", "a: 1\nb: {c: d\x01}\n", "x.yaml:2:9: invalid YAML: control character U+0001"},
		{"a control character after old Mac line ends", "a: 1\rb: 2\rc: \"x\x01\"\r", "x.yaml:3:6: invalid YAML: control character U+0001"},
		{"an alias of no anchor", "a: &bx 1\nc: [*bx, *bx]\nd: *b\n", "x.yaml:3:4: invalid YAML: the alias *b names no anchor (&b) written before it"},
		{"DEL after multibyte text", "a: \"é\x7f\"\n", "x.yaml:1:6: invalid YAML: control character U+007F"},
		// goccy accepts these; yaml/v3 names the line the collection
		// opened on, counted from 0.
		{"a ? in a flow mapping", "a: 1\nb:\n  source: {dir: ../a, x: ok?}\nc: 2\n", "x.yaml:3: invalid YAML: did not find expected ',' or '}'"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := ParseBytes("x.yaml", []byte(tt.src))
			if len(diags) != 1 || !strings.HasPrefix(diags[0].String(), tt.want) {
				t.Fatalf("got %v, want one error starting %q", diags, tt.want)
			}
		})
	}
}

// TestFlowNestingIsBounded: flow collections nested past the bound are an
// error at their place, before the parser sees them; brackets in quotes and
// comments do not count.
func TestFlowNestingIsBounded(t *testing.T) {
	deep := "x: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n"
	_, diags := ParseBytes("deep.yaml", []byte(deep))
	if len(diags) != 1 || !strings.Contains(diags[0].String(), "deep.yaml:1:260: flow collections ([ and {) nested more than 256 deep") {
		t.Fatalf("got %v", diags)
	}
	fine := "a: don't\nb: \"" + strings.Repeat("[", 1000) + "\"\nc: '" + strings.Repeat("{", 1000) + "' # " + strings.Repeat("[", 1000) + "\nd: [[1], {e: [2]}]\n"
	if _, diags := ParseBytes("fine.yaml", []byte(fine)); diags.HasErrors() {
		t.Fatalf("got %v", diags)
	}
}

// TestSortedSaysEachOnce: a diagnostic said twice the same (two entries
// sharing a component manifest) is printed once, and counted once; one of
// another field, message or severity stays.
func TestSortedSaysEachOnce(t *testing.T) {
	at := Pos{File: "a/hub-component.yaml", Line: 9, Col: 9}
	var ds Diagnostics
	ds.Errorf(at, "lifecycle.readyConditions[0].url", "unknown parameter %q", "x")
	ds.Errorf(Pos{File: "hub.yaml", Line: 2, Col: 1}, "components", "first")
	ds.Errorf(at, "lifecycle.readyConditions[0].url", "unknown parameter %q", "x")
	ds.Errorf(at, "lifecycle.readyConditions[0].dns", "unknown parameter %q", "x")
	ds.Warnf(at, "lifecycle.readyConditions[0].url", "unknown parameter %q", "x")
	got := ds.Sorted()
	if len(got) != 4 || len(got.Errors()) != 3 {
		t.Fatalf("got %d (%d errors): %v", len(got), len(got.Errors()), got)
	}
	if got[0].Pos.File != "a/hub-component.yaml" || got[3].Pos.File != "hub.yaml" {
		t.Errorf("order: %v", got)
	}
}
