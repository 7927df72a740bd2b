package params

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mapResolver resolves from plain maps; outputs are "comp:name" keys.
type mapResolver map[string]string

func (m mapResolver) Lookup(name string) (string, error) {
	if v, ok := m[name]; ok {
		return v, nil
	}
	return "", &UnknownError{Name: name}
}

func (m mapResolver) Output(comp, name string) (string, error) {
	if v, ok := m[comp+":"+name]; ok {
		return v, nil
	}
	return "", &UnknownError{Name: name, Component: comp}
}

func TestParse(t *testing.T) {
	tests := []struct {
		src  string
		want []Part
		err  string
	}{
		{"plain", []Part{{Kind: Literal, Text: "plain"}}, ""},
		{"", []Part{{Kind: Literal}}, ""},
		{"a ${b} c", []Part{{Kind: Literal, Text: "a "}, {Kind: Ref, Text: "b", Name: "b", Offset: 2}, {Kind: Literal, Text: " c", Offset: 6}}, ""},
		{"${db:host}", []Part{{Kind: Ref, Text: "db:host", Name: "host", Component: "db"}}, ""},
		{"${x/base64/json}", []Part{{Kind: Ref, Text: "x/base64/json", Name: "x", Encodings: []string{"base64", "json"}}}, ""},
		{"${path/to}", []Part{{Kind: Ref, Text: "path/to", Name: "path/to"}}, ""},
		{"#{a + 1}", []Part{{Kind: Expr, Text: "a + 1"}}, ""},
		{"#{ {'k': '}'}['k'] }", []Part{{Kind: Expr, Text: " {'k': '}'}['k'] "}}, ""},
		{"$${x} ##{y}", []Part{{Kind: Literal, Text: "${x} #{y}"}}, ""},
		{"cost: $5 #tag", []Part{{Kind: Literal, Text: "cost: $5 #tag"}}, ""},
		{"${x", nil, "unterminated ${"},
		{"#{a + {b: 1}", nil, "unterminated #{"},
		{"${}", nil, "invalid reference ${}"},
		{"${a b}", nil, "invalid reference ${a b}"},
		{"#{ }", nil, "empty expression"},
		{"#{'x}", nil, "unterminated string"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			got, err := Parse(tt.src)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Parse(%q) error = %v, want %q", tt.src, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got.Parts); diff != "" {
				t.Errorf("parts (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEval(t *testing.T) {
	r := mapResolver{
		"db.host": "db.local", "db.port": "5432", "n": "007", "on": "true", "empty": "",
		"secret": "s3cr3t", "b64": "aGVsbG8=", "db:url": "postgres://x", "multi": "a\nb",
		"component.auth-service.key": "k", "word": "password", "nul": "YQBi", "b64raw": "aGVsbG8",
	}
	tests := []struct {
		src, want, err string
	}{
		{"http://${db.host}:${db.port}", "http://db.local:5432", ""},
		{"${db:url}", "postgres://x", ""},
		{"${secret/base64}", "czNjcjN0", ""},
		{"${b64/unbase64}", "hello", ""},
		{"${multi/json}", `"a\nb"`, ""},
		{"${db.port/yaml}", `"5432"`, ""},
		{"${db.host/yaml}", `db.local`, ""},
		{"${secret/base64/unbase64}", "s3cr3t", ""},
		// Every value is a string, as in the Hub CLI.
		{"#{db.port + 1}", "", "no such overload"},
		{"#{int(db.port) + 1}", "5433", ""},
		{"#{n + '!'}", "007!", ""},
		{"#{db.port + 'x'}", "5432x", ""},
		{"#{on == 'true' ? 'a' : 'b'}", "a", ""},
		{"#{on && true}", "", "no such overload"},
		{"#{db.host.startsWith('db')}", "true", ""},
		{"#{[1, 2, 3].map(x, x * int(db.port))}", "5432,10864,16296", ""},
		{"#{{'a': 1}}", `{"a":1}`, ""},
		{"#{2.5 * 2.0}", "5", ""},
		{"#{2.5 * 2}", "", "no such overload"},
		{`#{params["component.auth-service.key"]}`, "k", ""},
		{`#{outputs["db"]["url"]}`, "postgres://x", ""},
		{"#{empty == '' ? 'none' : empty}", "none", ""},
		{"#{size(db.host)}", "8", ""},
		{"${nope}", "", `unknown parameter "nope"`},
		{"#{nope.at.all + 1}", "", `unknown parameter "nope.at.all"`},
		{"#{db.port +}", "", "syntax error"},
		{"#{int(db.port) / 0}", "", "division by zero"},
		{"${empty/unbase64}x", "x", ""},
		{"${db.host/unbase64}", "", "not base64"},
		// "password" is valid base64 of six bytes that are not text.
		{"${word/unbase64}", "", "not base64 of text"},
		{"${nul/unbase64}", "", "not base64 of text"},
		{"${b64raw/unbase64}", "hello", ""},
		// has() looks into maps; whether a parameter is set is asked of
		// params (has(db.host) made the name walk recurse without end).
		{"#{has(db.host)}", "", "has() tests a field of a map, not whether a parameter is set: for that, write has(params.db.host)"},
		{"#{has(db.nope)}", "", "write has(params.db.nope)"},
		{"#{'db.host' in params}", "true", ""},
		{"#{'db.nope' in params}", "false", ""},
		{"#{has(params.nope)}", "false", ""},
		{"#{has(params.secret)}", "true", ""},
		// Through params a dotted name is the parameter's: values are
		// strings, which have no fields (TestEvalDottedParams).
		{"#{has(params.db.host)}", "true", ""},
		{"#{has(params.db.nope)}", "false", ""},
		{"#{has(params.no.such.thing)}", "false", ""},
		{"#{params.db.nope}", "", `unknown parameter "db.nope"`},
		{"#{params.nope}", "", `unknown parameter "nope"`},
		{"#{'db' in params}", "false", ""},
		{"#{params.db.host + params.db.port}", "db.local5432", ""},
		{"#{[{'k': 1}].exists(x, has(x.k))}", "true", ""},
		{"#{has({'k': {'j': 1}}.k.j)}", "true", ""},
		{"#{has({'k': 1}.j)}", "false", ""},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			got, err := Expand(tt.src, r)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Expand(%q) = %q, %v; want error %q", tt.src, got, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Expand(%q): %v", tt.src, err)
			}
			if got != tt.want {
				t.Errorf("Expand(%q) = %q, want %q", tt.src, got, tt.want)
			}
		})
	}
}

