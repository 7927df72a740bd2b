package component

import (
	"fmt"
	"strings"

	"github.com/gantry-dev/gantry/internal/params"
)

// checkMustache renders a mustache template with every name empty, as a
// check of its text before anything runs (an unclosed tag or section): the
// values are the run's. A file that cannot be read is the render's to
// report.
func checkMustache(path string) []error {
	data, err := readTemplate(path)
	if err != nil {
		return nil
	}
	if _, err := renderMustache(path, string(data), emptyResolver{}); err != nil {
		return []error{err}
	}
	return nil
}

// emptyResolver resolves every name to nothing.
type emptyResolver struct{}

func (emptyResolver) Lookup(string) (string, error)         { return "", nil }
func (emptyResolver) Output(string, string) (string, error) { return "", nil }

// renderMustache renders the mustache subset that fits parameter values:
// {{name}} and {{{name}}} / {{&name}} substitute (without HTML escaping: these
// are configuration files, not web pages), {{#name}}…{{/name}} keeps its body
// when the value is true-ish (not "", "false" or "0"), {{^name}}…{{/name}}
// when it is not, and {{! comments }} vanish. Dotted names are parameter
// names, so {{db.host}} is the parameter db.host. Values are trimmed, and
// {{name/base64}} encodes one (base64, unbase64, json, yaml), as in curly
// templates.
func renderMustache(name, src string, r params.Resolver) (string, error) {
	b := &cappedBuffer{max: renderLimits.rendered}
	type section struct {
		name     string
		offset   int
		emitting bool
	}
	var stack []section
	// muted counts the open sections that do not emit: the text emits when
	// none does (a count, so that deep nesting costs nothing per tag).
	muted := 0
	emitting := func() bool { return muted == 0 }
	write := func(at int, s string) error {
		if _, err := b.WriteString(s); err != nil {
			return &TemplateError{Pos: posAt(name, src, at), Msg: err.Error()}
		}
		return nil
	}
	var start int
	positioned := func(err error) error {
		if err == nil {
			return nil
		}
		return &TemplateError{Pos: posAt(name, src, start), Msg: err.Error()}
	}
	i := 0
	for i < len(src) {
		start = strings.Index(src[i:], "{{")
		if start < 0 {
			if emitting() {
				if err := write(i, src[i:]); err != nil {
					return "", err
				}
			}
			break
		}
		start += i
		if emitting() {
			if err := write(i, src[i:start]); err != nil {
				return "", err
			}
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
		// {{name}} is the value trimmed of leading and trailing white
		// space; {{name/base64}} (or another encoding) encodes the value
		// as it is, as the Hub CLI's mustache kind does.
		lookup := func() (string, error) {
			n, encodings := tag, []string(nil)
			if sigil == 0 || sigil == '&' {
				if i := strings.IndexByte(tag, '/'); i > 0 {
					n, encodings = tag[:i], strings.Split(tag[i+1:], "/")
				}
			}
			v, err := r.Lookup(n)
			if err == nil && len(encodings) > 0 {
				v, err = params.Encode(v, encodings)
				if err != nil {
					err = fmt.Errorf("{{%s}}: %w", tag, err)
				}
				return v, positioned(err)
			}
			if err != nil {
				return "", positioned(err)
			}
			return params.Trimmed(v), nil
		}
		switch sigil {
		case '!':
		case '#', '^':
			if !emitting() {
				// Inside a muted section nothing is read: a name looked
				// up here would count as read (a change of it would
				// redeploy the component for text it never emits).
				muted++
				stack = append(stack, section{name: tag, offset: start})
				break
			}
			v, err := lookup()
			if err != nil {
				return "", err
			}
			truthy := v != "" && v != "false" && v != "0"
			emits := truthy == (sigil == '#')
			if !emits {
				muted++
			}
			stack = append(stack, section{name: tag, offset: start, emitting: emits})
		case '/':
			if len(stack) == 0 || stack[len(stack)-1].name != tag {
				msg := fmt.Sprintf("{{/%s}} closes no open section", tag)
				if len(stack) > 0 {
					msg = fmt.Sprintf("{{/%s}} closes section %q", tag, stack[len(stack)-1].name)
				}
				return "", &TemplateError{Pos: posAt(name, src, start), Msg: msg}
			}
			if !stack[len(stack)-1].emitting {
				muted--
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
				if err := write(start, v); err != nil {
					return "", err
				}
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
