package state

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	yamlv3 "go.yaml.in/yaml/v3"
)

// maxGoccy bounds the hand-edited states goccy decodes: its time grows with
// the square of a mapping's flow-style or valueless entries (a state of
// 100,000 components written `c0: {status: deployed, order: 0}` took 28 s
// and 2.7 GB), and it holds ≈ 200 bytes per byte of a large one. A larger
// state is parsed by yaml/v3, which is linear, and read into State here:
// yaml/v3's own decoding compares every key of a mapping with every other
// one, which is as slow.
const maxGoccy = 64 << 10

// largeStateError is what was wrong with a large state, place by place.
type largeStateError struct{ probs []shapeProblem }

func (e *largeStateError) Error() string {
	return shapeError("", e.probs).Error()
}

// decodeLarge reads a hand-edited state past maxGoccy: every field it does
// not know and every value of the wrong kind is a problem, as with goccy,
// told with its line and column and never its value.
func decodeLarge(data []byte) (*State, error) {
	dec := yamlv3.NewDecoder(bytes.NewReader(data))
	var doc yamlv3.Node
	if err := dec.Decode(&doc); err != nil {
		return nil, &largeStateError{[]shapeProblem{v3Problem(err)}}
	}
	var more yamlv3.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return nil, &largeStateError{[]shapeProblem{{line: more.Line, col: more.Column, msg: "a state is one document"}}}
	}
	s := &State{}
	r := &largeReader{}
	if len(doc.Content) == 1 {
		r.read(doc.Content[0], reflect.ValueOf(s).Elem(), "", 0)
	}
	if len(r.probs) > 0 {
		return nil, &largeStateError{r.probs}
	}
	return s, nil
}

// largeReader reads yaml/v3 nodes into State's fields by their YAML tags.
type largeReader struct {
	probs []shapeProblem
}

func (r *largeReader) problem(n *yamlv3.Node, field, msg string) {
	if len(r.probs) <= maxShapeProblems {
		r.probs = append(r.probs, shapeProblem{line: n.Line, col: n.Column, field: field, msg: msg})
	}
}

// read reads n into v; path names n.
func (r *largeReader) read(n *yamlv3.Node, v reflect.Value, path string, depth int) {
	for n.Kind == yamlv3.AliasNode && n.Alias != nil && depth < 64 {
		n, depth = n.Alias, depth+1
	}
	if depth > 64 {
		r.problem(n, path, "nested too deep")
		return
	}
	if n.Kind == yamlv3.ScalarNode && n.ShortTag() == "!!null" {
		return
	}
	t := v.Type()
	switch {
	case t.Kind() == reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		r.read(n, v.Elem(), path, depth+1)
	case t.Kind() == reflect.Interface:
		// A plugin's config: small, and read as goccy reads it (uint64 for
		// 7, the text of 1e+21), as every other state is.
		if x, ok := goccyValue(n); ok {
			if x != nil {
				v.Set(reflect.ValueOf(x))
			}
			return
		}
		if err := n.Decode(v.Addr().Interface()); err != nil {
			r.problem(n, path, "a value YAML cannot read")
		}
	case t == timeType || t.Kind() == reflect.String ||
		t.Kind() == reflect.Bool || t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		// A single value, which yaml/v3 converts as everywhere else.
		if n.Kind != yamlv3.ScalarNode {
			r.problem(n, path, "expected "+goTypeWords(t.String())+", got "+v3Shape(n))
			return
		}
		if err := n.Decode(v.Addr().Interface()); err != nil {
			r.problem(n, path, "expected "+goTypeWords(t.String())+", got "+v3Shape(n))
		}
	case t.Kind() == reflect.Slice:
		if n.Kind != yamlv3.SequenceNode {
			r.problem(n, path, "expected a list, got "+v3Shape(n))
			return
		}
		list := reflect.MakeSlice(t, len(n.Content), len(n.Content))
		for i, item := range n.Content {
			r.read(item, list.Index(i), fmt.Sprintf("%s[%d]", path, i), depth+1)
		}
		v.Set(list)
	case t.Kind() == reflect.Map || t.Kind() == reflect.Struct:
		if n.Kind != yamlv3.MappingNode {
			r.problem(n, path, "expected a mapping, got "+v3Shape(n))
			return
		}
		if t.Kind() == reflect.Map && v.IsNil() {
			v.Set(reflect.MakeMapWithSize(t, len(n.Content)/2))
		}
		seen := make(map[string]int, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			sub := k.Value
			if path != "" {
				sub = path + "." + k.Value
			}
			if first, dup := seen[k.Value]; dup {
				r.problem(k, path, fmt.Sprintf("key %q is given twice (first at line %d)", k.Value, first))
				continue
			}
			seen[k.Value] = k.Line
			if t.Kind() == reflect.Map {
				elem := reflect.New(t.Elem()).Elem()
				r.read(val, elem, sub, depth+1)
				v.SetMapIndex(reflect.ValueOf(k.Value).Convert(t.Key()), elem)
				continue
			}
			f, ok := fieldIndexByTag(t, k.Value)
			if !ok {
				r.problem(k, path, fmt.Sprintf("unknown field %q", k.Value))
				continue
			}
			r.read(val, v.Field(f), sub, depth+1)
		}
	}
}

// goccyValue reads a node as goccy reads it into an any: written out by
// yaml/v3 and parsed again. It reports false when that fails (an alias to
// an anchor outside the node).
func goccyValue(n *yamlv3.Node) (x any, ok bool) {
	defer func() {
		if recover() != nil {
			x, ok = nil, false
		}
	}()
	text, err := yamlv3.Marshal(n)
	if err != nil {
		return nil, false
	}
	if err := yaml.Unmarshal(text, &x); err != nil {
		return nil, false
	}
	return x, true
}

// fieldIndexByTag finds the field of struct t its YAML tag names key.
func fieldIndexByTag(t reflect.Type, key string) (int, bool) {
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name == key && name != "-" {
			return i, true
		}
	}
	return 0, false
}

// v3Shape names what a node is, never what it holds.
func v3Shape(n *yamlv3.Node) string {
	switch n.Kind {
	case yamlv3.MappingNode:
		return "a mapping"
	case yamlv3.SequenceNode:
		return "a list"
	}
	switch n.ShortTag() {
	case "!!int":
		return "an integer"
	case "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	}
	return "a string"
}

// v3Line is where yaml/v3's syntax errors say they are.
var v3Line = regexp.MustCompile(`^yaml: line (\d+): `)

// v3Problem is a syntax error of yaml/v3, with its line; its messages
// quote no values.
func v3Problem(err error) shapeProblem {
	msg := err.Error()
	var p shapeProblem
	if m := v3Line.FindStringSubmatch(msg); m != nil {
		p.line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	p.msg = "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")
	return p
}
