// Package params locks a stack's parameters, expands them per component, and
// evaluates ${name} substitutions and #{expr} CEL expressions (seed 000
// "Deploy", DESIGN sections 4.1 and 4.2).
package params

import (
	"fmt"
	"strings"
)

// PartKind says what a part of a template is.
type PartKind uint8

// Kinds of template parts.
const (
	Literal PartKind = iota
	Ref              // ${name}, ${component:name}, with /encodings
	Expr             // #{cel expression}
)

// Part is one piece of a parsed value.
type Part struct {
	Kind      PartKind
	Text      string   // Literal: the text; Expr: the expression; Ref: what was between the braces
	Name      string   // Ref: the parameter or output name
	Component string   // Ref: the component of ${component:output}
	Encodings []string // Ref: base64, unbase64, json, yaml, applied left to right
	Offset    int      // byte offset of the part in the source
}

// Template is a parsed value: literal text with ${...} references and #{...}
// expressions. "$${" and "##{" stand for a literal "${" and "#{".
type Template struct {
	Src   string
	Parts []Part
}

// IsLiteral reports whether the template has no references or expressions.
func (t *Template) IsLiteral() bool {
	for _, p := range t.Parts {
		if p.Kind != Literal {
			return false
		}
	}
	return true
}

// Encodings known to ${name/encoding}.
var knownEncodings = map[string]bool{"base64": true, "unbase64": true, "json": true, "yaml": true}

// SyntaxError is a malformed template; Offset points into the source.
type SyntaxError struct {
	Src    string
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s\n%s", e.Msg, caret(e.Src, e.Offset))
}

// caret shows src with a ^ under offset, on one line.
func caret(src string, offset int) string {
	line := strings.ReplaceAll(src, "\n", " ")
	if offset > len(line) {
		offset = len(line)
	}
	return "  | " + line + "\n  | " + strings.Repeat(" ", runeCount(line[:offset])) + "^"
}

func runeCount(s string) int { return len([]rune(s)) }

// Parse parses a value. Values without "$" or "#" are returned as one literal
// without further work, which is the common case.
func Parse(src string) (*Template, error) {
	if !strings.ContainsAny(src, "$#") {
		return &Template{Src: src, Parts: []Part{{Kind: Literal, Text: src}}}, nil
	}
	t := &Template{Src: src}
	var lit strings.Builder
	litStart := 0
	flush := func() {
		if lit.Len() > 0 {
			t.Parts = append(t.Parts, Part{Kind: Literal, Text: lit.String(), Offset: litStart})
			lit.Reset()
		}
	}
	i := 0
	for i < len(src) {
		c := src[i]
		if (c == '$' || c == '#') && i+1 < len(src) {
			// "$${" and "##{" escape the opening.
			if src[i+1] == c && i+2 < len(src) && src[i+2] == '{' {
				if lit.Len() == 0 {
					litStart = i
				}
				lit.WriteByte(c)
				lit.WriteByte('{')
				i += 3
				continue
			}
			if src[i+1] == '{' {
				flush()
				var p Part
				var n int
				var err error
				if c == '$' {
					p, n, err = parseRef(src, i)
				} else {
					p, n, err = parseExpr(src, i)
				}
				if err != nil {
					return nil, err
				}
				t.Parts = append(t.Parts, p)
				i += n
				litStart = i
				continue
			}
		}
		if lit.Len() == 0 {
			litStart = i
		}
		lit.WriteByte(c)
		i++
	}
	flush()
	if len(t.Parts) == 0 {
		t.Parts = []Part{{Kind: Literal}}
	}
	return t, nil
}

// parseRef reads ${...} at src[start:]; it returns the part and its length.
func parseRef(src string, start int) (Part, int, error) {
	end := strings.IndexByte(src[start+2:], '}')
	if end < 0 {
		return Part{}, 0, &SyntaxError{Src: src, Offset: start, Msg: "unterminated ${ (missing })"}
	}
	body := src[start+2 : start+2+end]
	p := Part{Kind: Ref, Text: body, Offset: start}
	name := strings.TrimSpace(body)
	// Strip known /encoding suffixes; a slash followed by anything else is part of the name.
	for {
		i := strings.LastIndexByte(name, '/')
		if i < 0 || !knownEncodings[name[i+1:]] {
			break
		}
		p.Encodings = append([]string{name[i+1:]}, p.Encodings...)
		name = name[:i]
	}
	if comp, out, ok := strings.Cut(name, ":"); ok {
		p.Component, name = comp, out
		if !validName(comp) {
			return Part{}, 0, &SyntaxError{Src: src, Offset: start + 2, Msg: fmt.Sprintf("invalid component name %q in ${%s}", comp, body)}
		}
	}
	if !validName(name) {
		msg := fmt.Sprintf("invalid reference ${%s}: expected ${name}, ${component:output} or ${name/encoding}", body)
		if i := strings.LastIndexByte(name, '/'); i >= 0 {
			msg = fmt.Sprintf("unknown encoding %q in ${%s} (expected base64, unbase64, json or yaml)", name[i+1:], body)
		}
		return Part{}, 0, &SyntaxError{Src: src, Offset: start + 2, Msg: msg}
	}
	p.Name = name
	return p, end + 3, nil
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' || c == '/' || c == '|') {
			return false
		}
	}
	return true
}

// parseExpr reads #{...} at src[start:], matching braces and skipping string
// literals so that CEL maps and strings holding } work.
func parseExpr(src string, start int) (Part, int, error) {
	depth := 0
	i := start + 2
	for i < len(src) {
		switch c := src[i]; c {
		case '{':
			depth++
		case '}':
			if depth == 0 {
				expr := src[start+2 : i]
				if strings.TrimSpace(expr) == "" {
					return Part{}, 0, &SyntaxError{Src: src, Offset: start, Msg: "empty expression #{}"}
				}
				return Part{Kind: Expr, Text: expr, Offset: start}, i - start + 1, nil
			}
			depth--
		case '"', '\'':
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(src) {
				return Part{}, 0, &SyntaxError{Src: src, Offset: i, Msg: "unterminated string in #{...}"}
			}
			i = j
		}
		i++
	}
	return Part{}, 0, &SyntaxError{Src: src, Offset: start, Msg: "unterminated #{ (missing })"}
}

// Refs returns the references of the template, expressions excluded.
func (t *Template) Refs() []Part {
	var out []Part
	for _, p := range t.Parts {
		if p.Kind == Ref {
			out = append(out, p)
		}
	}
	return out
}

// RefsOf returns the references of a text, for dependency analysis: its
// ${...} parts and the names in its #{...} expressions (every candidate of
// each dotted chain). A text that does not parse has none: expanding it
// reports why.
func RefsOf(v string) []Part {
	if !strings.ContainsAny(v, "$#") {
		return nil
	}
	t, err := Parse(v)
	if err != nil {
		return nil
	}
	var out []Part
	for _, p := range t.Parts {
		switch p.Kind {
		case Ref:
			out = append(out, p)
		case Expr:
			for _, chain := range ExprNames(p.Text) {
				for _, n := range chain {
					out = append(out, Part{Kind: Ref, Name: n})
				}
			}
		}
	}
	return out
}
