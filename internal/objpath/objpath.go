// Package objpath reads one value out of a decoded JSON object (a
// Kubernetes object) by a path written the way kubectl's JSONPath writes
// simple paths: {.spec.clusterIP}, .data.tls\.crt,
// .status.loadBalancer.ingress[0].hostname, .metadata.labels['app.kubernetes.io/name'].
// Only fields and list indexes: a component output names one value, and a
// path without filters or wildcards cannot match several or run long.
package objpath

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxLen bounds a path's length: paths come from manifests.
const MaxLen = 1024

// Path is a parsed path: fields of maps and indexes of lists, in order.
type Path struct {
	text  string
	steps []step
}

// step is one field (name) or list index (index >= 0).
type step struct {
	name  string
	index int
}

// Root is the field the path starts with, "" when it starts with an index.
func (p Path) Root() string {
	if len(p.steps) == 0 || p.steps[0].index >= 0 {
		return ""
	}
	return p.steps[0].name
}

// String is the path as written.
func (p Path) String() string { return p.text }

// Parse reads a path: optionally inside braces, each step a .field (a dot
// in a field's name escaped as \.), a ['field'] or ["field"], or an [index].
func Parse(s string) (Path, error) {
	p := Path{text: s}
	if len(s) > MaxLen {
		return p, fmt.Errorf("path is %d characters long: at most %d", len(s), MaxLen)
	}
	in := strings.TrimSpace(s)
	if strings.HasPrefix(in, "{") {
		if !strings.HasSuffix(in, "}") {
			return p, fmt.Errorf("path %q: a { without its }", s)
		}
		in = strings.TrimSpace(in[1 : len(in)-1])
	}
	in = strings.TrimPrefix(in, "$")
	if in == "" || in == "." {
		return p, fmt.Errorf("path %q names no field: expected a path such as .spec.clusterIP", s)
	}
	// Characters are counted in the path as written.
	off := strings.Index(s, in)
	for i := 0; i < len(in); {
		switch in[i] {
		case '.':
			i++
			var name strings.Builder
			for i < len(in) && in[i] != '.' && in[i] != '[' {
				c := in[i]
				if c == '\\' && i+1 < len(in) {
					i++
					c = in[i]
				} else if strings.IndexByte(reserved, c) >= 0 {
					return p, fmt.Errorf("path %q: %q at character %d: quote a field name that holds it (['name']); an output is one value, not a template of several", s, c, off+i+1)
				}
				name.WriteByte(c)
				i++
			}
			if name.Len() == 0 {
				return p, fmt.Errorf("path %q: an empty field name at character %d", s, off+i+1)
			}
			p.steps = append(p.steps, step{name: name.String(), index: -1})
		case '[':
			i++
			if i < len(in) && (in[i] == '\'' || in[i] == '"') {
				q := in[i]
				end := strings.IndexByte(in[i+1:], q)
				if end < 0 || i+1+end+1 >= len(in) || in[i+1+end+1] != ']' {
					return p, fmt.Errorf("path %q: a quoted field name at character %d without its closing %c]", s, off+i+1, q)
				}
				p.steps = append(p.steps, step{name: in[i+1 : i+1+end], index: -1})
				i += end + 3
				continue
			}
			end := strings.IndexByte(in[i:], ']')
			if end < 0 {
				return p, fmt.Errorf("path %q: a [ without its ]", s)
			}
			inner := in[i : i+end]
			i += end + 1
			n, err := strconv.Atoi(inner)
			if err != nil || n < 0 || strings.TrimSpace(inner) != inner || strings.HasPrefix(inner, "+") {
				return p, fmt.Errorf("path %q: [%s] is not a list index (0, 1, ...) or a quoted field name; filters, wildcards and unions select several values, an output is one", s, inner)
			}
			p.steps = append(p.steps, step{index: n})
		default:
			return p, fmt.Errorf("path %q: expected . or [ at character %d, found %q", s, off+i+1, in[i])
		}
	}
	return p, nil
}

// reserved are the characters an unquoted field name cannot hold: JSONPath
// gives them meanings (filters, wildcards, unions, templates) that select
// several values or none, and a name holding them would never match.
const reserved = "{}[]'\",$*?@() \t\n\r"

// Get follows the path in a value decoded from JSON (maps of string to
// any, lists of any). It says which step found nothing.
func (p Path) Get(v any) (any, error) {
	walked := ""
	for _, st := range p.steps {
		if st.index >= 0 {
			l, ok := v.([]any)
			if !ok {
				return nil, fmt.Errorf("%s is %s, not a list", orRoot(walked), kindOf(v))
			}
			if st.index >= len(l) {
				return nil, fmt.Errorf("%s has %d items: no [%d]", orRoot(walked), len(l), st.index)
			}
			v = l[st.index]
			walked += "[" + strconv.Itoa(st.index) + "]"
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s is %s, not an object", orRoot(walked), kindOf(v))
		}
		next, ok := m[st.name]
		if !ok {
			return nil, fmt.Errorf("%s has no field %q", orRoot(walked), st.name)
		}
		v = next
		walked += "." + st.name
	}
	return v, nil
}

func orRoot(walked string) string {
	if walked == "" {
		return "the object"
	}
	return walked
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}
