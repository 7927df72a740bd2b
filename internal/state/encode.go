package state

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The state is written after every step, so its encoding is on the hot path
// of a run: a reflective YAML encoder spent more time than the processes it
// recorded. This encoder writes the fixed shape of the state directly, in
// block style with two-space indents and sorted map keys; Decode (goccy) reads
// it back. Strings are written plain when YAML cannot read them as anything
// else, double-quoted otherwise.

// Encode renders a state document; the same state always gives the same bytes.
func Encode(s *State) ([]byte, error) {
	b, err := FullBatch(s)
	return b.Snapshot, err
}

// FullBatch is the whole of a state as a store's Writer takes it: the
// document, and its header and component records apart.
func FullBatch(s *State) (Batch, error) {
	header, err := encodeHeader(s)
	if err != nil {
		return Batch{}, err
	}
	frags := make(map[string][]byte, len(s.Components))
	for name, c := range s.Components {
		if frags[name], err = encodeComponent(name, c); err != nil {
			return Batch{}, err
		}
	}
	names := slices.Sorted(maps.Keys(frags))
	b := Batch{Full: true, Header: header, Snapshot: assemble(nil, header, frags, names), Components: make([]Fragment, len(names))}
	if err := checkSnapshotLength(len(b.Snapshot)); err != nil {
		return Batch{}, err
	}
	for i, name := range names {
		b.Components[i] = Fragment{Name: name, Data: frags[name]}
	}
	return b, nil
}

// encodeHeader renders the stack-level fields (everything but components).
func encodeHeader(s *State) ([]byte, error) {
	var e encoder
	e.field(0, "version")
	e.int(s.Version)
	e.field(0, "stack")
	e.str(s.Stack)
	e.optStr(0, "status", s.Status)
	e.optStr(0, "deploymentId", s.DeploymentID)
	e.optStr(0, "lastRun", s.LastRun)
	e.optTime(0, "updated", s.Updated)
	e.strMap(0, "parameters", s.Parameters)
	e.strMap(0, "outputs", s.Outputs)
	e.strList(0, "secretOutputs", s.SecretOutputs)
	e.strList(0, "secretParameters", s.SecretParameters)
	if len(s.Provides) > 0 {
		e.key(0, "provides")
		e.newline()
		for _, k := range slices.Sorted(maps.Keys(s.Provides)) {
			e.indent(2)
			e.str(k)
			e.byte(':')
			e.list(4, s.Provides[k])
		}
	}
	e.newline()
	if e.err != nil {
		return nil, fmt.Errorf("encode state: %w", e.err)
	}
	return e.buf, nil
}

// encodeComponent renders one component's entry under components:, indented
// for its place in the document.
func encodeComponent(name string, c *Component) ([]byte, error) {
	var e encoder
	e.buf = make([]byte, 0, 512)
	e.indent(2)
	e.buf = strconv.AppendQuote(e.buf, name)
	e.byte(':')
	e.newline()
	const in = 4
	e.field(in, "status")
	e.str(c.Status)
	e.optStr(in, "reason", c.Reason)
	e.optStr(in, "verb", c.Verb)
	e.optTime(in, "started", c.Started)
	e.optTime(in, "finished", c.Finished)
	e.optStr(in, "lastRun", c.LastRun)
	e.field(in, "order")
	e.int(c.Order)
	e.optStr(in, "dir", c.Dir)
	e.strList(in, "depends", c.Depends)
	if len(c.Parameters) > 0 {
		e.key(in, "parameters")
		e.newline()
		for _, p := range c.Parameters {
			e.indent(in + 2)
			e.buf = append(e.buf, "- name: "...)
			e.str(p.Name)
			e.field(in+4, "value")
			e.str(p.Value)
			e.optStr(in+4, "env", p.Env)
			if p.Secret {
				e.field(in+4, "secret")
				e.buf = append(e.buf, "true"...)
			}
		}
	}
	e.strMap(in, "outputs", c.Outputs)
	e.strList(in, "secretOutputs", c.SecretOutputs)
	e.strList(in, "provides", c.Provides)
	e.optStr(in, "fingerprint", c.Fingerprint)
	e.inputs(in, c.Inputs)
	e.optStr(in, "specVersion", c.SpecVersion)
	e.plugins(in, "plugins", c.Plugins)
	e.plugins(in, "setupPlugins", c.SetupPlugins)
	e.newline()
	if e.err != nil {
		return nil, fmt.Errorf("encode state of %s: %w", name, e.err)
	}
	return e.buf, nil
}

