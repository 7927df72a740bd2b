package params

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/manifest"
)

func componentFrom(t *testing.T, name, paramsYAML string) *manifest.Component {
	t.Helper()
	src := "version: 1\nkind: component\nmeta: {name: " + name + "}\nparameters:\n" + paramsYAML
	docs, diags := manifest.ParseBytes(name+"/hub-component.yaml", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	c := manifest.DecodeComponent(docs[0], &diags)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	return c
}

// fixture: components a, b, c, app in deploy order; app depends on b then a.
func expandFixture(t *testing.T, stackParams, compParams string, outputs map[string]map[string]string) (*Expanded, manifest.Diagnostics) {
	t.Helper()
	l, diags := Lock(LockInput{Stack: stackFrom(t, stackParams), Env: env(), DeploymentID: "id"})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	x := NewOutputIndex([]string{"a", "b", "c", "app", "late"})
	for comp, outs := range outputs {
		var names []string
		for n := range outs {
			names = append(names, n)
		}
		x.Declare(comp, names)
		if outs["(pending)"] == "" {
			x.Set(comp, outs, []string{"password"})
		}
	}
	return ExpandComponent(ComponentInput{Locked: l, Component: componentFrom(t, "app", compParams), Depends: []string{"b", "a"}, Outputs: x, Provides: "kubernetes vault"})
}

func TestExpandLookupOrder(t *testing.T) {
	const stack = `  - {name: x, value: plain-param}
  - {name: x, component: app, value: qualified}
  - {name: y, value: plain-param}
  - {name: z, value: plain-param}
  - {name: w, value: plain-param}
`
	outputs := map[string]map[string]string{
		"a": {"x": "out-a", "y": "out-a", "z": "out-a"},
		"b": {"y": "out-b"},
		"c": {"z": "out-c", "w": "out-c"},
	}
	exp, diags := expandFixture(t, stack, `  - {name: x}
  - {name: y}
  - {name: z}
  - {name: w}
  - {name: v, value: manifest}
  - {name: n, value: "${hub.componentName} ${hub.stackName} ${hub.provides}"}
`, outputs)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	want := map[string][2]string{
		"x": {"qualified", "hub.yaml:6"}, // name|component first
		"y": {"out-b", "output:b"},       // then dep:name in depends order (b before a)
		"z": {"out-a", "output:a"},       // a dependency's output before a plain one
		"w": {"out-c", "output:c"},       // plain outputs before stack parameters
		"v": {"manifest", "app/hub-component.yaml:9"},
		"n": {"app test kubernetes vault", "app/hub-component.yaml:10"},
	}
	for name, w := range want {
		v := exp.Get(name)
		if v.Value != w[0] || v.Source != w[1] {
			t.Errorf("%s = %q from %q, want %q from %q", name, v.Value, v.Source, w[0], w[1])
		}
	}
}

func TestExpandFoundInScopeOverridesManifestValue(t *testing.T) {
	exp, diags := expandFixture(t, "  - {name: port, value: 9000}\n", `  - {name: port, value: 5432}
  - {name: host, default: localhost}
  - {name: url, value: "http://${host}:${port}"}
  - {name: maybe, empty: allow}
  - {name: blank, value: " "}
`, nil)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	for name, want := range map[string]string{"port": "9000", "host": "localhost", "url": "http://localhost:9000", "maybe": "", "blank": " "} {
		if got := exp.Get(name).Value; got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	env := strings.Join(exp.Env(), ",")
	if env != "" {
		t.Errorf("no env: declared, got %q", env)
	}
}

func TestExpandErrors(t *testing.T) {
	_, diags := expandFixture(t, "  - {name: e, empty: allow}\n", `  - {name: missing}
  - {name: emptied, value: "${e}"}
  - {name: bad, value: "${nope}"}
  - {name: e}
`, nil)
	var got []string
	for _, d := range diags.Errors() {
		got = append(got, d.String())
	}
	text := strings.Join(got, "\n")
	for _, want := range []string{
		`parameter "missing" has no value`,
		`parameter "bad": unknown parameter "nope"`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing error %q in:\n%s", want, text)
		}
	}
	if len(got) != 2 {
		t.Errorf("want 2 errors, got %d:\n%s", len(got), text)
	}
}

// TestExpandLeftOut: in a partial stack (ComponentInput.LeftOut) a name
// nothing declares may be declared by a component left out, and so may an
// output of one: those wait instead of being errors. The mistakes a value
// has in itself, and an output of a component the stack does not have, are
// still said.
func TestExpandLeftOut(t *testing.T) {
	l, diags := Lock(LockInput{Stack: stackFrom(t, "  - {name: known, value: k}\n"), Env: env(), DeploymentID: "id"})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	c := componentFrom(t, "app", `  - {name: missing}
  - {name: plain, value: "${nope}"}
  - {name: output, value: "${gone:url}"}
  - {name: outputs, value: "#{outputs.gone.url}"}
  - {name: nosuch, value: "${nosuch:url}"}
  - {name: expr, value: "#{int(nope) + 1}"}
  - {name: uses, value: "${plain}-${known}"}
  - {name: fine, value: "${known}"}
  - {name: syntax, value: "#{1 +}"}
  - {name: unclosed, value: "${known"}
`)
	x := NewOutputIndex([]string{"app"})
	for _, tc := range []struct {
		open    bool
		errors  []string // the parameters with an error
		pending []string
	}{
		{open: false, errors: []string{"missing", "plain", "output", "outputs", "nosuch", "expr", "syntax", "unclosed"}}, // uses: said at plain
		{open: true, errors: []string{"nosuch", "syntax", "unclosed"}, pending: []string{"missing", "plain", "output", "outputs", "expr", "uses"}},
	} {
		var leftOut map[string]bool
		if tc.open {
			leftOut = map[string]bool{"gone": true}
		}
		exp, diags := ExpandComponent(ComponentInput{Locked: l, Component: c, Outputs: x, LeftOut: leftOut})
		var errs, pending []string
		for _, d := range diags.Errors() {
			name, _, _ := strings.Cut(strings.TrimPrefix(d.Msg, `component app: parameter "`), `"`)
			errs = append(errs, name)
		}
		for _, v := range exp.Values {
			if v.Pending != "" {
				pending = append(pending, v.Name)
			}
		}
		if strings.Join(errs, " ") != strings.Join(tc.errors, " ") || strings.Join(pending, " ") != strings.Join(tc.pending, " ") {
			t.Errorf("open=%v: errors %v, pending %v; want errors %v, pending %v\n%v", tc.open, errs, pending, tc.errors, tc.pending, diags.Err())
		}
		if got := exp.Get("fine").Value; got != "k" {
			t.Errorf("open=%v: fine = %q, want k", tc.open, got)
		}
	}
}

// TestExpandEnvProblems: values exported to the environment that each fit
// in one variable but not together in what Linux passes to a process are
// refused, once, naming them and no size; one longer than a variable is
// refused alone. Expanding alone (gantry params, render) refuses neither.
func TestExpandEnvProblems(t *testing.T) {
	defer func(m int) { MaxEnvTotal = m }(MaxEnvTotal)
	MaxEnvTotal = inheritedEnv() + 1_500_000 // 12 values of 120,000 bytes fit
	for _, tc := range []struct {
		name string
		size []int // of the values p0, p1…
		want []string
	}{
		{name: "fit", size: repeat(120_000, 10)},
		{name: "together too large", size: repeat(120_000, 20),
			want: []string{"component app: its parameters exported to the environment (p0, p1, p2, p3, p4, p5, p6, p7, p8, p9, p10, p11, p12, p13, p14, p15, p16, p17, p18, p19) do not fit, with the environment gantry passes on, in the "}},
		{name: "one too large", size: append(repeat(120_000, 20), MaxEnvEntry),
			want: []string{`component app: parameter "p20" is exported as P20, and its value is longer than the`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stack, comp strings.Builder
			for i, n := range tc.size {
				fmt.Fprintf(&stack, "  - {name: p%d, value: %s}\n", i, strings.Repeat("x", n))
				fmt.Fprintf(&comp, "  - {name: p%d, env: P%d}\n", i, i)
			}
			exp, diags := expandFixture(t, stack.String(), comp.String(), nil)
			if diags.HasErrors() {
				t.Fatalf("expanding alone refused: %v", diags.Err())
			}
			var got []string
			for _, d := range exp.EnvProblems() {
				got = append(got, d.Msg)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %d errors", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], w) || strings.Contains(got[i], "120000") {
					t.Errorf("got %q, want it to begin %q and give no size", got[i], w)
				}
			}
		})
	}
}

