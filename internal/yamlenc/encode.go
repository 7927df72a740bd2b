// Package yamlenc writes Go values as YAML exactly as goccy/go-yaml's
// encoder writes them with yaml.IndentSequence(true) and yaml.Indent(2),
// byte for byte, about ten times faster: it works each struct type out
// once and writes straight into a buffer instead of building a syntax tree
// and printing it.
//
// It covers what gantry's documents hold: structs with plain, omitempty and
// inline fields, maps with string keys, yaml.MapSlice, slices, scalars,
// multi-line strings (literal blocks, with goccy's quirks), and
// MarshalYAML methods returning a value. Anything else — flow style,
// anchors, times, carriage returns — returns ErrUnsupported, and the caller
// encodes that value with goccy/go-yaml.
package yamlenc

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/token"
)

// ErrUnsupported says a value holds something only goccy/go-yaml's encoder
// writes; nothing was written.
var ErrUnsupported = errors.New("the value needs the general YAML encoder")

// maxDepth bounds nesting, as the general encoder's recursion would not:
// a value deeper than this goes to it (and a cyclic one cannot loop here).
const maxDepth = 200

// Marshal writes v as one YAML document.
func Marshal(v any) ([]byte, error) {
	e := encoder{buf: make([]byte, 0, 1024), blank: -1}
	if err := e.document(reflect.ValueOf(v)); err != nil {
		return nil, err
	}
	return e.buf, nil
}

type encoder struct {
	buf   []byte
	depth int
	// blank: inside a sequence item that is a mapping or a sequence, goccy
	// empties every later line of the item no longer than this (the
	// item's indentation); -1 elsewhere.
	blank int
	// shift: how far right of goccy's columns the lines of such items
	// end up (2 for each mapping item around).
	shift int
}

func unsupported(why string) error { return fmt.Errorf("%w: %s", ErrUnsupported, why) }

// shape is what a value resolves to.
type shape uint8

const (
	shapeNull shape = iota
	shapeScalar
	shapeBlock // a string on several lines: a literal block
	shapeMapping
	shapeSequence
)

// entry is one key of a mapping about to be written.
type entry struct {
	key string // as written
	raw string // as it is
	val reflect.Value
}

func (e *encoder) document(v reflect.Value) error {
	sh, v, text, err := e.resolve(v)
	if err != nil {
		return err
	}
	switch sh {
	case shapeNull:
		e.buf = append(e.buf, "null"...)
	case shapeScalar:
		e.buf = append(e.buf, text...)
	case shapeBlock:
		e.block(text, 2)
	case shapeSequence:
		// goccy indents a sequence at the top too.
		indent := 0
		if v.Len() > 0 {
			indent = 2
			e.buf = append(e.buf, "  "...)
		}
		if err := e.collection(sh, v, indent, true); err != nil {
			return err
		}
	default:
		if err := e.collection(sh, v, 0, true); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '\n')
	return nil
}

// resolve follows pointers, interfaces and MarshalYAML methods to what v
// writes as; for a scalar it returns the text.
func (e *encoder) resolve(v reflect.Value) (shape, reflect.Value, string, error) {
	for hops := 0; ; hops++ {
		if hops > maxDepth {
			return 0, v, "", unsupported("too many indirections")
		}
		if !v.IsValid() {
			return shapeNull, v, "", nil
		}
		k := v.Kind()
		if (k == reflect.Pointer || k == reflect.Interface) && v.IsNil() {
			return shapeNull, v, "", nil
		}
		if k == reflect.Interface {
			// goccy asks the value inside for its marshalers, even a nil
			// pointer.
			in := v.Elem()
			if in.Kind() == reflect.Pointer && in.IsNil() && infoOf(in.Type()).marshal != marshalNone {
				return 0, v, "", unsupported("nil " + in.Type().String() + " that marshals itself")
			}
			v = in
			continue
		}
		if !v.CanInterface() {
			return 0, v, "", unsupported("unexported value")
		}
		ti := infoOf(v.Type())
		switch ti.marshal {
		case marshalInterface:
			m, err := v.Interface().(interface{ MarshalYAML() (any, error) }).MarshalYAML()
			if err != nil {
				return 0, v, "", err
			}
			v = reflect.ValueOf(m)
			continue
		case marshalText:
			text, err := v.Interface().(interface{ MarshalText() ([]byte, error) }).MarshalText()
			if err != nil {
				return 0, v, "", err
			}
			sh, s, err := stringScalar(string(text))
			return sh, v, s, err
		case marshalOther:
			return 0, v, "", unsupported("type " + v.Type().String())
		}
		switch k {
		case reflect.Pointer, reflect.Interface:
			v = v.Elem()
			continue
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return shapeScalar, v, strconv.FormatInt(v.Int(), 10), nil
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			return shapeScalar, v, strconv.FormatUint(v.Uint(), 10), nil
		case reflect.Float32:
			return shapeScalar, v, floatScalar(v.Float(), 32), nil
		case reflect.Float64:
			return shapeScalar, v, floatScalar(v.Float(), 64), nil
		case reflect.Bool:
			return shapeScalar, v, strconv.FormatBool(v.Bool()), nil
		case reflect.String:
			sh, s, err := stringScalar(v.String())
			return sh, v, s, err
		case reflect.Slice, reflect.Array:
			if v.Type() == mapSliceType {
				return shapeMapping, v, "", nil
			}
			return shapeSequence, v, "", nil
		case reflect.Map, reflect.Struct:
			if ti.unsupported != "" {
				return 0, v, "", unsupported(ti.unsupported)
			}
			return shapeMapping, v, "", nil
		}
		return 0, v, "", unsupported("kind " + k.String())
	}
}

