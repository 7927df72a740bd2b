package params

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExpandedReads: what the resolvers handed out after the expansion give
// of names outside the component's parameters is recorded — stack
// parameters, outputs by plain name and by component, hub.provides, names
// found undefined — and nothing else: the component's own parameters, its
// name, a plain name with a colon (its key would be an output's), what the
// expansion itself read, what LookupRead looks at.
func TestExpandedReads(t *testing.T) {
	exp, diags := expandFixture(t, `  - {name: greeting, value: hello}
  - {name: db.password, value: s3cret}
  - {name: seen.by.expansion, value: x}
`, `  - {name: own, value: "${seen.by.expansion}"}
`, map[string]map[string]string{"a": {"host": "10.0.0.1", "password": "pw"}})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	if got := exp.Reads(); len(got) != 0 {
		t.Fatalf("reads after the expansion = %v, want none", got)
	}
	r := exp.Resolver()
	tracked, _ := exp.SecretTracking()
	for _, name := range []string{"own", "greeting", "hub.componentName", "hub.provides", "host", "nothing.here"} {
		r.Lookup(name)
	}
	tracked.Lookup("db.password")
	tracked.Output("a", "password")
	r.Lookup("a:password") // no such plain name: not the output's key
	if _, err := exp.LookupRead("never.recorded"); err != nil {
		t.Fatal(err)
	}
	want := map[string]Read{
		"greeting":     {Value: "hello"},
		"hub.provides": {Value: "kubernetes vault"},
		"host":         {Value: "10.0.0.1", From: "a"},
		"nothing.here": {Absent: true},
		"db.password":  {Value: "s3cret", Secret: true},
		"a:password":   {Value: "pw", Secret: true, From: "a"},
	}
	if diff := cmp.Diff(want, exp.Reads()); diff != "" {
		t.Errorf("reads (-want +got):\n%s", diff)
	}
	for key, w := range want {
		got, err := exp.LookupRead(key)
		if err != nil || got != w {
			t.Errorf("LookupRead(%q) = %+v, %v; want %+v", key, got, err, w)
		}
	}
	if len(exp.Reads()) != len(want) {
		t.Errorf("LookupRead recorded reads: %v", exp.Reads())
	}
}

// TestLookupReadPending: an output of a component that has not run cannot
// be read now, which a plan must not take for "the same".
func TestLookupReadPending(t *testing.T) {
	exp, diags := expandFixture(t, "", "", map[string]map[string]string{"late": {"url": "", "(pending)": "yes"}})
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	if _, err := exp.LookupRead("late:url"); err == nil {
		t.Error("LookupRead of a pending output gave no error")
	}
}

// TestResolversAtOnce: resolvers of one component used from several
// goroutines (plugin entries expanded at once) share only the record of
// reads, which is locked, and what they read (go test -race): each has its
// own secrets flag and its own marks of the links it expands.
func TestResolversAtOnce(t *testing.T) {
	exp, diags := expandFixture(t, "  - {name: greeting, value: hello}\n  - {name: db.password, value: s3cret}\n  - {name: lnk, kind: link, value: \"x-${greeting}\"}\n", "", nil)
	if diags.HasErrors() {
		t.Fatal(diags.Err())
	}
	done := make(chan bool)
	for i := range 4 {
		go func() {
			r := exp.Resolver()
			if i%2 == 0 {
				r, _ = exp.SecretTracking()
			}
			for range 200 {
				r.Lookup("greeting")
				r.Lookup("db.password")
				// A link is expanded by each resolver on its own: another's
				// expansion of it at the same time is no cycle.
				if v, err := r.Lookup("lnk"); err != nil || v != "x-hello" {
					t.Errorf("lnk = %q, %v", v, err)
				}
			}
			done <- ReadsSecret(r)
		}()
	}
	for range 4 {
		if !<-done {
			t.Error("a resolver that read a secret does not say so")
		}
	}
	if got := len(exp.Reads()); got != 3 {
		t.Errorf("reads = %v", exp.Reads())
	}
}