func repeat(n, times int) []int {
	out := make([]int, times)
	for i := range out {
		out[i] = n
	}
	return out
}

// TestExpandValueToEmpty: a value or default that expands to nothing is the
// value; only a parameter with neither must find one in scope.
func TestExpandValueToEmpty(t *testing.T) {
	exp, diags := expandFixture(t, "  - {name: e, kind: tech, empty: allow}\n", `  - {name: emptied, value: "${e}"}
  - {name: cel, value: "#{e}"}
  - {name: defaulted, default: "${e}"}
  - {name: spaced, value: "  x  ", env: SPACED}
`, nil)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	for _, n := range []string{"emptied", "cel", "defaulted"} {
		if v := exp.Get(n); v.Value != "" {
			t.Errorf("%s = %q, want empty", n, v.Value)
		}
	}
	// Values keep their spaces; the environment gets them trimmed.
	if v := exp.Get("spaced"); v.Value != "  x  " {
		t.Errorf("spaced = %q", v.Value)
	}
	if env := strings.Join(exp.Env(), ","); env != "SPACED=x" {
		t.Errorf("env = %q, want SPACED=x", env)
	}
}

// TestExpandHidesOutputsOfItsKind: a component does not see the outputs of
// components of its kind (meta.kind), plain or qualified, through depends
// or not; components of another kind see them.
func TestExpandHidesOutputsOfItsKind(t *testing.T) {
	x := NewOutputIndex([]string{"base", "svc1", "svc2", "consumer"})
	for _, c := range []string{"base", "svc1", "svc2"} {
		x.Declare(c, []string{"endpoint"})
		x.Set(c, map[string]string{"endpoint": c + ".example"}, nil)
	}
	x.SetKind("base", "base")
	x.SetKind("svc1", "svc")
	x.SetKind("svc2", "svc")
	x.SetKind("consumer", "consumer")
	l, _ := Lock(LockInput{Stack: stackFrom(t, ""), DeploymentID: "id"})
	svc2 := componentFrom(t, "svc2", "  - {name: endpoint}\n")
	svc2.Meta.Kind = "svc"
	exp, diags := ExpandComponent(ComponentInput{Locked: l, Component: svc2, Depends: []string{"svc1"}, Outputs: x})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	if v := exp.Get("endpoint"); v.Value != "base.example" {
		t.Errorf("svc2 endpoint = %q from %s, want base.example", v.Value, v.Source)
	}
	// Qualified: unknown, with the reason.
	_, diags = ExpandComponent(ComponentInput{Locked: l, Component: componentFrom(t, "svc2", `  - {name: peer, value: "${svc1:endpoint}"}
`), Outputs: x})
	if !diags.HasErrors() || !strings.Contains(diags.Err().Error(), "unknown output svc1:endpoint; svc1 is of the same kind as svc2 (meta.kind svc)") {
		t.Errorf("want svc1:endpoint hidden from svc2 (its kind from the index), got %v", diags)
	}
	// Another kind sees every instance; the latest in deploy order wins.
	exp, diags = ExpandComponent(ComponentInput{Locked: l, Component: componentFrom(t, "consumer", `  - {name: endpoint}
  - {name: first, value: "${svc1:endpoint}"}
`), Outputs: x})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	if a, b := exp.Get("endpoint").Value, exp.Get("first").Value; a != "svc2.example" || b != "svc1.example" {
		t.Errorf("consumer: endpoint = %q, first = %q", a, b)
	}
}