// collection writes a mapping or sequence whose first line starts where
// the buffer ends (after "- ", or at the start of a line when first says
// the indentation is written already) and whose other lines are indented
// by indent.
func (e *encoder) collection(sh shape, v reflect.Value, indent int, first bool) error {
	if sh == shapeSequence {
		return e.sequence(v, indent, first)
	}
	entries, err := e.entries(v, nil)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		e.buf = append(e.buf, "{}"...)
		return nil
	}
	return e.mapping(entries, indent, first)
}

// mapping writes a mapping's entries, one a line, the first where the
// buffer ends when first says its indentation is written already.
func (e *encoder) mapping(entries []entry, indent int, first bool) error {
	e.depth++
	defer func() { e.depth-- }()
	if e.depth > maxDepth {
		return unsupported("nested too deep")
	}
	for i, en := range entries {
		if i > 0 || !first {
			e.newline(indent)
		}
		e.buf = append(e.buf, en.key...)
		e.buf = append(e.buf, ':')
		if err := e.mappingValue(en.val, indent); err != nil {
			return err
		}
	}
	return nil
}

// mappingValue writes what follows a key's colon.
func (e *encoder) mappingValue(v reflect.Value, indent int) error {
	sh, v, text, err := e.resolve(v)
	if err != nil {
		return err
	}
	switch sh {
	case shapeNull:
		e.buf = append(e.buf, " null"...)
		return nil
	case shapeScalar:
		e.buf = append(e.buf, ' ')
		e.buf = append(e.buf, text...)
		return nil
	case shapeBlock:
		e.buf = append(e.buf, ' ')
		e.block(text, indent+2)
		return nil
	}
	if sh == shapeSequence {
		if v.Len() == 0 {
			e.buf = append(e.buf, " []"...)
			return nil
		}
		e.newline(indent + 2)
		return e.sequence(v, indent+2, true)
	}
	// The entries are worked out once: whether they are none decides the
	// line the mapping starts on.
	entries, err := e.entries(v, nil)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		e.buf = append(e.buf, " {}"...)
		return nil
	}
	e.newline(indent + 2)
	return e.mapping(entries, indent+2, true)
}

func (e *encoder) sequence(v reflect.Value, indent int, first bool) error {
	e.depth++
	defer func() { e.depth-- }()
	if e.depth > maxDepth {
		return unsupported("nested too deep")
	}
	n := v.Len()
	if n == 0 {
		e.buf = append(e.buf, "[]"...)
		return nil
	}
	for i := 0; i < n; i++ {
		if i > 0 || !first {
			e.newline(indent)
		}
		e.buf = append(e.buf, '-', ' ')
		sh, item, text, err := e.resolve(v.Index(i))
		if err != nil {
			return err
		}
		switch sh {
		case shapeNull:
			e.buf = append(e.buf, "null"...)
			continue
		case shapeScalar:
			e.buf = append(e.buf, text...)
			continue
		case shapeBlock:
			e.itemBlock(text, indent)
			continue
		}
		// goccy moves an item's later lines to its indentation from that of
		// its first line: 2 for a mapping (written at the sequence's
		// column), none for a sequence (written 2 further in already).
		move := 0
		if sh == shapeMapping {
			move = 2
		}
		outerBlank, outerShift := e.blank, e.shift
		e.blank = indent + 2
		e.shift += move
		err = e.collection(sh, item, indent+2, true)
		e.blank, e.shift = outerBlank, outerShift
		if err != nil {
			return err
		}
	}
	return nil
}

func (e *encoder) newline(indent int) {
	e.buf = append(e.buf, '\n')
	for range indent {
		e.buf = append(e.buf, ' ')
	}
}

