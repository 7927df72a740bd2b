package state

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/goccy/go-yaml/token"
)

// Reading a large state with goccy costs far more than writing it (about 2 s
// for 10,000 components), and a resumed deploy reads it before doing
// anything. decodeFast reads the document as Encode writes it, and nothing
// else: block style, two-space indents, fields in the encoder's order, no
// duplicate keys, strings plain (as plainSafe allows) or double-quoted with
// the escapes strconv.Quote writes, and blank lines, lines of comment and
// comments after a value anywhere. At the first thing it does not expect — a
// flow collection, an anchor, a field it does not know, a scalar
// the encoder would not write — it gives up, and Decode reads the document
// with goccy, whose errors and positions stay those of every bad file.
//
// Whatever it accepts, it reads as goccy does: where goccy would read a plain
// scalar as something else than its text (a number in a plugin config, say),
// it types it the same way, with goccy's own token classification.

// maxFastDepth bounds the nesting of plugin children and config values
// decodeFast follows; deeper documents are goccy's (which has a limit of its
// own, far above this one).
const maxFastDepth = 100

// componentChunk is the most component records decodeFast allocates at once
// (it allocates as many as it has read, at least 8).
const componentChunk = 256

// decodeFast parses a state document written by Encode. It returns false
// for anything else; it never returns a state goccy would not.
func decodeFast(data []byte) (*State, bool) {
	// One copy of the document: every string without escapes is a slice of
	// it, so the copy lives as long as the state's strings (the document is
	// those strings, indents and keys: a small multiple of them).
	p := fastParser{src: string(data)}
	p.load()
	s, ok := p.state()
	if !ok || p.ind != -1 {
		return nil, false
	}
	return s, true
}

// fastParser walks the document a line at a time.
type fastParser struct {
	src   string
	pos   int    // start of the current line
	eol   int    // index of the current line's '\n'
	ind   int    // the current line's indent: -1 at the end of the input, -2 on a last line without '\n'
	text  string // the current line after its indent
	depth int
	buf   []byte      // scratch for unescaping
	comps []Component // records handed out one by one

	// Lists are gathered here, then copied out at their size: one
	// allocation each. Nested lists of a kind stack above their parent's.
	strs   stack[string]
	params stack[Parameter]
	plugs  stack[PluginInstance]
	res    stack[Resource]
	anys   stack[any]
}

// stack gathers the items of lists being read.
type stack[T any] struct{ items []T }

func (s *stack[T]) push(v T) { s.items = append(s.items, v) }

// pop returns the items from index from on as a list of their own.
func (s *stack[T]) pop(from int) []T {
	l := make([]T, len(s.items)-from)
	copy(l, s.items[from:])
	clear(s.items[from:])
	s.items = s.items[:from]
	return l
}

// load reads the line at pos, passing over blank lines and lines that
// are a comment, and without a comment after its value: the usual hand
// edits of a state ("# restored from the backup of …", "status: failed #
// rerun it") keep it on this path. (The encoder writes no block scalars,
// whose lines these could be.)
func (p *fastParser) load() {
	for {
		if p.pos >= len(p.src) {
			p.ind, p.text = -1, ""
			return
		}
		rest := p.src[p.pos:]
		n := strings.IndexByte(rest, '\n')
		if n < 0 {
			p.ind, p.text = -2, ""
			return
		}
		i := 0
		for i < n && rest[i] == ' ' {
			i++
		}
		if text := rest[i:n]; text == "" || text[0] == '#' {
			p.pos += n + 1
			continue
		}
		p.ind, p.text, p.eol = i, withoutComment(rest[i:n]), p.pos+n
		return
	}
}

// withoutComment is a line without the comment after its value: from a '#'
// after a space, outside quotes, on. A quote it cannot see the end of on the
// line leaves the line as it is (a plain scalar with a quote inside, a quoted
// scalar on several lines): the value is then one the parser refuses, and
// goccy reads the document. Cutting less than YAML would is safe that way;
// cutting more is not, so quotes count from wherever they appear.
func withoutComment(text string) string {
	if strings.IndexByte(text, '#') < 0 {
		return text // most lines: one fast search, not a walk
	}
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '"':
			for i++; i < len(text) && text[i] != '"'; i++ {
				if text[i] == '\\' {
					i++
				}
			}
		case '\'':
			// '' inside is a quote: the next pass opens again.
			for i++; i < len(text) && text[i] != '\''; i++ {
			}
		case '#':
			if i > 0 && text[i-1] == ' ' {
				return strings.TrimRight(text[:i], " ")
			}
		}
		if i >= len(text) {
			return text // a quote left open
		}
	}
	return text
}