func TestExpandLinkParametersReadOutputs(t *testing.T) {
	exp, diags := expandFixture(t, `  - {name: api.url, kind: link, value: "http://${api.host}:${port}"}
  - {name: port, value: 80}
  - {name: conn, kind: link, value: "${a:password}"}
`, `  - {name: api.url}
  - {name: conn}
`, map[string]map[string]string{"a": {"api.host": "10.0.0.1", "password": "pw"}})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	if v := exp.Get("api.url"); v.Value != "http://10.0.0.1:80" || v.Source != "hub.yaml:5" {
		t.Errorf("api.url = %q from %q", v.Value, v.Source)
	}
	if v := exp.Get("conn"); v.Value != "pw" || !v.Secret {
		t.Errorf("conn = %q secret=%v, want the secret output", v.Value, v.Secret)
	}
}

func TestExpandCollisionLaterInDeployOrderWins(t *testing.T) {
	// a and c both emit host; c is later in deploy order. The index is filled in
	// the opposite order to show that completion order does not matter.
	x := NewOutputIndex([]string{"a", "b", "c", "app"})
	x.Declare("c", []string{"host"})
	x.Declare("a", []string{"host"})
	x.Set("c", map[string]string{"host": "from-c"}, nil)
	x.Set("a", map[string]string{"host": "from-a"}, nil)
	l, _ := Lock(LockInput{Stack: stackFrom(t, ""), DeploymentID: "id"})
	exp, diags := ExpandComponent(ComponentInput{Locked: l, Component: componentFrom(t, "app", "  - {name: host}\n"), Outputs: x})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	if v := exp.Get("host"); v.Value != "from-c" || v.Source != "output:c" {
		t.Errorf("host = %q from %q, want from-c from output:c", v.Value, v.Source)
	}
	// Components after the asking one are never seen.
	x2 := NewOutputIndex([]string{"app", "late"})
	x2.Declare("late", []string{"host"})
	x2.Set("late", map[string]string{"host": "late"}, nil)
	_, diags = ExpandComponent(ComponentInput{Locked: l, Component: componentFrom(t, "app", "  - {name: host}\n"), Outputs: x2})
	if !diags.HasErrors() {
		t.Errorf("an output of a later component was used")
	}
}