// entries lists what a struct or map writes, appended to out: a map's keys
// sorted, a struct's fields in order with omitted ones left out and inline
// ones spread in.
func (e *encoder) entries(v reflect.Value, out []entry) ([]entry, error) {
	e.depth++
	defer func() { e.depth-- }()
	if e.depth > maxDepth {
		return nil, unsupported("nested too deep")
	}
	if v.Kind() == reflect.Map {
		return e.mapEntries(v, out)
	}
	if v.Kind() == reflect.Slice {
		return mapSliceEntries(v.Interface().(yaml.MapSlice), out)
	}
	ti := infoOf(v.Type())
	for _, f := range ti.fields {
		fv := v.Field(f.index)
		if f.omitEmpty {
			omit, err := omittedByOmitEmpty(fv)
			if err != nil {
				return nil, err
			}
			if omit {
				continue
			}
		}
		if !f.inline {
			out = append(out, entry{key: f.key, raw: f.name, val: fv})
			continue
		}
		sh, iv, _, err := e.resolve(fv)
		if err != nil {
			return nil, err
		}
		if sh == shapeNull {
			continue
		}
		if sh != shapeMapping {
			return nil, unsupported("inline field " + f.name + " is not a mapping")
		}
		inner, err := e.entries(iv, nil)
		if err != nil {
			return nil, err
		}
		for _, en := range inner {
			if en.key != en.raw {
				return nil, unsupported("inline key " + en.raw)
			}
			if ti.names[en.raw] {
				continue
			}
			out = append(out, en)
		}
	}
	return out, nil
}

func (e *encoder) mapEntries(v reflect.Value, out []entry) ([]entry, error) {
	if !infoOf(v.Type().Key()).plainKey {
		return nil, unsupported("map key type " + v.Type().Key().String())
	}
	start := len(out)
	it := v.MapRange()
	for it.Next() {
		raw := it.Key().String()
		key, err := keyScalar(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, entry{key: key, raw: raw, val: it.Value()})
	}
	added := out[start:]
	sort.Slice(added, func(i, j int) bool { return added[i].raw < added[j].raw })
	return out, nil
}

// omittedByOmitEmpty is goccy's omitempty: empty strings, collections and
// numbers, false, nil, what IsZero says is zero, and structs all of whose
// exported fields are so.
func omittedByOmitEmpty(v reflect.Value) (bool, error) {
	k := v.Kind()
	if k == reflect.Interface && !v.IsNil() && infoOf(v.Elem().Type()).zeroer {
		// goccy asks the value inside whether it is zero.
		in := v.Elem()
		if in.Kind() == reflect.Pointer && in.IsNil() {
			return false, unsupported("IsZero of a nil " + in.Type().String())
		}
		return in.Interface().(interface{ IsZero() bool }).IsZero(), nil
	}
	if infoOf(v.Type()).zeroer {
		if (k == reflect.Pointer || k == reflect.Interface) && v.IsNil() {
			return true, nil
		}
		if !v.CanInterface() {
			return false, unsupported("unexported value")
		}
		return v.Interface().(interface{ IsZero() bool }).IsZero(), nil
	}
	switch k {
	case reflect.String:
		return v.Len() == 0, nil
	case reflect.Interface, reflect.Pointer:
		return v.IsNil(), nil
	case reflect.Slice, reflect.Map:
		return v.Len() == 0, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0, nil
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0, nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0, nil
	case reflect.Bool:
		return !v.Bool(), nil
	case reflect.Struct:
		t := v.Type()
		for i := v.NumField() - 1; i >= 0; i-- {
			if t.Field(i).PkgPath != "" {
				continue
			}
			omit, err := omittedByOmitEmpty(v.Field(i))
			if err != nil || !omit {
				return false, err
			}
		}
		return true, nil
	}
	return false, nil
}

// mapSliceEntries lists a yaml.MapSlice's items in order; goccy takes
// their keys to be strings.
func mapSliceEntries(ms yaml.MapSlice, out []entry) ([]entry, error) {
	for _, it := range ms {
		raw, ok := it.Key.(string)
		if !ok {
			return nil, unsupported(fmt.Sprintf("MapSlice key of type %T", it.Key))
		}
		key, err := keyScalar(raw)
		if err != nil {
			return nil, err
		}
		out = append(out, entry{key: key, raw: raw, val: reflect.ValueOf(it.Value)})
	}
	return out, nil
}