// inputs writes what a fingerprint was made of; verb is always written, so
// that goccy never reads an empty mapping back as nil.
func (e *encoder) inputs(in int, i *Inputs) {
	if i == nil {
		return
	}
	e.key(in, "inputs")
	e.field(in+2, "verb")
	e.str(i.Verb)
	e.strMap(in+2, "outputs", i.Outputs)
	e.strMap(in+2, "files", i.Files)
	e.optStr(in+2, "lifecycle", i.Lifecycle)
	e.strMap(in+2, "reads", i.Reads)
}

// plugins writes a recorded plugin list, children nested.
func (e *encoder) plugins(in int, name string, list []PluginInstance) {
	if len(list) == 0 {
		return
	}
	e.key(in, name)
	for _, p := range list {
		e.indent(in + 2)
		e.buf = append(e.buf, "- name: "...)
		e.str(p.Name)
		e.optStr(in+4, "key", p.Key)
		e.optStr(in+4, "path", p.Path)
		e.strList(in+4, "args", p.Args)
		if p.Config != nil {
			e.key(in+4, "config")
			e.value(in+6, p.Config)
		}
		if p.Hidden {
			e.field(in+4, "hidden")
			e.buf = append(e.buf, "true"...)
		}
		e.optStr(in+4, "label", p.Label)
		e.strList(in+4, "onFail", p.OnFail)
		e.plugins(in+4, "children", p.Children)
		e.resources(in+4, p.Resources)
		e.optStr(in+4, "cluster", p.Cluster)
	}
}

// resources writes the objects a plugin instance created.
func (e *encoder) resources(in int, list []Resource) {
	if len(list) == 0 {
		return
	}
	e.key(in, "resources")
	for _, r := range list {
		e.indent(in + 2)
		e.buf = append(e.buf, "- apiVersion: "...)
		e.str(r.APIVersion)
		e.field(in+4, "kind")
		e.str(r.Kind)
		e.optStr(in+4, "namespace", r.Namespace)
		e.field(in+4, "name")
		e.str(r.Name)
		if r.Weight != 0 {
			e.field(in+4, "weight")
			e.int(r.Weight)
		}
		if r.CRD {
			e.field(in+4, "crd")
			e.buf = append(e.buf, "true"...)
		}
		if r.Keep {
			e.field(in+4, "keep")
			e.buf = append(e.buf, "true"...)
		}
		if r.Adopted {
			e.field(in+4, "adopted")
			e.buf = append(e.buf, "true"...)
		}
		if r.Pending {
			e.field(in+4, "pending")
			e.buf = append(e.buf, "true"...)
		}
	}
}

// Assemble joins a state's stack-level fields and its components' records
// (names sorted) into the state document, as a backend that keeps them
// apart reads them back.
func Assemble(header []byte, frags map[string][]byte, names []string) []byte {
	return assemble(nil, header, frags, names)
}

// assemble joins the header and the components' fragments in name order,
// into buf when it is large enough.
func assemble(buf, header []byte, frags map[string][]byte, names []string) []byte {
	size := len(header) + 16
	for _, f := range frags {
		size += len(f)
	}
	out := buf[:0]
	if cap(out) < size {
		out = make([]byte, 0, size+size/8)
	}
	out = append(out, header...)
	if len(names) > 0 {
		out = append(out, "components:\n"...)
		for _, n := range names {
			out = append(out, frags[n]...)
		}
	}
	return out
}

// encoder appends YAML to buf. Every field starts on a new line: field and
// key end the previous line first, so values are written right after them.
type encoder struct {
	buf []byte
	err error
}

func (e *encoder) byte(b byte) { e.buf = append(e.buf, b) }

func (e *encoder) newline() {
	if n := len(e.buf); n > 0 && e.buf[n-1] != '\n' {
		e.buf = append(e.buf, '\n')
	}
}

func (e *encoder) indent(n int) {
	e.newline()
	for range n {
		e.buf = append(e.buf, ' ')
	}
}

// key writes "name:" on a line of its own at the given indent.
func (e *encoder) key(in int, name string) {
	e.indent(in)
	e.buf = append(e.buf, name...)
	e.buf = append(e.buf, ':')
}

// field writes "name: " for a scalar value to follow.
func (e *encoder) field(in int, name string) {
	e.key(in, name)
	e.buf = append(e.buf, ' ')
}