// next moves to the next line. Only called on a line that was matched.
func (p *fastParser) next() {
	p.pos = p.eol + 1
	p.load()
}

// open consumes the line of a key whose value is a block on the lines below.
func (p *fastParser) open(rest string) bool {
	if rest != "" {
		return false
	}
	p.next()
	return true
}

// field splits "name:rest" on the first colon.
func field(text string) (name, rest string) {
	i := strings.IndexByte(text, ':')
	if i <= 0 {
		return "", ""
	}
	return text[:i], text[i+1:]
}

// str reads a string scalar that takes the rest of the line.
func (p *fastParser) str(v string) (string, bool) {
	if v == "" {
		return "", false
	}
	if v[0] == '"' {
		s, rest, ok := p.quoted(v)
		return s, ok && rest == ""
	}
	return v, plainSafe(v)
}

// scalar reads the string value of "name: value" (rest is " value") and
// consumes the line.
func (p *fastParser) scalar(rest string) (string, bool) {
	if len(rest) < 2 || rest[0] != ' ' {
		return "", false
	}
	s, ok := p.str(rest[1:])
	p.next()
	return s, ok
}

// flag reads "name: true", the only way the encoder writes a bool field.
func (p *fastParser) flag(rest string) bool {
	p.next()
	return rest == " true"
}

// integer reads "name: 12": decimal, no sign but a minus, no leading zeros
// (goccy reads those as octal), within int.
func (p *fastParser) integer(rest string) (int, bool) {
	p.next()
	if len(rest) < 2 || rest[0] != ' ' {
		return 0, false
	}
	v := rest[1:]
	d := v
	if d[0] == '-' {
		d = d[1:]
	}
	if d == "" || d[0] == '0' && (len(d) > 1 || len(v) > 1) {
		return 0, false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(v, 10, strconv.IntSize)
	return int(n), err == nil
}

// timestamp reads "name: 2026-01-02T03:04:05.5Z" as the slow path does
// (strictTime): the text, plain, RFC 3339 — not goccy's own first layout,
// which takes one-digit fields (2026-1-2T3:4:5Z) strictTime refuses.
func (p *fastParser) timestamp(rest string) (time.Time, bool) {
	p.next()
	if len(rest) < 2 || rest[0] != ' ' {
		return time.Time{}, false
	}
	v := rest[1:]
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= '0' && c <= '9', c == 'T', c == 'Z', c == ':', c == '.', c == '+', c == '-':
		default:
			return time.Time{}, false
		}
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	return t, err == nil
}

// key reads the key of a map entry, plain or double-quoted, and returns what
// follows its colon.
func (p *fastParser) key(text string) (k, rest string, ok bool) {
	if text == "" {
		return "", "", false
	}
	if text[0] == '"' {
		k, rest, ok = p.quoted(text)
		if !ok || rest == "" || rest[0] != ':' {
			return "", "", false
		}
		return k, rest[1:], true
	}
	// A plain key holds no ": " and does not end with a colon: its own
	// colon is the first one followed by a space or the end of the line.
	for off := 0; ; {
		i := strings.IndexByte(text[off:], ':')
		if i < 0 {
			return "", "", false
		}
		i += off
		if i+1 == len(text) || text[i+1] == ' ' {
			k = text[:i]
			return k, text[i+1:], plainSafe(k)
		}
		off = i + 1
	}
}

// quoted reads a double-quoted scalar at the start of t as goccy does, and
// returns what follows it. It accepts what strconv.Quote writes: printable
// characters, and the escapes \a \b \f \n \r \t \v \\ \" \xNN \uNNNN and
// \UNNNNNNNN (no surrogates).
func (p *fastParser) quoted(t string) (s, rest string, ok bool) {
	for i := 1; i < len(t); {
		c := t[i]
		switch {
		case c == '"':
			return t[1:i], t[i+1:], true
		case c == '\\':
			return p.unescape(t, i)
		case c < 0x20 || c == 0x7f:
			return "", "", false
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRuneInString(t[i:])
			if r == utf8.RuneError && n == 1 || !strconv.IsPrint(r) {
				return "", "", false
			}
			i += n
		}
	}
	return "", "", false
}