// stringScalar writes a string as goccy does: plain, or double-quoted
// when a plain scalar would read back as something else; a plain string
// on several lines becomes a literal block (shapeBlock, the string as it
// is). A carriage return in a block is left to goccy.
func stringScalar(s string) (shape, string, error) {
	if plainWord(s) {
		return shapeScalar, s, nil
	}
	if needQuote(s) {
		return shapeScalar, strconv.Quote(s), nil
	}
	if strings.IndexByte(s, '\r') >= 0 {
		return 0, "", unsupported("carriage return")
	}
	if strings.IndexByte(s, '\n') >= 0 {
		return shapeBlock, s, nil
	}
	return shapeScalar, s, nil
}

// keyScalar writes a mapping key; one on several lines is left to goccy.
func keyScalar(s string) (string, error) {
	sh, text, err := stringScalar(s)
	if err == nil && sh == shapeBlock {
		err = unsupported("key on several lines")
	}
	return text, err
}

// plainWord is a quick yes for most names and words: a string of letters,
// digits and _ . / -, starting with a letter, is not a number or a
// timestamp (those start with a digit, a sign or a dot) and holds nothing
// goccy quotes; it is not a keyword either (true, null, yes, off…) when it
// has six characters or more (the longest, false, has five) or a digit.
// token.IsNeedQuoted answers everything else (through needQuote); it tries
// five time layouts on every string, most of yamlenc's time before this.
func plainWord(s string) bool {
	if len(s) == 0 || !isLetter(s[0]) {
		return false
	}
	digit := false
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case isLetter(c), c == '_', c == '.', c == '/', c == '-':
		case c >= '0' && c <= '9':
			digit = true
		default:
			return false
		}
	}
	return digit || len(s) >= 6
}

// needQuote is token.IsNeedQuoted, remembered for the first strings asked:
// short words and values (user, 10, enabled) recur in every document.
func needQuote(s string) bool {
	if q, ok := quoted.Load(s); ok {
		return q.(bool)
	}
	q := token.IsNeedQuoted(s)
	if len(s) <= 64 && quotedCount.Add(1) <= maxQuoted {
		quoted.Store(s, q)
	}
	return q
}

var (
	quoted      sync.Map // string → bool
	quotedCount atomic.Int64
)

const maxQuoted = 1 << 14

func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// A multi-line string is a literal block: a header saying how the string
// ends, then its lines. goccy indents them by the column of the string's
// node and trims what its indentation leaves at the end; each sequence item
// around it that is a mapping or a sequence then empties the lines no
// longer than the item's indentation, and a mapping item moves them 2 to
// the right (a sequence item is written 2 further in already). So the
// lines are worked out where goccy has them (e.shift to the left of where
// they end up), then moved.

// block writes a string that is a mapping's value, its lines at indent.
func (e *encoder) block(s string, indent int) {
	e.buf = append(e.buf, blockHeader(s)...)
	e.emitBlockLines(blockLines(s, indent-e.shift))
}

// itemBlock writes a string that is a sequence item whose dash is at
// indent: goccy takes the block's indentation off each line and puts it
// back on those that are not empty then.
func (e *encoder) itemBlock(s string, indent int) {
	e.buf = append(e.buf, blockHeader(s)...)
	pad := spaces(indent + 2 - e.shift)
	lines := blockLines(s, len(pad))
	for i, line := range lines {
		if rest := strings.TrimPrefix(line, pad); rest != "" {
			lines[i] = pad + rest
		} else {
			lines[i] = ""
		}
	}
	e.emitBlockLines(lines)
}

// blockLines are goccy's lines of a literal block indented by pad spaces:
// after joining them, it trims a newline and the indentation from the end,
// then the indentation once more.
func blockLines(s string, pad int) []string {
	p := spaces(pad)
	var b strings.Builder
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(p)
		b.WriteString(line)
	}
	text := strings.TrimSuffix(strings.TrimSuffix(b.String(), "\n"+p), p)
	return strings.Split(text, "\n")
}

// emitBlockLines writes a block's lines as the sequence items around it
// leave them.
func (e *encoder) emitBlockLines(lines []string) {
	for _, line := range lines {
		e.buf = append(e.buf, '\n')
		if e.blank >= 0 && len(line) <= e.blank-e.shift {
			continue
		}
		for range e.shift {
			e.buf = append(e.buf, ' ')
		}
		e.buf = append(e.buf, line...)
	}
}

func blockHeader(s string) string {
	switch {
	case strings.HasSuffix(s, "\n\n"):
		return "|+"
	case strings.HasSuffix(s, "\n"):
		return "|"
	}
	return "|-"
}

func spaces(n int) string { return strings.Repeat(" ", n) }

func floatScalar(f float64, bits int) string {
	switch {
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	case math.IsNaN(f):
		return ".nan"
	}
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}
