package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	goccyyaml "github.com/goccy/go-yaml"
	goccyparser "github.com/goccy/go-yaml/parser"
	"go.yaml.in/yaml/v3"

	"github.com/gantry-dev/gantry/internal/inputfile"
)

// ParseFile reads and parses every YAML document of a file. Only a regular
// file of at most inputfile.MaxManifest bytes is read.
func ParseFile(path string) ([]*Node, Diagnostics) {
	data, err := inputfile.Read(path, inputfile.MaxManifest)
	if err != nil {
		return nil, Diagnostics{{Pos: Pos{File: path}, Msg: readError(err)}}
	}
	return parseCached(path, data)
}

// readError says why a file could not be read, for a message that names it.
func readError(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "file not found"
	}
	return inputfile.Problem(err)
}

// ParseBytes parses every YAML document in data; file names the source in
// positions. Empty documents are dropped. A leading UTF-8 byte order mark is
// skipped; text that is not UTF-8, and values holding NUL bytes, are errors.
//
// The parser is go.yaml.in/yaml/v3: it builds a document's tree in linear
// time and a fraction of the memory of goccy/go-yaml's, which took minutes
// and gigabytes over a params file of 700,000 parameters.
func ParseBytes(file string, data []byte) ([]*Node, Diagnostics) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	if d, bad := checkUTF8(file, data); bad {
		return nil, Diagnostics{d}
	}
	if d, bad := checkFlowDepth(file, data); bad {
		return nil, Diagnostics{d}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	c := converter{file: file, anchors: map[*yaml.Node]*Node{}}
	var docs []*Node
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, Diagnostics{syntaxDiagnostic(file, data, err)}
		}
		if len(doc.Content) == 0 {
			continue
		}
		n := c.convert(doc.Content[0], 0)
		if n != nil && n.Kind != NullNode {
			docs = append(docs, n)
		}
	}
	return docs, c.diags
}

// checkUTF8 reports the first byte of data that is not UTF-8, where it is.
// A gzip-compressed file — the Hub CLI's elaborated file by default — is
// said to be one: its second byte would be reported as invalid UTF-8.
func checkUTF8(file string, data []byte) (Diagnostic, bool) {
	if utf8.Valid(data) {
		return Diagnostic{}, false
	}
	if inputfile.IsGzip(data) {
		return Diagnostic{Pos: Pos{File: file, Line: 1, Col: 1}, Msg: "a gzip-compressed file, as the Hub CLI writes its elaborated files and states: gantry reads plain YAML. " +
			"Give gantry the stack's hub.yaml and params files (it elaborates them itself), or decompress the file (gunzip -c FILE > FILE.yaml; hub writes it plain with --compressed=false)"}, true
	}
	return firstRune(file, data, func(r rune, size int, at int) string {
		if r == utf8.RuneError && size <= 1 {
			return fmt.Sprintf("invalid UTF-8 (byte 0x%02x): manifests are UTF-8 text", data[at])
		}
		return ""
	})
}

// controlCharacter reports the first character of data that YAML does not
// allow in a file (C0 controls other than tab, line feed and carriage
// return, DEL, C1 controls other than NEL, U+FFFE and U+FFFF), where it is:
// the parser says only that there is one.
func controlCharacter(file string, data []byte) (Diagnostic, bool) {
	return firstRune(file, data, func(r rune, _ int, _ int) string {
		allowed := r == '\t' || r == '\n' || r == '\r' || r >= 0x20 && r <= 0x7e || r == 0x85 ||
			r >= 0xa0 && r != 0xfffe && r != 0xffff
		if allowed {
			return ""
		}
		return fmt.Sprintf("invalid YAML: control character U+%04X is not allowed (write it as an escape in a double-quoted string: \"\\u%04X\")", r, r)
	})
}

// firstRune walks data rune by rune, counting lines and columns, and
// reports the first rune bad calls wrong (a message), where it is.
func firstRune(file string, data []byte, bad func(r rune, size int, at int) string) (Diagnostic, bool) {
	line, col := 1, 1
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if msg := bad(r, size, i); msg != "" {
			return Diagnostic{Pos: Pos{File: file, Line: line, Col: col}, Msg: msg}, true
		}
		// A line ends at a line feed, or at a carriage return alone (a
		// file of old Mac line ends), as the parser counts them.
		if r == '\n' || r == '\r' && (i+1 == len(data) || data[i+1] != '\n') {
			line, col = line+1, 1
		} else {
			col++
		}
		i += size
	}
	return Diagnostic{}, false
}

// syntaxLine finds the line in the parser's messages ("yaml: line 6: did not
// find expected key").
var syntaxLine = regexp.MustCompile(`^yaml: line (\d+): `)

