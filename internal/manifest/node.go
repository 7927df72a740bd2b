package manifest

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
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
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// FileLine formats the position as file:line.
func (p Pos) FileLine() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d", p.File, p.Line)
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
	if n == nil || n.Kind != MapNode {
		return nil
	}
	for i := range n.Entries {
		if n.Entries[i].Key == key {
			return n.Entries[i].Value
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

// ParseFile reads and parses every YAML document of a file.
func ParseFile(path string) ([]*Node, Diagnostics) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Diagnostics{{Pos: Pos{File: path}, Msg: readError(err)}}
	}
	return ParseBytes(path, data)
}

func readError(err error) string {
	if os.IsNotExist(err) {
		return "file not found"
	}
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// ParseBytes parses every YAML document in data; file names the source in positions.
// Empty documents are dropped.
func ParseBytes(file string, data []byte) ([]*Node, Diagnostics) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return nil, Diagnostics{syntaxDiagnostic(file, err)}
	}
	c := converter{file: file, anchors: map[string]*Node{}}
	var docs []*Node
	for _, d := range f.Docs {
		if d == nil || d.Body == nil {
			continue
		}
		n := c.convert(d.Body, 0)
		if n != nil && n.Kind != NullNode {
			docs = append(docs, n)
		}
	}
	return docs, c.diags
}

func syntaxDiagnostic(file string, err error) Diagnostic {
	if ye, ok := err.(yaml.Error); ok && ye.GetToken() != nil {
		p := ye.GetToken().Position
		return Diagnostic{Pos: Pos{File: file, Line: p.Line, Col: p.Column}, Msg: "invalid YAML: " + ye.GetMessage()}
	}
	return Diagnostic{Pos: Pos{File: file}, Msg: "invalid YAML: " + err.Error()}
}

// maxDepth bounds nesting so that hostile input (deeply nested flow collections,
// alias bombs) cannot exhaust the stack.
const maxDepth = 200

// maxNodes bounds the nodes produced by alias expansion ("billion laughs").
const maxNodes = 1_000_000

type converter struct {
	file    string
	anchors map[string]*Node
	diags   Diagnostics
	count   int
}

func (c *converter) pos(n ast.Node) Pos {
	tk := n.GetToken()
	if tk == nil || tk.Position == nil {
		return Pos{File: c.file}
	}
	return Pos{File: c.file, Line: tk.Position.Line, Col: tk.Position.Column}
}

func (c *converter) fail(n ast.Node, msg string) *Node {
	c.diags = append(c.diags, Diagnostic{Pos: c.pos(n), Msg: msg})
	return &Node{Kind: NullNode, Pos: c.pos(n)}
}

func (c *converter) convert(n ast.Node, depth int) *Node {
	if depth > maxDepth {
		return c.fail(n, fmt.Sprintf("nesting deeper than %d levels", maxDepth))
	}
	c.count++
	if c.count > maxNodes {
		if c.count == maxNodes+1 {
			return c.fail(n, "document expands to too many values (alias loop or bomb?)")
		}
		return &Node{Kind: NullNode}
	}
	switch v := n.(type) {
	case nil:
		return &Node{Kind: NullNode}
	case *ast.NullNode:
		return &Node{Kind: NullNode, Pos: c.pos(n)}
	case *ast.StringNode:
		return &Node{Kind: ScalarNode, Type: StringScalar, Value: v.Value, Pos: c.pos(n)}
	case *ast.LiteralNode:
		return &Node{Kind: ScalarNode, Type: StringScalar, Value: v.Value.Value, Pos: c.pos(n)}
	case *ast.IntegerNode:
		return &Node{Kind: ScalarNode, Type: IntScalar, Value: v.Token.Value, Pos: c.pos(n)}
	case *ast.FloatNode:
		return &Node{Kind: ScalarNode, Type: FloatScalar, Value: v.Token.Value, Pos: c.pos(n)}
	case *ast.InfinityNode:
		return &Node{Kind: ScalarNode, Type: FloatScalar, Value: v.Token.Value, Pos: c.pos(n)}
	case *ast.NanNode:
		return &Node{Kind: ScalarNode, Type: FloatScalar, Value: v.Token.Value, Pos: c.pos(n)}
	case *ast.BoolNode:
		return &Node{Kind: ScalarNode, Type: BoolScalar, Value: strconv.FormatBool(v.Value), Pos: c.pos(n)}
	case *ast.TagNode:
		return c.tagged(v, depth)
	case *ast.AnchorNode:
		val := c.convert(v.Value, depth+1)
		c.anchors[v.Name.String()] = val
		return val
	case *ast.AliasNode:
		name := v.Value.String()
		target, ok := c.anchors[name]
		if !ok {
			return c.fail(n, fmt.Sprintf("unknown alias *%s", name))
		}
		return c.copyNode(target, depth)
	case *ast.MappingNode:
		return c.mapping(c.pos(n), v.Values, depth)
	case *ast.MappingValueNode:
		return c.mapping(c.pos(n), []*ast.MappingValueNode{v}, depth)
	case *ast.SequenceNode:
		out := &Node{Kind: SeqNode, Pos: c.pos(n), Items: make([]*Node, 0, len(v.Values))}
		for _, it := range v.Values {
			out.Items = append(out.Items, c.convert(it, depth+1))
		}
		return out
	case *ast.CommentGroupNode, *ast.CommentNode:
		return &Node{Kind: NullNode}
	}
	return c.fail(n, fmt.Sprintf("unsupported YAML construct %s", n.Type()))
}

