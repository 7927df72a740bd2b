package manifest

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// nodeDecoder is implemented by types with their own YAML shapes (steps, plugin
// entries): they decode themselves from the node and report through d.
type nodeDecoder interface {
	decodeNode(d *decoder, n *Node, path string)
}

// decoder turns Nodes into the typed model strictly: unknown fields, wrong types
// and missing required fields become diagnostics, and decoding goes on so that
// every problem of a file is reported at once.
type decoder struct {
	diags *Diagnostics
	// rec records the position of every node below the innermost struct that has
	// a Positions field, by path relative to that struct.
	rec     map[string]Pos
	recBase string
}

func (d *decoder) errorf(pos Pos, path, format string, args ...any) {
	d.diags.Errorf(pos, path, format, args...)
}

var (
	posType       = reflect.TypeOf(Pos{})
	positionsType = reflect.TypeOf(Positions(nil))
	nodePtrType   = reflect.TypeOf((*Node)(nil))
	decoderType   = reflect.TypeOf((*nodeDecoder)(nil)).Elem()
)

type fieldInfo struct {
	name     string
	index    []int // reflect's path: an inline struct's fields are its own
	required bool
}

type structInfo struct {
	fields []fieldInfo
	byName map[string]int
	names  []string
	posIdx int // index of the Pos field, or -1
	recIdx int // index of the Positions field, or -1
}

var structCache sync.Map // reflect.Type -> *structInfo

func structInfoOf(t reflect.Type) *structInfo {
	if si, ok := structCache.Load(t); ok {
		return si.(*structInfo)
	}
	si := &structInfo{byName: map[string]int{}, posIdx: -1, recIdx: -1}
	si.addFields(t, nil)
	structCache.Store(t, si)
	return si
}

// addFields adds the fields of t, whose path from the decoded struct is
// prefix; a field tagged ",inline" (a struct two manifests share) adds its
// own fields.
func (si *structInfo) addFields(t reflect.Type, prefix []int) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if prefix == nil && f.Name == "Pos" && f.Type == posType {
			si.posIdx = i
			continue
		}
		if prefix == nil && f.Name == "Positions" && f.Type == positionsType {
			si.recIdx = i
			continue
		}
		tag := f.Tag.Get("yaml")
		if tag == "-" {
			// accept:"name" reads a field that is not written back: one the
			// Hub CLI ignores and drops from what it elaborates.
			tag = f.Tag.Get("accept")
		}
		if tag == "" || !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		index := append(append([]int(nil), prefix...), i)
		if name == "" && opts == "inline" && f.Type.Kind() == reflect.Struct {
			si.addFields(f.Type, index)
			continue
		}
		if name == "" {
			continue
		}
		si.byName[name] = len(si.fields)
		si.fields = append(si.fields, fieldInfo{name: name, index: index, required: strings.Contains(opts, "required")})
		si.names = append(si.names, name)
	}
}

func childPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func itemPath(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// expect reports a type mismatch in the words users read.
func (d *decoder) expect(n *Node, path, what string) {
	d.errorf(n.Pos, path, "expected %s, got %s", what, n.Describe())
}

func (d *decoder) decode(n *Node, v reflect.Value, path string) {
	if n == nil {
		return
	}
	if d.rec != nil && len(path) > len(d.recBase) {
		rel := path[len(d.recBase):]
		if rel[0] == '.' {
			rel = rel[1:]
		}
		d.rec[rel] = n.Pos
	}
	if v.CanAddr() && v.Addr().Type().Implements(decoderType) {
		v.Addr().Interface().(nodeDecoder).decodeNode(d, n, path)
		return
	}
	t := v.Type()
	if t == nodePtrType {
		v.Set(reflect.ValueOf(n))
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		if n.Kind == NullNode {
			return
		}
		p := reflect.New(t.Elem())
		d.decode(n, p.Elem(), path)
		v.Set(p)
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Slice:
		if n.Kind == NullNode {
			return
		}
		if n.Kind != SeqNode {
			d.expect(n, path, "a list")
			return
		}
		s := reflect.MakeSlice(t, len(n.Items), len(n.Items))
		if len(n.Items) >= parallelItems {
			d.decodeItems(n.Items, s, path)
		} else {
			for i, it := range n.Items {
				d.decode(it, s.Index(i), itemPath(path, i))
			}
		}
		v.Set(s)
	case reflect.Map:
		if n.Kind == NullNode {
			return
		}
		if n.Kind != MapNode {
			d.expect(n, path, "a mapping")
			return
		}
		m := reflect.MakeMapWithSize(t, len(n.Entries))
		for _, e := range n.Entries {
			ev := reflect.New(t.Elem()).Elem()
			d.decode(e.Value, ev, childPath(path, e.Key))
			m.SetMapIndex(reflect.ValueOf(e.Key).Convert(t.Key()), ev)
		}
		v.Set(m)
	case reflect.String:
		switch n.Kind {
		case NullNode:
		case ScalarNode:
			v.SetString(n.Value)
		default:
			d.expect(n, path, "a string")
		}
	case reflect.Bool:
		if n.Kind == NullNode {
			return
		}
		if n.Kind != ScalarNode || n.Type != BoolScalar {
			d.expect(n, path, "true or false")
			return
		}
		v.SetBool(n.Value == "true")
	case reflect.Int, reflect.Int64, reflect.Int32:
		if n.Kind == NullNode {
			return
		}
		i, ok := intValue(n)
		if !ok {
			d.expect(n, path, "an integer")
			return
		}
		v.SetInt(i)
	case reflect.Float64:
		if n.Kind == NullNode {
			return
		}
		f, ok := floatValue(n)
		if !ok {
			d.expect(n, path, "a number")
			return
		}
		v.SetFloat(f)
	case reflect.Interface:
		if n.Kind != NullNode {
			v.Set(reflect.ValueOf(n.Interface()))
		}
	default:
		panic(fmt.Sprintf("manifest: cannot decode into %s", t))
	}
}

func intValue(n *Node) (int64, bool) {
	if n.Kind != ScalarNode || n.Type != IntScalar {
		return 0, false
	}
	s := strings.ReplaceAll(n.Value, "_", "")
	if strings.HasPrefix(s, "0o") || strings.HasPrefix(s, "0O") {
		s = "0" + s[2:]
	}
	i, err := strconv.ParseInt(s, 0, 64)
	return i, err == nil
}

func floatValue(n *Node) (float64, bool) {
	if n.Kind != ScalarNode {
		return 0, false
	}
	switch n.Type {
	case IntScalar:
		i, ok := intValue(n)
		return float64(i), ok
	case FloatScalar:
		s := strings.ToLower(strings.ReplaceAll(n.Value, "_", ""))
		switch s {
		case ".inf", "+.inf":
			return math.Inf(1), true
		case "-.inf":
			return math.Inf(-1), true
		case ".nan":
			return math.NaN(), true
		}
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	}
	return 0, false
}

func (d *decoder) decodeStruct(n *Node, v reflect.Value, path string) {
	si := structInfoOf(v.Type())
	if si.posIdx >= 0 {
		v.Field(si.posIdx).Set(reflect.ValueOf(n.Pos))
	}
	if n.Kind == NullNode {
		d.checkRequired(n, si, nil, path)
		return
	}
	if n.Kind != MapNode {
		d.expect(n, path, "a mapping")
		return
	}
	if si.recIdx >= 0 {
		rec := Positions{}
		v.Field(si.recIdx).Set(reflect.ValueOf(rec))
		defer func(prev map[string]Pos, base string) { d.rec, d.recBase = prev, base }(d.rec, d.recBase)
		d.rec, d.recBase = rec, path
	}
	seen := make(map[string]bool, len(n.Entries))
	for _, e := range n.Entries {
		fi, ok := si.byName[e.Key]
		if !ok {
			d.unknownField(e, si.names, path)
			continue
		}
		seen[e.Key] = true
		f := si.fields[fi]
		if f.required && (e.Value == nil || e.Value.Kind == NullNode || e.Value.Kind == ScalarNode && e.Value.Value == "") {
			// name: "" or name: ~ is no more a name than a missing one.
			pos := e.KeyPos
			if e.Value != nil {
				pos = e.Value.Pos
			}
			d.errorf(pos, childPath(path, e.Key), "%q must not be empty", e.Key)
			if e.Value == nil || e.Value.Kind == NullNode {
				continue // said: not its missing fields again
			}
		}
		d.decode(e.Value, v.FieldByIndex(f.index), childPath(path, e.Key))
	}
	d.checkRequired(n, si, seen, path)
}

func (d *decoder) checkRequired(n *Node, si *structInfo, seen map[string]bool, path string) {
	for _, f := range si.fields {
		if f.required && !seen[f.name] {
			d.errorf(n.Pos, path, "missing required field %q", f.name)
		}
	}
}

func (d *decoder) unknownField(e Entry, known []string, path string) {
	msg := fmt.Sprintf("unknown field %q", e.Key)
	if s := suggest(e.Key, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	} else if len(known) <= 8 {
		msg += " (expected one of " + quoteList(known) + ")"
	}
	field := path
	if field == "" {
		field = e.Key
	}
	d.errorf(e.KeyPos, field, "%s", msg)
}

// reflectOf returns the settable value a pointer points to.
func reflectOf(p any) reflect.Value { return reflect.ValueOf(p).Elem() }

// Suggest returns the name of known closest to s when s looks like a typo of it,
// else "".
func Suggest(s string, known []string) string { return suggest(s, known) }

// Positions maps field paths relative to a struct ("depends[1]", "order[0]") to
// where they were written, for messages that point at one list item.
type Positions map[string]Pos

// At returns the position of the field at rel, or def when it was not recorded.
func (p Positions) At(rel string, def Pos) Pos {
	if pos, ok := p[rel]; ok {
		return pos
	}
	return def
}