// maxPrecise bounds the files whose syntax errors are located by a second,
// slower parser (goccy/go-yaml): go.yaml.in/yaml/v3 names only a line, and
// for an unclosed bracket the line where it opened. goccy's time grows with
// the square of a mapping's keys that have no value: a 1 MiB file of them
// took 41 s and 1.2 GB; at 64 KiB, a fraction of a second.
const maxPrecise = 64 << 10

// syntaxDiagnostic locates a syntax error. For a file of up to maxPrecise
// bytes, goccy's parser gives line and column and its own wording; for a
// larger one, or one goccy accepts, the line of yaml/v3's message is used.
func syntaxDiagnostic(file string, data []byte, err error) Diagnostic {
	if strings.Contains(err.Error(), "control characters are not allowed") {
		if d, ok := controlCharacter(file, data); ok {
			return d
		}
	}
	if m := unknownAnchor.FindStringSubmatch(err.Error()); m != nil {
		if d, ok := aliasPlace(file, data, m[1]); ok {
			return d
		}
	}
	if len(data) <= maxPrecise {
		if gerr := goccyParse(data); gerr != nil {
			var ye goccyyaml.Error
			if errors.As(gerr, &ye) && ye.GetToken() != nil && ye.GetToken().Position != nil {
				p := ye.GetToken().Position
				return Diagnostic{Pos: Pos{File: file, Line: p.Line, Col: p.Column}, Msg: "invalid YAML: " + ye.GetMessage()}
			}
		}
	}
	msg := err.Error()
	pos := Pos{File: file}
	if m := syntaxLine.FindStringSubmatch(msg); m != nil {
		pos.Line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
		if openedOneLineEarly(msg) {
			pos.Line++
		}
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	return Diagnostic{Pos: pos, Msg: "invalid YAML: " + msg}
}

// openedOneLineEarly reports a yaml/v3 message whose line is that of the
// collection the error is in, counted from 0 (its parser errors give the
// collection's mark as it holds it; its scanner errors add the 1): an
// unclosed {…} or […], or a block sequence item that is not one.
func openedOneLineEarly(msg string) bool {
	switch msg {
	case "did not find expected ',' or '}'", "did not find expected ',' or ']'", "did not find expected '-' indicator":
		return true
	}
	return false
}

// unknownAnchor is the parser's message for an alias of no anchor, which
// names no line (and goccy's parser lets it pass).
var unknownAnchor = regexp.MustCompile(`unknown anchor '([^']*)' referenced`)

// aliasPlace reports the first alias *name in data, where it is.
func aliasPlace(file string, data []byte, name string) (Diagnostic, bool) {
	alias := []byte("*" + name)
	for from := 0; ; {
		i := bytes.Index(data[from:], alias)
		if i < 0 {
			return Diagnostic{}, false
		}
		at, end := from+i, from+i+len(alias)
		// The whole name: an alias ends at a space, a line's end or a
		// flow indicator.
		if end == len(data) || bytes.IndexByte([]byte(" \t\r\n,]}"), data[end]) >= 0 {
			return firstRune(file, data, func(_ rune, _ int, i int) string {
				if i == at {
					return fmt.Sprintf("invalid YAML: the alias *%s names no anchor (&%s) written before it", name, name)
				}
				return ""
			})
		}
		from = end
	}
}

// goccyParse is goccy's parser's verdict on data, none when it fails in a
// panic of its own (the caller then keeps yaml/v3's line).
func goccyParse(data []byte) (err error) {
	defer func() {
		if recover() != nil {
			err = nil
		}
	}()
	_, err = goccyparser.ParseBytes(data, 0)
	return err
}

// maxDepth bounds nesting so that hostile input (deeply nested flow
// collections, aliases of aliases) cannot exhaust the stack.
const maxDepth = 200

// maxAliasNodes bounds the values that aliases expand to ("billion laughs").
// What a file writes out is bounded by its size; what its aliases repeat is
// bounded here, so a document of millions of values written out in full
// loads, and one of a few lines that would expand to millions does not.
const maxAliasNodes = 1_000_000

// maxAliasBytes bounds the text aliases repeat: a few values of a long
// string each, repeated in lists of lists, stay under maxAliasNodes and
// would still write out gigabytes (the elaborated file, a plugin's input).
// A file may hold as much text as a manifest may be large.
const maxAliasBytes = 64 << 20

type converter struct {
	file string
	// anchors are the converted anchored nodes, by the parser's node.
	anchors map[*yaml.Node]*Node
	diags   Diagnostics
	// copies counts the values aliases expanded to, copiedBytes their text.
	copies      int
	copiedBytes int
}

func (c *converter) pos(n *yaml.Node) Pos {
	return Pos{File: c.file, Line: n.Line, Col: n.Column}
}

func (c *converter) errorf(pos Pos, format string, args ...any) {
	c.diags = append(c.diags, Diagnostic{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

func (c *converter) convert(n *yaml.Node, depth int) *Node {
	if n == nil {
		return &Node{Kind: NullNode}
	}
	if depth > maxDepth {
		c.errorf(c.pos(n), "nesting deeper than %d levels", maxDepth)
		return &Node{Kind: NullNode, Pos: c.pos(n)}
	}
	var out *Node
	switch n.Kind {
	case yaml.ScalarNode:
		out = c.scalar(n)
	case yaml.MappingNode:
		out = c.mapping(n, depth)
	case yaml.SequenceNode:
		out = &Node{Kind: SeqNode, Pos: c.pos(n), Items: make([]*Node, 0, len(n.Content))}
		for _, it := range n.Content {
			out.Items = append(out.Items, c.convert(it, depth+1))
		}
	case yaml.AliasNode:
		target, ok := c.anchors[n.Alias]
		if !ok {
			// An alias inside its own anchor: the parser refuses those,
			// so this is only a guard.
			c.errorf(c.pos(n), "alias *%s refers to a value that contains it", n.Value)
			return &Node{Kind: NullNode, Pos: c.pos(n)}
		}
		return c.copyNode(target, depth)
	case yaml.DocumentNode:
		c.errorf(c.pos(n), "a YAML document inside a value")
		return &Node{Kind: NullNode, Pos: c.pos(n)}
	default:
		c.errorf(c.pos(n), "unsupported YAML construct")
		return &Node{Kind: NullNode, Pos: c.pos(n)}
	}
	if n.Anchor != "" {
		c.anchors[n] = out
	}
	return out
}

// knownTags are the tags of the YAML core schema; others are refused.
var knownTags = map[string]bool{
	"!!str": true, "!!int": true, "!!float": true, "!!bool": true, "!!null": true,
	"!!map": true, "!!seq": true, "!!binary": true, "!!timestamp": true,
}

func (c *converter) scalar(n *yaml.Node) *Node {
	pos := c.pos(n)
	if strings.IndexByte(n.Value, 0) >= 0 {
		c.errorf(pos, "the value holds a NUL byte (\\0), which no file, argument or variable can carry")
	}
	tag := n.ShortTag()
	if n.Style&yaml.TaggedStyle != 0 {
		if !knownTags[tag] {
			c.errorf(pos, "unsupported YAML tag %s", n.Tag)
		}
		if tag != "!!str" {
			// An explicit tag other than !!str keeps the type the text has.
			tag = (&yaml.Node{Kind: yaml.ScalarNode, Value: n.Value}).ShortTag()
		}
	}
	switch tag {
	case "!!null":
		return &Node{Kind: NullNode, Pos: pos}
	case "!!bool":
		return &Node{Kind: ScalarNode, Type: BoolScalar, Value: strings.ToLower(n.Value), Pos: pos}
	case "!!int":
		return &Node{Kind: ScalarNode, Type: IntScalar, Value: n.Value, Pos: pos}
	case "!!float":
		return &Node{Kind: ScalarNode, Type: FloatScalar, Value: n.Value, Pos: pos}
	}
	return &Node{Kind: ScalarNode, Type: StringScalar, Value: n.Value, Pos: pos}
}

func (c *converter) mapping(n *yaml.Node, depth int) *Node {
	out := &Node{Kind: MapNode, Pos: c.pos(n), Entries: make([]Entry, 0, len(n.Content)/2)}
	index := make(map[string]int, len(n.Content)/2)
	var merges []*Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if kn.Kind == yaml.ScalarNode && kn.ShortTag() == "!!merge" {
			merges = append(merges, c.convert(vn, depth+1))
			continue
		}
		key := c.convert(kn, depth+1)
		if key.Kind == NullNode && kn.Kind == yaml.ScalarNode {
			// "~:" or an empty key: the text is the key.
			key = &Node{Kind: ScalarNode, Value: kn.Value, Pos: key.Pos}
		}
		if key.Kind != ScalarNode {
			c.errorf(key.Pos, "mapping keys must be scalars, got %s", key.Describe())
			continue
		}
		if first, dup := index[key.Value]; dup {
			c.errorf(key.Pos, "key %q is given twice in this mapping (first at line %d)", key.Value, out.Entries[first].KeyPos.Line)
			continue
		}
		index[key.Value] = len(out.Entries)
		out.Entries = append(out.Entries, Entry{Key: key.Value, KeyPos: key.Pos, Value: c.convert(vn, depth+1)})
	}
	// A mapping is where its first key is, not where its brace is.
	if len(out.Entries) > 0 {
		out.Pos = out.Entries[0].KeyPos
	}
	// Merge keys (<<) never override keys given explicitly in the mapping,
	// and an earlier merged mapping wins over a later one.
	for _, m := range merges {
		var srcs []*Node
		switch m.Kind {
		case MapNode:
			srcs = []*Node{m}
		case SeqNode:
			srcs = m.Items
		default:
			c.errorf(m.Pos, "merge key << expects a mapping or a list of mappings, got %s", m.Describe())
		}
		for _, s := range srcs {
			if s.Kind != MapNode {
				c.errorf(s.Pos, "merge key << expects a mapping or a list of mappings, got %s", s.Describe())
				continue
			}
			for _, e := range s.Entries {
				if _, ok := index[e.Key]; !ok {
					index[e.Key] = len(out.Entries)
					out.Entries = append(out.Entries, e)
				}
			}
		}
	}
	return out
}

// copyNode expands an alias: a copy of what its anchor holds, counted, so
// that alias bombs stop at maxAliasNodes.
func (c *converter) copyNode(n *Node, depth int) *Node {
	if depth > maxDepth {
		c.errorf(n.Pos, "nesting deeper than %d levels", maxDepth)
		return &Node{Kind: NullNode, Pos: n.Pos}
	}
	c.copies++
	if c.copies > maxAliasNodes {
		if c.copies == maxAliasNodes+1 {
			c.errorf(n.Pos, "aliases expand to more than %d values (an alias bomb?)", maxAliasNodes)
		}
		return &Node{Kind: NullNode, Pos: n.Pos}
	}
	c.copiedBytes += len(n.Value)
	for _, e := range n.Entries {
		c.copiedBytes += len(e.Key)
	}
	if c.copiedBytes > maxAliasBytes {
		c.errorf(n.Pos, "aliases expand to more than %d MiB of text (an alias bomb?)", maxAliasBytes>>20)
		c.copies = maxAliasNodes + 1 // no more copies, and nothing more said
		return &Node{Kind: NullNode, Pos: n.Pos}
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

// tooManyValues says where a file passed maxValues.
func tooManyValues(file string, line int) Diagnostic {
	return Diagnostic{Pos: Pos{File: file, Line: line, Col: 1}, Msg: fmt.Sprintf("more than %d lines and list items in one file: gantry reads no larger manifest (it would take gigabytes)", maxValues)}
}

// maxFlowDepth bounds the nesting of flow collections ([ and {): the parser
// spent gigabytes on 100,000 levels; manifests nest a handful.
const maxFlowDepth = 256

// maxValues bounds the lines and flow items of one file: each value costs
// the parser and gantry's tree some hundred bytes, so that a 40 MB list of
// 20 million items took 6 GB. A params file of 700,000 parameters (some 1.4
// million lines) stays within it.
const maxValues = 4_000_000

// checkFlowDepth finds the first place where flow collections nest deeper
// than maxFlowDepth, skipping quoted text and comments, and the line where
// the file's lines and flow items (its newlines and commas) pass
// maxValues. It over-counts at worst (brackets inside a plain scalar, the
// lines of a block scalar), and only past the bound.
func checkFlowDepth(file string, data []byte) (Diagnostic, bool) {
	depth, line, col := 0, 1, 0
	values := 0
	var quote byte
	comment := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		col++
		switch {
		case c == '\n':
			line, col, comment = line+1, 0, false
			if values++; values > maxValues {
				return tooManyValues(file, line), true
			}
			continue
		case comment:
			continue
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
				col++
			} else if c == quote {
				quote = 0
			}
			continue
		}
		switch c {
		case '#':
			comment = i == 0 || data[i-1] == ' ' || data[i-1] == '\t' || data[i-1] == '\n'
		case '"', '\'':
			// A quote starts a quoted scalar only where a scalar can start:
			// the one in "don't" is text.
			if i == 0 || bytes.IndexByte([]byte(" \t\n[{,:"), data[i-1]) >= 0 {
				quote = c
			}
		case '[', '{':
			depth++
			if depth > maxFlowDepth {
				return Diagnostic{Pos: Pos{File: file, Line: line, Col: col}, Msg: fmt.Sprintf("flow collections ([ and {) nested more than %d deep", maxFlowDepth)}, true
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		case ',':
			if values++; values > maxValues {
				return tooManyValues(file, line), true
			}
		}
	}
	return Diagnostic{}, false
}