// unescape continues quoted from the first backslash, at i.
func (p *fastParser) unescape(t string, i int) (s, rest string, ok bool) {
	b := append(p.buf[:0], t[1:i]...)
	defer func() { p.buf = b[:0] }()
	for i < len(t) {
		c := t[i]
		switch {
		case c == '"':
			return string(b), t[i+1:], true
		case c == '\\':
			if i+1 >= len(t) {
				return "", "", false
			}
			e := t[i+1]
			i += 2
			switch e {
			case 'a':
				b = append(b, '\a')
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'v':
				b = append(b, '\v')
			case '\\', '"':
				b = append(b, e)
			case 'x', 'u', 'U':
				n := 2
				if e == 'u' {
					n = 4
				} else if e == 'U' {
					n = 8
				}
				r, ok := hexRune(t, i, n)
				// goccy reads \xNN as the code point U+00NN (strconv.Quote
				// writes \xNN for a byte of invalid UTF-8, so such a string
				// does not survive the file; it reads back the same here).
				if !ok || r > utf8.MaxRune || r >= 0xD800 && r <= 0xDFFF {
					return "", "", false
				}
				b = utf8.AppendRune(b, r)
				i += n
			default:
				return "", "", false
			}
		case c < 0x20 || c == 0x7f:
			return "", "", false
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, n := utf8.DecodeRuneInString(t[i:])
			if r == utf8.RuneError && n == 1 || !strconv.IsPrint(r) {
				return "", "", false
			}
			b = append(b, t[i:i+n]...)
			i += n
		}
	}
	return "", "", false
}