func (e *encoder) int(v int) { e.buf = strconv.AppendInt(e.buf, int64(v), 10) }

func (e *encoder) str(s string) {
	if plainSafe(s) {
		e.buf = append(e.buf, s...)
		return
	}
	e.buf = strconv.AppendQuote(e.buf, s)
}

func (e *encoder) optStr(in int, name, v string) {
	if v != "" {
		e.field(in, name)
		e.str(v)
	}
}

func (e *encoder) optTime(in int, name string, t time.Time) {
	if !t.IsZero() {
		e.field(in, name)
		e.buf = t.AppendFormat(e.buf, time.RFC3339Nano)
	}
}

func (e *encoder) strMap(in int, name string, m map[string]string) {
	if len(m) == 0 {
		return
	}
	e.key(in, name)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		e.indent(in + 2)
		e.str(k)
		e.buf = append(e.buf, ": "...)
		e.str(m[k])
	}
}

func (e *encoder) strList(in int, name string, l []string) {
	if len(l) == 0 {
		return
	}
	e.key(in, name)
	e.list(in+2, l)
}

// list writes the items of a sequence, each on its own line.
func (e *encoder) list(in int, l []string) {
	for _, v := range l {
		e.indent(in)
		e.buf = append(e.buf, "- "...)
		e.str(v)
	}
}

// value writes an arbitrary value (plugin configs) after its key: scalars on
// the same line, mappings and sequences as indented blocks.
func (e *encoder) value(in int, v any) {
	switch v := v.(type) {
	case nil:
		e.buf = append(e.buf, " null"...)
	case string:
		e.byte(' ')
		e.str(v)
	case bool:
		e.buf = strconv.AppendBool(append(e.buf, ' '), v)
	case int:
		e.buf = strconv.AppendInt(append(e.buf, ' '), int64(v), 10)
	case int64:
		e.buf = strconv.AppendInt(append(e.buf, ' '), v, 10)
	case uint64:
		e.buf = strconv.AppendUint(append(e.buf, ' '), v, 10)
	case float64:
		e.byte(' ')
		e.float(v)
	case map[string]any:
		if len(v) == 0 {
			e.buf = append(e.buf, " {}"...)
			return
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			e.indent(in)
			e.str(k)
			e.byte(':')
			e.value(in+2, v[k])
		}
	case []any:
		if len(v) == 0 {
			e.buf = append(e.buf, " []"...)
			return
		}
		for _, item := range v {
			e.indent(in)
			e.byte('-')
			e.value(in+2, item)
		}
	default:
		// Any other shape (a typed struct or map) is written as JSON, which
		// is YAML too.
		b, err := json.Marshal(v)
		if err != nil {
			e.err = fmt.Errorf("plugin config: %w", err)
			return
		}
		e.byte(' ')
		e.buf = append(e.buf, b...)
	}
}

func (e *encoder) float(f float64) {
	switch {
	case math.IsNaN(f):
		e.buf = append(e.buf, ".nan"...)
	case math.IsInf(f, 1):
		e.buf = append(e.buf, ".inf"...)
	case math.IsInf(f, -1):
		e.buf = append(e.buf, "-.inf"...)
	default:
		s := strconv.FormatFloat(f, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") {
			s += ".0" // stays a float when read back
		}
		e.buf = append(e.buf, s...)
	}
}

// plainSafe reports whether s can be written without quotes and read back as
// the same string: not empty, not a word YAML reads as a boolean or null,
// not starting like a number or an indicator, no ": " or " #", no control or
// unprintable characters, no surrounding spaces.
func plainSafe(s string) bool {
	if s == "" {
		return false
	}
	switch c := s[0]; {
	case c >= '0' && c <= '9', strings.IndexByte("-+.?:,[]{}#&*!|>'\"%@`<=~ ", c) >= 0:
		return false
	}
	if s[len(s)-1] == ' ' || s[len(s)-1] == ':' || strings.Contains(s, "<<") { // goccy reads << anywhere as a merge key
		return false
	}
	if len(s) <= 5 {
		switch strings.ToLower(s) {
		case "true", "false", "yes", "no", "on", "off", "y", "n", "null":
			return false
		}
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			if (c == ':' || c == ' ') && i+1 < len(s) && (c == ':' && s[i+1] == ' ' || c == ' ' && s[i+1] == '#') {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || !unicode.IsPrint(r) || r == '\ufeff' {
			return false
		}
		i += size
	}
	return true
}
