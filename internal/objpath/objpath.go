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
	for i := 0; i < len(in); {
		switch in[i] {
		case '.':
			i++
			var name strings.Builder
			for i < len(in) && in[i] != '.' && in[i] != '[' {
				if in[i] == '\\' && i+1 < len(in) {
					i++
				}
				name.WriteByte(in[i])
				i++
			}
			if name.Len() == 0 {
				return p, fmt.Errorf("path %q: an empty field name at character %d", s, i)
			}
			if err := plainField(name.String()); err != nil {
				return p, fmt.Errorf("path %q: %w", s, err)
			}
			p.steps = append(p.steps, step{name: name.String(), index: -1})
		case '[':
			end := strings.IndexByte(in[i:], ']')
			if end < 0 {
				return p, fmt.Errorf("path %q: a [ without its ]", s)
			}
			inner := strings.TrimSpace(in[i+1 : i+end])
			i += end + 1
			if len(inner) >= 2 && (inner[0] == '\'' || inner[0] == '"') && inner[len(inner)-1] == inner[0] {
				p.steps = append(p.steps, step{name: inner[1 : len(inner)-1], index: -1})
				continue
			}
			n, err := strconv.Atoi(inner)
			if err != nil || n < 0 {
				return p, fmt.Errorf("path %q: [%s] is not a list index (0, 1, ...) or a quoted field name; filters and wildcards select several values, an output is one", s, inner)
			}
			p.steps = append(p.steps, step{index: n})
		default:
			return p, fmt.Errorf("path %q: expected . or [ at character %d, found %q", s, i+1, in[i])
		}
	}
	return p, nil
}

// plainField refuses the JSONPath operators a field name cannot hold
// unquoted: they mean something this package does not do.
func plainField(name string) error {
	if name == "*" || strings.ContainsAny(name, "?@()*") {
		return fmt.Errorf("%q: filters and wildcards select several values, an output is one", name)
	}
	return nil
}

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
