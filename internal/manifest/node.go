package manifest

import (
	"fmt"
	"strconv"
	"strings"
)

// Pos is a position in a manifest file, 1-based.
type Pos struct {
	File string
	Line int
	Col  int
}

// String formats the position as file:line:col, the form editors jump to.
func (p Pos) String() string {
	switch {
	case p.File == "":
		return ""
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// FileLine formats the position as file:line. Every expanded parameter's
// source is one: without fmt, which took a tenth of a stack's expansion.
func (p Pos) FileLine() string {
	if p.Line == 0 {
		return p.File
	}
	return p.File + ":" + strconv.Itoa(p.Line)
}

// NodeKind says what shape a YAML node has.
type NodeKind uint8

// The shapes a YAML node can have.
const (
	NullNode NodeKind = iota
	ScalarNode
	MapNode
	SeqNode
)

// ScalarType is the YAML core type of a scalar.
type ScalarType uint8

// The scalar types of the YAML core schema.
const (
	StringScalar ScalarType = iota
	IntScalar
	FloatScalar
	BoolScalar
)

// Node is a YAML value with positions, independent of the parser's AST: anchors
// and aliases are resolved, merge keys are applied.
type Node struct {
	Kind    NodeKind
	Type    ScalarType // for scalars
	Value   string     // scalar text: the string itself, or the source text of numbers and booleans
	Pos     Pos
	Entries []Entry // for mappings, in source order
	Items   []*Node // for sequences
}

// Entry is one key of a mapping.
type Entry struct {
	Key    string
	KeyPos Pos
	Value  *Node
}

// Get returns the value of key in a mapping, or nil.
func (n *Node) Get(key string) *Node {
	if e := n.entry(key); e != nil {
		return e.Value
	}
	return nil
}

// entry returns the entry of key in a mapping, or nil.
func (n *Node) entry(key string) *Entry {
	if n == nil || n.Kind != MapNode {
		return nil
	}
	for i := range n.Entries {
		if n.Entries[i].Key == key {
			return &n.Entries[i]
		}
	}
	return nil
}

// Describe names the shape of the node for messages ("a mapping", "the string \"x\"").
func (n *Node) Describe() string {
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case NullNode:
		return "null"
	case MapNode:
		return "a mapping"
	case SeqNode:
		return "a list"
	}
	switch n.Type {
	case IntScalar:
		return "the integer " + n.Value
	case FloatScalar:
		return "the number " + n.Value
	case BoolScalar:
		return "the boolean " + n.Value
	}
	v := n.Value
	if len(v) > 40 {
		v = v[:37] + "..."
	}
	return strconv.Quote(v)
}

// Interface converts the node to plain Go values: map[string]any, []any, string,
// int64, float64, bool or nil.
func (n *Node) Interface() any {
	if n == nil {
		return nil
	}
	switch n.Kind {
	case NullNode:
		return nil
	case MapNode:
		m := make(map[string]any, len(n.Entries))
		for _, e := range n.Entries {
			m[e.Key] = e.Value.Interface()
		}
		return m
	case SeqNode:
		l := make([]any, len(n.Items))
		for i, it := range n.Items {
			l[i] = it.Interface()
		}
		return l
	}
	switch n.Type {
	case IntScalar:
		if i, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
			return i
		}
	case FloatScalar:
		if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
			return f
		}
	case BoolScalar:
		return n.Value == "true"
	}
	return n.Value
}

// quoteList formats names as "a", "b" or "c" for messages.
func quoteList(names []string) string { return joinQuoted(names, " or ") }

// quoteAll formats names as "a", "b" and "c" for messages.
func quoteAll(names []string) string { return joinQuoted(names, " and ") }

func joinQuoted(names []string, last string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	switch len(q) {
	case 0:
		return ""
	case 1:
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + last + q[len(q)-1]
}

// Text returns the scalar text of the node, or "" for anything else (nil too).
func (n *Node) Text() string {
	if n == nil || n.Kind != ScalarNode {
		return ""
	}
	return n.Value
}
