package params

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Resolver gives values to the names a template refers to. Implementations do
// the scoping (qualifiers, depends, outputs) and detect cycles.
type Resolver interface {
	// Lookup returns the value of the plain name as ${name} sees it.
	Lookup(name string) (string, error)
	// Output returns the output name of component, as ${component:name} sees it.
	Output(component, name string) (string, error)
}

// SecretReader is a Resolver that knows whether the value it resolves for
// has read a secret so far: expressions that fail after reading one withhold
// their messages, which may quote the value.
type SecretReader interface {
	SecretRead() bool
}

// ReadsSecret reports whether r is a SecretReader that has read a secret.
func ReadsSecret(r Resolver) bool {
	sr, ok := r.(SecretReader)
	return ok && sr.SecretRead()
}

// UnknownError is a reference to a name nothing defines.
type UnknownError struct {
	Name       string
	Component  string // for ${component:name}
	Suggestion string
	Hint       string
}

func (e *UnknownError) Error() string {
	var msg string
	if e.Component != "" {
		msg = fmt.Sprintf("unknown output %s:%s", e.Component, e.Name)
	} else {
		msg = fmt.Sprintf("unknown parameter %q", e.Name)
	}
	if e.Suggestion != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", e.Suggestion)
	}
	if e.Hint != "" {
		msg += "; " + e.Hint
	}
	return msg
}

// Eval renders the template with values from r.
func (t *Template) Eval(r Resolver) (string, error) {
	if len(t.Parts) == 1 && t.Parts[0].Kind == Literal {
		return t.Parts[0].Text, nil
	}
	budget := BudgetOf(r)
	var b strings.Builder
	write := func(s string) error {
		if b.Len()+len(s) > MaxValueSize {
			return &BudgetError{Msg: fmt.Sprintf("the value would be larger than %s", sizeText(MaxValueSize))}
		}
		if err := budget.spendBytes(len(s)); err != nil {
			return err
		}
		b.WriteString(s)
		return nil
	}
	for _, p := range t.Parts {
		var v string
		var err error
		switch p.Kind {
		case Literal:
			v = p.Text
		case Ref:
			if p.Component != "" {
				v, err = r.Output(p.Component, p.Name)
			} else {
				v, err = r.Lookup(p.Name)
			}
			if err != nil {
				return "", err
			}
			if v, err = Encode(v, p.Encodings); err != nil {
				return "", fmt.Errorf("${%s}: %w", p.Text, err)
			}
		case Expr:
			if v, err = evalCEL(p.Text, r, budget); err != nil {
				return "", err
			}
		}
		if err := write(v); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// Check parses a value and compiles its expressions without evaluating
// anything: a plan finds a mistake in a value it expands only when the
// component runs (a kubernetes manifest's strings) before anything runs.
func Check(src string) error {
	t, err := Parse(src)
	if err != nil {
		return err
	}
	return t.Check()
}

// Check compiles the template's expressions, the first error.
func (t *Template) Check() error {
	for _, p := range t.Parts {
		if p.Kind == Expr {
			if err := CheckExpr(p.Text); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckExpr compiles one expression (the text between #{ and }).
func CheckExpr(expr string) error {
	_, err := compile(expr)
	return err
}

// Expand parses and evaluates a value in one go.
func Expand(src string, r Resolver) (string, error) {
	t, err := Parse(src)
	if err != nil {
		return "", err
	}
	return t.Eval(r)
}

// Encode applies encodings left to right: base64, unbase64, json, yaml.
func Encode(v string, encodings []string) (string, error) {
	for _, e := range encodings {
		// json and yaml escape a control byte in six; refuse before
		// building what could not be kept.
		if len(v) > MaxValueSize || e == "base64" && base64.StdEncoding.EncodedLen(len(v)) > MaxValueSize {
			return "", &BudgetError{Msg: fmt.Sprintf("%s: the value would be larger than %s", e, sizeText(MaxValueSize))}
		}
		switch e {
		case "base64":
			v = base64.StdEncoding.EncodeToString([]byte(v))
		case "unbase64":
			s, err := unbase64(v)
			if err != nil {
				return "", err
			}
			v = s
		case "json":
			b, _ := json.Marshal(v)
			v = string(b)
		case "yaml":
			v = yamlScalar(v)
		default:
			return "", fmt.Errorf("unknown encoding %q", e)
		}
	}
	return v, nil
}

// unbase64 decodes a base64 value (padded or not) that must decode to text:
// many words are valid base64 ("password" decodes to six bytes of garbage), so
// decoded bytes that are not UTF-8, or hold a NUL, mean the value was not
// base64 and substituting them would silently give garbage. The message never
// shows the value: it may be a secret.
func unbase64(v string) (string, error) {
	v = strings.TrimSpace(v)
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		if b, err = base64.RawStdEncoding.DecodeString(v); err != nil {
			return "", errors.New("unbase64: the value is not base64")
		}
	}
	if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
		return "", errors.New("unbase64: the value is not base64 of text (it decodes to bytes that are not UTF-8 text, or hold a NUL)")
	}
	return string(b), nil
}

// yamlScalar writes v as a YAML scalar that reads back as the same string: plain
// when that is safe, else double-quoted.
func yamlScalar(v string) string {
	if plainSafe(v) {
		return v
	}
	b, _ := json.Marshal(v) // JSON strings are valid YAML double-quoted scalars
	return string(b)
}

// plainSafe reports whether v can be written as a plain YAML scalar and still
// read as this string (not a number, boolean or null, no indicators).
func plainSafe(v string) bool {
	if v == "" || strings.TrimSpace(v) != v {
		return false
	}
	switch strings.ToLower(v) {
	case "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~", ".nan", ".inf", "-.inf", "+.inf":
		return false
	}
	if strings.ContainsAny(v[:1], "-?:,[]{}#&*!|>'\"%@`0123456789.+") {
		return false
	}
	if strings.Contains(v, ": ") || strings.Contains(v, " #") || strings.HasSuffix(v, ":") {
		return false
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}
