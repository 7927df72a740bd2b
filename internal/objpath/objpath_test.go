package objpath

import (
	"encoding/json"
	"strings"
	"testing"
)

const service = `{
  "kind": "Service",
  "metadata": {"name": "web", "labels": {"app.kubernetes.io/name": "web"}},
  "spec": {"clusterIP": "10.0.0.7", "ports": [{"port": 80}, {"port": 443, "name": "https"}]},
  "status": {"loadBalancer": {"ingress": [{"hostname": "lb.example.com"}]}},
  "data": {"tls.crt": "Y2VydA=="}
}`

func TestGet(t *testing.T) {
	var obj any
	if err := json.Unmarshal([]byte(service), &obj); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		want any
		err  string
	}{
		{path: ".spec.clusterIP", want: "10.0.0.7"},
		{path: "{.spec.clusterIP}", want: "10.0.0.7"},
		{path: " { $.spec.clusterIP } ", want: "10.0.0.7"},
		{path: ".status.loadBalancer.ingress[0].hostname", want: "lb.example.com"},
		{path: ".spec.ports[1].port", want: float64(443)},
		{path: `.data.tls\.crt`, want: "Y2VydA=="},
		{path: `.data['tls.crt']`, want: "Y2VydA=="},
		{path: `.metadata.labels["app.kubernetes.io/name"]`, want: "web"},
		{path: `.metadata.labels['a]b']`, err: `.metadata.labels has no field "a]b"`},
		{path: ".spec.loadBalancerIP", err: `.spec has no field "loadBalancerIP"`},
		{path: ".spec.ports[2].port", err: ".spec.ports has 2 items: no [2]"},
		{path: ".spec.clusterIP.x", err: ".spec.clusterIP is a string, not an object"},
		{path: ".spec[0]", err: ".spec is an object, not a list"},
		{path: "[0]", err: "the object is an object, not a list"},
	} {
		p, err := Parse(tc.path)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.path, err)
			continue
		}
		got, err := p.Get(obj)
		switch {
		case tc.err != "":
			if err == nil || err.Error() != tc.err {
				t.Errorf("Get(%q) = %v, %v; want error %q", tc.path, got, err, tc.err)
			}
		case err != nil:
			t.Errorf("Get(%q): %v", tc.path, err)
		case got != tc.want:
			t.Errorf("Get(%q) = %#v, want %#v", tc.path, got, tc.want)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct{ path, err string }{
		{"", "names no field"},
		{"{}", "names no field"},
		{"{.spec", "a { without its }"},
		{"spec.clusterIP", "expected . or [ at character 1"},
		{".spec..x", "an empty field name"},
		{".items[*].name", "filters, wildcards and unions"},
		{".items[?(@.name==\"x\")]", "filters, wildcards and unions"},
		{".spec.clusterIP}", `'}' at character 16`},
		{"{.spec.a} {.spec.b}", `'}' at character 9`},
		{".data['a','b']", "without its closing ']"},
		{".spec .a", `' ' at character 6`},
		{".data.${k}", `'$' at character 7`},
		{".items.*", `'*' at character 8`},
		{".items[ 0]", "is not a list index"},
		{"..name", "an empty field name at character 2"},
		{".items[-1]", "is not a list index"},
		{".items[0", "a [ without its ]"},
		{"." + strings.Repeat("a", MaxLen), "at most 1024"},
	} {
		if _, err := Parse(tc.path); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Parse(%q) = %v, want an error with %q", tc.path, err, tc.err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{".spec.clusterIP", "{.a[0].b}", `.data.tls\.crt`, `.m['a.b']`, "[3]", "{", `.a\`} {
		f.Add(s)
	}
	var obj any
	_ = json.Unmarshal([]byte(service), &obj)
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			return
		}
		if p.String() != s {
			t.Fatalf("String() = %q, want %q", p.String(), s)
		}
		_, _ = p.Get(obj) // never panics
	})
}