// TestEvalDottedParams: through params a dotted name is the parameter's,
// beside a parameter named by its beginning too.
func TestEvalDottedParams(t *testing.T) {
	r := mapResolver{"db": "main", "db.host": "db.local", "a.b.c": "x"}
	for _, tt := range []struct{ src, want, err string }{
		{"#{params.db.host}", "db.local", ""},
		{"#{params.db}", "main", ""},
		{"#{has(params.db.host) ? params.db.host : 'localhost'}", "db.local", ""},
		{"#{has(params.db.port) ? params.db.port : 'none'}", "none", ""},
		{"#{params.db.host != '' ? params.db : ''}", "main", ""},
		{"#{params.db.host + params['db']}", "db.localmain", ""},
		{"#{params.a.b.c}", "x", ""},
		{"#{has(params.a.b)}", "false", ""},
		{"#{has(params.a)}", "false", ""},
		{"#{params.a.b}", "", `unknown parameter "a.b"`},
		{"#{[1].map(params, params.db.host)}", "", "no such key"},
		{"#{[{'db': {'host': 'h'}}].map(params, params.db.host)}", "h", ""},
	} {
		t.Run(tt.src, func(t *testing.T) {
			got, err := Expand(tt.src, r)
			switch {
			case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
				t.Fatalf("Expand(%q) = %q, %v; want error %q", tt.src, got, err, tt.err)
			case tt.err == "" && (err != nil || got != tt.want):
				t.Fatalf("Expand(%q) = %q, %v; want %q", tt.src, got, err, tt.want)
			}
		})
	}
}

func TestExprErrorShowsCaret(t *testing.T) {
	_, err := Expand("#{db.port + }", mapResolver{"db.port": "1"})
	var ee *ExprError
	if !errors.As(err, &ee) {
		t.Fatalf("want an ExprError, got %v", err)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "  | db.port + ") || !strings.HasSuffix(lines[2], "^") {
		t.Fatalf("error does not show the expression with a caret:\n%s", err)
	}
	if got := strings.Index(lines[2], "^") - 4; got != ee.Offset {
		t.Errorf("caret at column %d, offset %d", got, ee.Offset)
	}
}

// TestExprErrorShowsCaretThroughParams: a dotted name read through params
// that names nothing is said as a name read alone is, with the expression
// and a caret at params.
func TestExprErrorShowsCaretThroughParams(t *testing.T) {
	_, err := Expand("#{1 + params.no.such}", mapResolver{"db.port": "1"})
	var ee *ExprError
	if !errors.As(err, &ee) || ee.Unknown != "no.such" {
		t.Fatalf("want an ExprError naming no.such, got %v", err)
	}
	want := "#{1 + params.no.such}: unknown parameter \"no.such\"\n  | 1 + params.no.such\n  |     ^"
	if err.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", err, want)
	}
}

func TestExprNames(t *testing.T) {
	got := ExprNames("a.b + c * [1].map(x, x + d.e)[0] + params['p']")
	want := [][]string{{"a.b", "a"}, {"c"}, {"d.e", "d"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}
