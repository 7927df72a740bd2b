package state

import (
	"strings"
	"testing"
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
