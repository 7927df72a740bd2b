package state

import (
	"bytes"
	"compress/gzip"
	"reflect"
	"strings"
	"testing"
)

// hubPlatform is a Hub CLI state as hub deploy wrote it (trimmed of the
// fields the reader skips): numbers, a JSON text, a secret output, provides.
const hubPlatform = `version: 1
kind: state
timestamp: 2026-12-01T05:58:57.63452765Z
status: deployed
meta:
  kind: stack
  name: base
lifecycle:
  order:
  - net
  - db
stackParameters:
- name: dns.domain
  value: base.example.com
- name: net.size
  value: 3
- component: net
  name: net.zone
  value: z1
stackOutputs:
- name: net:vpc.id
  value: vpc-7
- name: net:api.key
  value: K3yValue
  kind: secret
- name: db:password
  value: DbPw
- name: dns.domain
  value: base.example.com
provides:
  vpc:
  - net
components:
  db:
    status: deploying
    capturedOutputs:
    - component: db
      name: password
      value: DbPw
      kind: secret/password
  net:
    timestamp: 2026-12-01T05:58:57.634524233Z
    status: deployed
    rawOutputs:
    - name: vpc_id
      value: vpc-7
    capturedOutputs:
    - component: net
      name: vpc.id
      value: vpc-7
    - component: net
      name: api.key
      value: K3yValue
      kind: secret
operations:
- id: 3d41a0ad-82db-49a1-a94b-127b3a6fb73b
  operation: deploy
  status: success
`

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestDecodePlatformHub: elaborate -s reads a platform stack's state the Hub
// CLI wrote, plain or gzip-compressed, into what it reads of gantry's: the
// stack parameters by qualified name, the stack outputs, which of them are
// secret (by their kind, or their component's), the provides, and each
// component's status, order and outputs. Values that are not strings are
// JSON, as the Hub hands them to a component. A corrupt one is an error
// naming the file and what is wrong.
func TestDecodePlatformHub(t *testing.T) {
	want := &State{
		Version:       FormatVersion,
		Stack:         "base",
		Status:        StatusDeployed,
		Parameters:    map[string]string{"dns.domain": "base.example.com", "net.size": "3", "net.zone|net": "z1"},
		Outputs:       map[string]string{"net:vpc.id": "vpc-7", "net:api.key": "K3yValue", "db:password": "DbPw", "dns.domain": "base.example.com"},
		SecretOutputs: []string{"net:api.key", "db:password"},
		Provides:      map[string][]string{"vpc": {"net"}},
		Components: map[string]*Component{
			"net": {Status: StatusDeployed, Order: 1, Outputs: map[string]string{"vpc.id": "vpc-7", "api.key": "K3yValue"}, SecretOutputs: []string{"api.key"}},
			"db":  {Status: StatusIncomplete, Order: 2, Outputs: map[string]string{"password": "DbPw"}, SecretOutputs: []string{"password"}},
		},
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"plain", []byte(hubPlatform)},
		{"gzip", gzipped(t, hubPlatform)},
	} {
		got, err := Files{Snapshot: tc.data}.DecodePlatform("p.state")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, want)
		}
	}

	// Values as the Hub's util.MaybeJson gives them to a component.
	for _, tc := range []struct{ value, want string }{
		{`"8080"`, "8080"},
		{`8080`, "8080"},
		{`1.5`, "1.5"},
		{`true`, "true"},
		{`{env: prod, team: net}`, `{"env":"prod","team":"net"}`},
		{`[a, 2]`, `["a",2]`},
		{`null`, ""},
		{`""`, ""},
	} {
		doc := "version: 1\nkind: state\nmeta: {name: base}\nstackOutputs:\n- name: x\n  value: " + tc.value + "\n"
		got, err := Files{Snapshot: []byte(doc)}.DecodePlatform("p.state")
		if err != nil {
			t.Fatalf("%s: %v", tc.value, err)
		}
		if got.Outputs["x"] != tc.want {
			t.Errorf("value %s: got %q, want %q", tc.value, got.Outputs["x"], tc.want)
		}
	}

	// Components lifecycle.order does not name come after, by name; one it
	// names that the state has no record of is not deployed.
	doc := "kind: state\nlifecycle:\n  order: [b, c]\ncomponents:\n  z: {status: deployed}\n  a: {status: undeployed}\n  b: {status: failed}\n"
	got, err := Files{Snapshot: []byte(doc)}.DecodePlatform("p.state")
	if err != nil {
		t.Fatal(err)
	}
	if order := got.ComponentOrder(); !reflect.DeepEqual(order, []string{"b", "c", "a", "z"}) || got.Components["c"].Status != "" {
		t.Errorf("order %v, c %+v", order, got.Components["c"])
	}

	truncated := gzipped(t, hubPlatform)
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"truncated gzip", truncated[:len(truncated)/2], "state p.state: the gzip-compressed Hub CLI state cannot be read: unexpected EOF"},
		{"not YAML", []byte("kind: state\nstackOutputs: [\n"), "p.state:"},
		{"not YAML", []byte("kind: state\nstackOutputs: [\n"), "the Hub CLI state is not valid"},
		{"wrong shape", []byte("kind: state\nstackOutputs: {a: b}\n"), "p.state:2:"},
		{"gzip of another kind", gzipped(t, "kind: stack\n"), `state p.state: the gzip-compressed Hub CLI state has kind "stack": expected kind: state`},
		{"gzip of no YAML", gzipped(t, "\x00\x01"), "the gzip-compressed Hub CLI state"},
		{"output without a name", []byte("kind: state\nstackOutputs:\n- value: x\n"), "state p.state: the Hub CLI state is not valid: stackOutputs entry 1 has no name"},
		{"parameter without a name", []byte("kind: state\nstackParameters:\n- value: x\n"), "stackParameters entry 1 has no name"},
		{"empty component", []byte("kind: state\ncomponents:\n  net:\n"), "component net has an empty record"},
		{"secret on the faulty line", []byte("kind: state\nstackOutputs: {db.password: S3cretVal}\n"), "p.state:2:15: the Hub CLI state is not valid: expected a list, got a mapping"},
	} {
		_, err := Files{Snapshot: tc.data}.DecodePlatform("p.state")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.name, err, tc.want)
		}
		// The decoder's quote of the file's lines is left out: it may
		// hold a secret.
		if err != nil && (strings.Contains(err.Error(), "\n") || strings.Contains(err.Error(), "S3cretVal")) {
			t.Errorf("%s: the message quotes the file: %v", tc.name, err)
		}
	}

	// A gantry state is read as before, and a stack's own -s still refuses
	// the Hub's.
	if got, err := (Files{Snapshot: []byte("version: 1\nstack: base\noutputs: {a: b}\n")}).DecodePlatform("p.state"); err != nil || got.Outputs["a"] != "b" {
		t.Errorf("gantry state: %+v, %v", got, err)
	}
	if _, err := (Files{Snapshot: []byte(hubPlatform)}).Decode("p.state"); err == nil || !strings.Contains(err.Error(), "does not deploy on a Hub CLI state nor take one over") {
		t.Errorf("own state: %v", err)
	}
}
