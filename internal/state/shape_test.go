package state

import (
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

func TestDecodeNamesEveryShapeProblem(t *testing.T) {
	const good = `version: 1
stack: s
status: deployed
components:
  app:
    status: deployed
    order: 0
    parameters:
      - {name: db.password, value: hunter2secret, secret: true}
`
	for _, tc := range []struct {
		name string
		old  string
		new  string
		want []string // lines of the error, in order
	}{
		{"unknown fields, in document order", "status: deployed\n", "status: deployed\nfoo: 1\nbar: 2\n", []string{
			`s.state:4:1: the state is not valid: unknown field "foo"`,
			`s.state:5:1: the state is not valid: unknown field "bar"`,
			`(a newer gantry may have written s.state: use that version of gantry or a later one)`,
		}},
		{"kinds, in words, with the field's path", "    order: 0\n", "    order: abc\n    verb: [x]\n", []string{
			`s.state:7:12: the state is not valid: components.app.order: expected an integer, got a string`,
			`s.state:8:11: the state is not valid: components.app.verb: expected a string, got a list`,
		}},
		{"a mapping where a list goes", "    parameters:\n", "    provides: {a: b}\n    parameters:\n", []string{
			`s.state:8:15: the state is not valid: components.app.provides: expected a list, got a mapping`,
		}},
		{"no value quoted", "secret: true}", "secret: hunter2}", []string{
			`s.state:9:59: the state is not valid: components.app.parameters[0].secret: expected true or false, got a string`,
		}},
		{"what the decoder takes is not told", "    order: 0\n", "    order: 1.5\n    depends: x\n", []string{
			`s.state:8:14: the state is not valid: components.app.depends: expected a list, got a string`,
		}},
		{"a tagged value's text is not quoted", "value: hunter2secret", "value: !!bool hunter2secret", []string{
			`s.state:9:42: the state is not valid: cannot convert a value to boolean`,
		}},
		{"a time that is none", "    order: 0\n", "    order: 0\n    started: yesterday\n", []string{
			`s.state:8:14: the state is not valid: expected a time (2006-01-02T15:04:05Z)`,
		}},
		{"a key written twice is named, and where it was first", "    order: 0\n", "    order: 0\n    order: 1\n", []string{
			`s.state:8:5: the state is not valid: mapping key "order" is written twice (first at s.state:7:5)`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := strings.Replace(good, tc.old, tc.new, 1)
			if doc == good {
				t.Fatal("the case changes nothing")
			}
			_, err := Decode("s.state", []byte(doc))
			if err == nil {
				t.Fatal("decoded")
			}
			if got := strings.Split(err.Error(), "\n"); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", err, strings.Join(tc.want, "\n"))
			}
			if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "Go struct") {
				t.Errorf("the error says too much: %s", err)
			}
		})
	}
	if _, err := Decode("s.state", []byte(good)); err != nil {
		t.Fatalf("the good state: %v", err)
	}
}

// FuzzShapeProblems: the shape check never fails, and a document it tells
// of is one the decoder refuses, at one of the places it names; no error
// of Decode speaks of Go types.
func FuzzShapeProblems(f *testing.F) {
	f.Add([]byte("version: 1\nstack: s\ncomponents:\n  a: {status: deployed, order: 0, depends: [b]}\n"))
	f.Add([]byte("version: 1\nfoo: [1, {a: b}]\ncomponents: 5\n"))
	f.Add([]byte("components:\n  a:\n    plugins:\n      - {name: n, config: {x: [1]}, resources: [{weight: x}]}\n"))
	f.Add([]byte("updated: 2026-01-02T03:04:05Z\nsecretOutputs: &x [a]\noutputs: *x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return
		}
		probs := shapeProblems(data)
		_, derr := decodeYAML(data)
		if derr == nil {
			return
		}
		_, err := Decode("f.state", data)
		if err == nil {
			t.Fatalf("Decode took %q, the decoder did not: %v", data, derr)
		}
		msg := err.Error()
		if strings.Contains(msg, "Go struct") {
			t.Fatalf("Decode(%q) speaks of Go: %s", data, msg)
		}
		if agrees(probs, yaml.FormatError(derr, false, false)) && !strings.HasPrefix(msg, "f.state:") {
			t.Fatalf("Decode(%q) = %s, not the shape's problems %v", data, msg, probs)
		}
	})
}