func TestExpandPendingOutputs(t *testing.T) {
	x := NewOutputIndex([]string{"db", "app"})
	x.Declare("db", []string{"host"})
	l, _ := Lock(LockInput{Stack: stackFrom(t, ""), DeploymentID: "id"})
	exp, diags := ExpandComponent(ComponentInput{Locked: l, Component: componentFrom(t, "app", `  - {name: host}
  - {name: url, value: "pg://${host}"}
  - {name: direct, value: "${db:host}"}
`), Depends: []string{"db"}, Outputs: x})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	for _, n := range []string{"host", "url", "direct"} {
		if v := exp.Get(n); v.Pending != "db" {
			t.Errorf("%s: pending = %q, want db", n, v.Pending)
		}
	}
}

// TestOwnOutputMiss: a resolver's miss of a name the component declares
// as its own output says why; another miss says nothing more.
func TestOwnOutputMiss(t *testing.T) {
	exp, diags := expandFixture(t, "", "  - {name: p, value: x}\noutputs:\n  - name: host\n", nil)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	for _, tt := range []struct{ name, want string }{
		{"host", `unknown parameter "host"; it is an output of app itself, and a component does not see its own outputs`},
		{"nosuch", `unknown parameter "nosuch"`},
	} {
		if _, err := exp.Resolver().Lookup(tt.name); err == nil || err.Error() != tt.want {
			t.Errorf("Lookup(%s) = %v, want %q", tt.name, err, tt.want)
		}
	}
}
