package component

import (
	"fmt"
	"strings"

	"github.com/gantry-dev/gantry/internal/params"
)

// renderMustache renders the mustache subset that fits parameter values:
// {{name}} and {{{name}}} / {{&name}} substitute (without HTML escaping: these
// are configuration files, not web pages), {{#name}}…{{/name}} keeps its body
// when the value is true-ish (not "", "false" or "0"), {{^name}}…{{/name}}
// when it is not, and {{! comments }} vanish. Dotted names are parameter
// names, so {{db.host}} is the parameter db.host.
func renderMustache(name, src string, r params.Resolver) (string, error) {
	var b strings.Builder
	type section struct {
		name     string
		offset   int
		emitting bool
	}
	var stack []section
	emitting := func() bool {
		for _, s := range stack {
			if !s.emitting {
				return false
			}
		}
		return true
	}
	i := 0
	for i < len(src) {
		start := strings.Index(src[i:], "{{")
		if start < 0 {
			if emitting() {
				b.WriteString(src[i:])
			}
			break
		}
		start += i
		if emitting() {
			b.WriteString(src[i:start])
		}
		closing, skip := "}}", 2
		if strings.HasPrefix(src[start:], "{{{") {
			closing, skip = "}}}", 3
		}
		end := strings.Index(src[start+skip:], closing)
		if end < 0 {
			return "", &TemplateError{Pos: posAt(name, src, start), Msg: "unterminated {{ tag"}
		}
		tag := strings.TrimSpace(src[start+skip : start+skip+end])
		next := start + skip + end + len(closing)
		sigil := byte(0)
		if skip == 2 && tag != "" && strings.IndexByte("#^/!&", tag[0]) >= 0 {
			sigil = tag[0]
			tag = strings.TrimSpace(tag[1:])
		}
		lookup := func() (string, error) {
			v, err := r.Lookup(tag)
			if err != nil {
				return "", &TemplateError{Pos: posAt(name, src, start), Msg: err.Error()}
			}
			return params.Trimmed(v), nil
		}
		switch sigil {
		case '!':
		case '#', '^':
			v, err := lookup()
			if err != nil && emitting() {
				return "", err
			}
			truthy := v != "" && v != "false" && v != "0"
			stack = append(stack, section{name: tag, offset: start, emitting: truthy == (sigil == '#')})
		case '/':
			if len(stack) == 0 || stack[len(stack)-1].name != tag {
				msg := fmt.Sprintf("{{/%s}} closes no open section", tag)
				if len(stack) > 0 {
					msg = fmt.Sprintf("{{/%s}} closes section %q", tag, stack[len(stack)-1].name)
				}
				return "", &TemplateError{Pos: posAt(name, src, start), Msg: msg}
			}
			stack = stack[:len(stack)-1]
		default:
			if tag == "" {
				return "", &TemplateError{Pos: posAt(name, src, start), Msg: "empty {{}} tag"}
			}
			if emitting() {
				v, err := lookup()
				if err != nil {
					return "", err
				}
				b.WriteString(v)
			}
		}
		i = next
	}
	if len(stack) > 0 {
		s := stack[len(stack)-1]
		return "", &TemplateError{Pos: posAt(name, src, s.offset), Msg: fmt.Sprintf("section %q is not closed", s.name)}
	}
	return b.String(), nil
}