// hexRune reads n hex digits at t[i:].
func hexRune(t string, i, n int) (rune, bool) {
	if i+n > len(t) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(t[i : i+n]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// state reads the whole document.
func (p *fastParser) state() (*State, bool) {
	s := &State{}
	var ok bool
	if p.ind != 0 || !strings.HasPrefix(p.text, "version:") {
		return nil, false
	}
	if s.Version, ok = p.integer(p.text[len("version:"):]); !ok {
		return nil, false
	}
	if p.ind != 0 || !strings.HasPrefix(p.text, "stack:") {
		return nil, false
	}
	if s.Stack, ok = p.scalar(p.text[len("stack:"):]); !ok {
		return nil, false
	}
	last := 1
	for p.ind == 0 {
		name, rest := field(p.text)
		idx := -1
		switch name {
		case "status":
			idx = 2
			s.Status, ok = p.scalar(rest)
		case "deploymentId":
			idx = 3
			s.DeploymentID, ok = p.scalar(rest)
		case "lastRun":
			idx = 4
			s.LastRun, ok = p.scalar(rest)
		case "updated":
			idx = 5
			s.Updated, ok = p.timestamp(rest)
		case "parameters":
			idx = 6
			s.Parameters, ok = p.strMap(rest, 2)
		case "outputs":
			idx = 7
			s.Outputs, ok = p.strMap(rest, 2)
		case "secretOutputs":
			idx = 8
			s.SecretOutputs, ok = p.strList(rest, 2)
		case "secretParameters":
			idx = 9
			s.SecretParameters, ok = p.strList(rest, 2)
		case "provides":
			idx = 10
			s.Provides, ok = p.provides(rest)
		case "components":
			idx = 11
			s.Components, ok = p.components(rest)
		}
		if idx <= last || !ok {
			return nil, false
		}
		last = idx
	}
	return s, true
}

// strMap reads a map of strings, its entries at indent in.
func (p *fastParser) strMap(rest string, in int) (map[string]string, bool) {
	if !p.open(rest) || p.ind != in {
		return nil, false
	}
	m := make(map[string]string)
	prev := ""
	for p.ind == in {
		k, rest, ok := p.key(p.text)
		if !ok || dup(m, k, &prev) {
			return nil, false
		}
		if m[k], ok = p.scalar(rest); !ok {
			return nil, false
		}
	}
	return m, true
}

// list reads the items of a list of strings at indent in.
func (p *fastParser) list(in int) ([]string, bool) {
	if p.ind != in {
		return nil, true
	}
	from := len(p.strs.items)
	for p.ind == in {
		t := p.text
		if len(t) < 3 || t[0] != '-' || t[1] != ' ' {
			return nil, false
		}
		v, ok := p.str(t[2:])
		if !ok {
			return nil, false
		}
		p.strs.push(v)
		p.next()
	}
	return p.strs.pop(from), true
}

// strList reads a list of strings, its items at indent in.
func (p *fastParser) strList(rest string, in int) ([]string, bool) {
	if !p.open(rest) || p.ind != in {
		return nil, false
	}
	return p.list(in)
}

// provides reads capability -> components; the encoder writes a capability
// with no components as "name:" and nothing under it, which goccy reads as
// a nil list.
func (p *fastParser) provides(rest string) (map[string][]string, bool) {
	if !p.open(rest) || p.ind != 2 {
		return nil, false
	}
	m := make(map[string][]string)
	prev := ""
	for p.ind == 2 {
		k, rest, ok := p.key(p.text)
		if !ok || rest != "" || dup(m, k, &prev) {
			return nil, false
		}
		p.next()
		if m[k], ok = p.list(4); !ok {
			return nil, false
		}
	}
	return m, true
}

// components reads the components, each under its quoted name at indent 2.
func (p *fastParser) components(rest string) (map[string]*Component, bool) {
	if !p.open(rest) || p.ind != 2 {
		return nil, false
	}
	m := make(map[string]*Component)
	prev := ""
	for p.ind == 2 {
		if p.text == "" || p.text[0] != '"' {
			return nil, false
		}
		name, rest, ok := p.quoted(p.text)
		if !ok || rest != ":" || dup(m, name, &prev) {
			return nil, false
		}
		p.next()
		if len(p.comps) == 0 {
			p.comps = make([]Component, min(max(len(m), 8), componentChunk))
		}
		c := &p.comps[0]
		p.comps = p.comps[1:]
		if !p.component(c) {
			return nil, false
		}
		m[name] = c
	}
	p.comps = nil
	return m, true
}

// component reads a component's fields at indent 4.
func (p *fastParser) component(c *Component) bool {
	var ok bool
	if p.ind != 4 || !strings.HasPrefix(p.text, "status:") {
		return false
	}
	if c.Status, ok = p.scalar(p.text[len("status:"):]); !ok {
		return false
	}
	last, order := 0, false
	for p.ind == 4 {
		name, rest := field(p.text)
		idx := -1
		switch name {
		case "reason":
			idx = 1
			c.Reason, ok = p.scalar(rest)
		case "verb":
			idx = 2
			c.Verb, ok = p.scalar(rest)
		case "started":
			idx = 3
			c.Started, ok = p.timestamp(rest)
		case "finished":
			idx = 4
			c.Finished, ok = p.timestamp(rest)
		case "lastRun":
			idx = 5
			c.LastRun, ok = p.scalar(rest)
		case "order":
			idx, order = 6, true
			c.Order, ok = p.integer(rest)
		case "dir":
			idx = 7
			c.Dir, ok = p.scalar(rest)
		case "depends":
			idx = 8
			c.Depends, ok = p.strList(rest, 6)
		case "parameters":
			idx = 9
			c.Parameters, ok = p.parameters(rest, 6)
		case "outputs":
			idx = 10
			c.Outputs, ok = p.strMap(rest, 6)
		case "secretOutputs":
			idx = 11
			c.SecretOutputs, ok = p.strList(rest, 6)
		case "provides":
			idx = 12
			c.Provides, ok = p.strList(rest, 6)
		case "fingerprint":
			idx = 13
			c.Fingerprint, ok = p.scalar(rest)
		case "inputs":
			idx = 14
			c.Inputs, ok = p.inputs(rest)
		case "specVersion":
			idx = 15
			c.SpecVersion, ok = p.scalar(rest)
		case "plugins":
			idx = 16
			c.Plugins, ok = p.plugins(rest, 6)
		case "setupPlugins":
			idx = 17
			c.SetupPlugins, ok = p.plugins(rest, 6)
		}
		if idx <= last || !ok {
			return false
		}
		last = idx
	}
	return order
}

// inputs reads what a component's fingerprint was made of, at indent 6:
// verb first, then the maps the encoder writes when not empty.
func (p *fastParser) inputs(rest string) (*Inputs, bool) {
	if !p.open(rest) || p.ind != 6 || !strings.HasPrefix(p.text, "verb:") {
		return nil, false
	}
	in := &Inputs{}
	var ok bool
	if in.Verb, ok = p.scalar(p.text[len("verb:"):]); !ok {
		return nil, false
	}
	last := 0
	for p.ind == 6 {
		name, rest := field(p.text)
		idx := -1
		switch name {
		case "outputs":
			idx = 1
			in.Outputs, ok = p.strMap(rest, 8)
		case "files":
			idx = 2
			in.Files, ok = p.strMap(rest, 8)
		case "lifecycle":
			idx = 3
			in.Lifecycle, ok = p.scalar(rest)
		case "reads":
			idx = 4
			in.Reads, ok = p.strMap(rest, 8)
		}
		if idx <= last || !ok {
			return nil, false
		}
		last = idx
	}
	return in, true
}

// parameters reads a component's parameters, their dashes at indent in.
func (p *fastParser) parameters(rest string, in int) ([]Parameter, bool) {
	if !p.open(rest) || p.ind != in {
		return nil, false
	}
	from := len(p.params.items)
	for p.ind == in {
		if !strings.HasPrefix(p.text, "- name:") {
			return nil, false
		}
		var prm Parameter
		var ok bool
		if prm.Name, ok = p.scalar(p.text[len("- name:"):]); !ok {
			return nil, false
		}
		last := 0
		for p.ind == in+2 {
			name, rest := field(p.text)
			idx := -1
			switch name {
			case "value":
				idx = 1
				prm.Value, ok = p.scalar(rest)
			case "env":
				idx = 2
				prm.Env, ok = p.scalar(rest)
			case "secret":
				idx = 3
				prm.Secret, ok = true, p.flag(rest)
			}
			if idx <= last || !ok {
				return nil, false
			}
			last = idx
		}
		if last < 1 { // no value
			return nil, false
		}
		p.params.push(prm)
	}
	return p.params.pop(from), true
}

// plugins reads a plugin list, its dashes at indent in.
func (p *fastParser) plugins(rest string, in int) ([]PluginInstance, bool) {
	if !p.open(rest) || p.ind != in {
		return nil, false
	}
	if p.depth++; p.depth > maxFastDepth {
		return nil, false
	}
	defer func() { p.depth-- }()
	from := len(p.plugs.items)
	for p.ind == in {
		if !strings.HasPrefix(p.text, "- name:") {
			return nil, false
		}
		var pi PluginInstance
		var ok bool
		if pi.Name, ok = p.scalar(p.text[len("- name:"):]); !ok {
			return nil, false
		}
		last := 0
		for p.ind == in+2 {
			name, rest := field(p.text)
			idx := -1
			switch name {
			case "key":
				idx = 1
				pi.Key, ok = p.scalar(rest)
			case "path":
				idx = 2
				pi.Path, ok = p.scalar(rest)
			case "args":
				idx = 3
				pi.Args, ok = p.strList(rest, in+4)
			case "config":
				idx = 4
				pi.Config, ok = p.value(rest, in+4)
			case "hidden":
				idx = 5
				pi.Hidden, ok = true, p.flag(rest)
			case "label":
				idx = 6
				pi.Label, ok = p.scalar(rest)
			case "onFail":
				idx = 7
				pi.OnFail, ok = p.strList(rest, in+4)
			case "children":
				idx = 8
				pi.Children, ok = p.plugins(rest, in+4)
			case "resources":
				idx = 9
				pi.Resources, ok = p.resources(rest, in+4)
			case "cluster":
				idx = 10
				pi.Cluster, ok = p.scalar(rest)
			}
			if idx <= last || !ok {
				return nil, false
			}
			last = idx
		}
		p.plugs.push(pi)
	}
	return p.plugs.pop(from), true
}

// resources reads a plugin instance's resources, their dashes at indent in.
func (p *fastParser) resources(rest string, in int) ([]Resource, bool) {
	if !p.open(rest) || p.ind != in {
		return nil, false
	}
	from := len(p.res.items)
	for p.ind == in {
		if !strings.HasPrefix(p.text, "- apiVersion:") {
			return nil, false
		}
		var r Resource
		var ok bool
		if r.APIVersion, ok = p.scalar(p.text[len("- apiVersion:"):]); !ok {
			return nil, false
		}
		last, kind, name := 0, false, false
		for p.ind == in+2 {
			fname, rest := field(p.text)
			idx := -1
			switch fname {
			case "kind":
				idx, kind = 1, true
				r.Kind, ok = p.scalar(rest)
			case "namespace":
				idx = 2
				r.Namespace, ok = p.scalar(rest)
			case "name":
				idx, name = 3, true
				r.Name, ok = p.scalar(rest)
			case "weight":
				idx = 4
				r.Weight, ok = p.integer(rest)
				ok = ok && r.Weight != 0
			case "crd":
				idx = 5
				r.CRD, ok = true, p.flag(rest)
			case "keep":
				idx = 6
				r.Keep, ok = true, p.flag(rest)
			case "adopted":
				idx = 7
				r.Adopted, ok = true, p.flag(rest)
			case "pending":
				idx = 8
				r.Pending, ok = true, p.flag(rest)
			}
			if idx <= last || !ok {
				return nil, false
			}
			last = idx
		}
		if !kind || !name {
			return nil, false
		}
		p.res.push(r)
	}
	return p.res.pop(from), true
}

// value reads an arbitrary value (a plugin config) as the encoder's value
// writes it: rest is what follows "key:" or "-" on its line, a scalar after
// a space, or nothing and a block at indent in on the lines below.
func (p *fastParser) value(rest string, in int) (any, bool) {
	if rest == "" {
		p.next()
		if p.ind != in || p.text == "" {
			return nil, false
		}
		if p.depth++; p.depth > maxFastDepth {
			return nil, false
		}
		defer func() { p.depth-- }()
		if p.text[0] == '-' && (len(p.text) == 1 || p.text[1] == ' ') {
			return p.seq(in)
		}
		return p.mapping(in)
	}
	if len(rest) < 2 || rest[0] != ' ' {
		return nil, false
	}
	v := rest[1:]
	p.next()
	switch v {
	case "{}":
		return map[string]any{}, true
	case "[]":
		return []any{}, true
	}
	return p.configScalar(v)
}

// seq reads a block sequence of values, its dashes at indent in.
func (p *fastParser) seq(in int) (any, bool) {
	from := len(p.anys.items)
	for p.ind == in {
		t := p.text
		if t == "" || t[0] != '-' {
			return nil, false
		}
		v, ok := p.value(t[1:], in+2)
		if !ok {
			return nil, false
		}
		p.anys.push(v)
	}
	return p.anys.pop(from), true
}

// mapping reads a block mapping of values, its keys at indent in.
func (p *fastParser) mapping(in int) (any, bool) {
	m := map[string]any{}
	prev := ""
	for p.ind == in {
		k, rest, ok := p.key(p.text)
		if !ok || dup(m, k, &prev) {
			return nil, false
		}
		if m[k], ok = p.value(rest, in+2); !ok {
			return nil, false
		}
	}
	return m, true
}

// configScalar reads a scalar in a config as goccy types it: double-quoted
// and plain-safe text are strings, the encoder's null, booleans and special
// floats are what they say, and number-like text is what goccy's token
// classification makes of it (a number, or its text when goccy reads it as
// a string, like 1e+06). Anything else falls back.
func (p *fastParser) configScalar(v string) (any, bool) {
	if v[0] == '"' {
		s, rest, ok := p.quoted(v)
		return s, ok && rest == ""
	}
	switch v {
	case "null":
		return nil, true
	case "true":
		return true, true
	case "false":
		return false, true
	case ".inf":
		return math.Inf(1), true
	case "-.inf":
		return math.Inf(-1), true
	case ".nan":
		return math.NaN(), true
	}
	if plainSafe(v) {
		return v, true
	}
	if !numberLike(v) {
		return nil, false
	}
	if n := token.ToNumber(v); n != nil {
		return n.Value, true
	}
	return v, true
}

// numberLike reports whether v is made of what the encoder's numbers are
// made of, starting with a digit or a minus and a digit: text the YAML
// scanner takes as one plain scalar that goccy's token.ToNumber types.
func numberLike(v string) bool {
	i := 0
	if v[0] == '-' {
		i = 1
	}
	if i >= len(v) || v[i] < '0' || v[i] > '9' {
		return false
	}
	for ; i < len(v); i++ {
		switch c := v[i]; {
		case c >= '0' && c <= '9', c == '.', c == 'e', c == 'E', c == '+', c == '-':
		default:
			return false
		}
	}
	return true
}

// dup reports whether m already holds k, a duplicate key goccy refuses (or,
// in a config, reads as the last one); greatest is the greatest key so far. The
// encoder writes keys sorted, so a key not above the greatest is rare (a
// string that was not UTF-8 reads back as another): only then is the map
// asked.
func dup[V any](m map[string]V, k string, greatest *string) bool {
	if k > *greatest {
		*greatest = k
		return false
	}
	_, ok := m[k]
	return ok
}