// copyNode counts the nodes an alias expands to, so that alias bombs hit maxNodes.
func (c *converter) copyNode(n *Node, depth int) *Node {
	if depth > maxDepth {
		c.diags = append(c.diags, Diagnostic{Pos: n.Pos, Msg: fmt.Sprintf("nesting deeper than %d levels", maxDepth)})
		return &Node{Kind: NullNode}
	}
	c.count++
	if c.count > maxNodes {
		if c.count == maxNodes+1 {
			c.diags = append(c.diags, Diagnostic{Pos: n.Pos, Msg: "document expands to too many values (alias loop or bomb?)"})
		}
		return &Node{Kind: NullNode}
	}
	out := *n
	if n.Entries != nil {
		out.Entries = make([]Entry, len(n.Entries))
		for i, e := range n.Entries {
			out.Entries[i] = Entry{Key: e.Key, KeyPos: e.KeyPos, Value: c.copyNode(e.Value, depth+1)}
		}
	}
	if n.Items != nil {
		out.Items = make([]*Node, len(n.Items))
		for i, it := range n.Items {
			out.Items[i] = c.copyNode(it, depth+1)
		}
	}
	return &out
}

func (c *converter) tagged(v *ast.TagNode, depth int) *Node {
	val := c.convert(v.Value, depth+1)
	tag := v.Start.Value
	switch tag {
	case "!!str":
		if val.Kind == ScalarNode {
			val.Type = StringScalar
		} else if val.Kind == NullNode {
			return &Node{Kind: ScalarNode, Type: StringScalar, Pos: val.Pos}
		}
	case "!!int", "!!float", "!!bool", "!!null", "!!map", "!!seq", "!!binary", "!!timestamp":
	default:
		c.diags = append(c.diags, Diagnostic{Pos: c.pos(v), Msg: fmt.Sprintf("unsupported YAML tag %s", tag)})
	}
	return val
}

func (c *converter) mapping(pos Pos, values []*ast.MappingValueNode, depth int) *Node {
	out := &Node{Kind: MapNode, Pos: pos, Entries: make([]Entry, 0, len(values))}
	index := map[string]int{}
	set := func(e Entry, fromMerge bool) {
		if i, ok := index[e.Key]; ok {
			if !fromMerge {
				out.Entries[i] = e
			}
			return
		}
		index[e.Key] = len(out.Entries)
		out.Entries = append(out.Entries, e)
	}
	var merges []*Node
	for _, mv := range values {
		if _, ok := mv.Key.(*ast.MergeKeyNode); ok {
			merges = append(merges, c.convert(mv.Value, depth+1))
			continue
		}
		key := c.convert(mv.Key, depth+1)
		if key.Kind != ScalarNode {
			c.diags = append(c.diags, Diagnostic{Pos: key.Pos, Msg: "mapping keys must be scalars"})
			continue
		}
		set(Entry{Key: key.Value, KeyPos: key.Pos, Value: c.convert(mv.Value, depth+1)}, false)
	}
	// A mapping is where its first key is, not where its first colon is.
	if len(out.Entries) > 0 {
		out.Pos = out.Entries[0].KeyPos
	}
	// Merge keys (<<) never override keys given explicitly in the mapping.
	for _, m := range merges {
		var srcs []*Node
		switch m.Kind {
		case MapNode:
			srcs = []*Node{m}
		case SeqNode:
			srcs = m.Items
		}
		for _, s := range srcs {
			if s.Kind != MapNode {
				c.diags = append(c.diags, Diagnostic{Pos: s.Pos, Msg: "merge key << expects a mapping or a list of mappings"})
				continue
			}
			for _, e := range s.Entries {
				set(e, true)
			}
		}
	}
	return out
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
