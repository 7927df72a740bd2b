package elaborate

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
)

// configValue is one concrete config value of a stack instance and where it
// came from (for messages and gantry params).
type configValue struct {
	text string // as ${config.…} substitutes it: scalars as written, lists and maps as JSON
	pos  manifest.Pos
	// from names the level whose value won: "default of NAME", "given by
	// NAME" (the stack whose component passed it) or "given at the top".
	from string
}

// givenConfig are the values passed to a stack instance: by the component
// that references it, or at the top by params files. Later entries of a
// section win (params files in command-line order).
type givenConfig struct {
	parameter  map[string]givenValue
	resource   map[string]givenValue
	scale      map[string]*manifest.RoleScale
	resilience *givenValue
}

// givenValue is a value as passed, expressions already evaluated over the
// enclosing stack's config.
type givenValue struct {
	node *manifest.Node
	text string // the expanded text when node held an expression
	expr bool
	// failed is set when the expression could not be evaluated (said
	// already): the field has no value, rather than the expression's text.
	failed bool
	pos    manifest.Pos
	by     string // the stack that passed it; "" at the top
	// origin is where the value came from when it only passes on one of
	// the enclosing level's ("${config.parameter.x}"): that level's value
	// or default won, not the passing.
	origin *configValue
}

// givenFrom says who gave a value, for gantry params.
func (v givenValue) givenFrom() string {
	if v.by == "" {
		return "given at the top"
	}
	return "given by " + v.by
}

// levelConfig is the concrete config of one stack instance after spread.
type levelConfig struct {
	owner      string                 // the stack's meta.name, for messages
	values     map[string]configValue // "config.parameter.port" → value
	hsize      map[string]int         // by role
	detail     map[string]map[string]*manifest.RoleScale
	resilience int
	// unset are the fields declared without a default that no level gave,
	// true for an optional one: a reference to one says so rather than
	// "unknown", and one to a missing required field is not reported again.
	unset map[string]bool
	// resources are the registered resources the resource fields name, by
	// field ("config.resource.cert"); a leaf reads one's value with
	// ${config.resource.cert.value}.
	resources map[string]manifest.Resource
	// budget is the elaboration's, shared by every level: what the
	// configs' substitutions and expressions write and cost in all is
	// bounded, not only each value (a few kilobytes of nested stacks
	// that each double a value reached gigabytes).
	budget *params.Budget
}

// Budget is the budget the expansions over the config are charged to
// (params.Budgeted).
func (c *levelConfig) Budget() *params.Budget { return c.budget }

// errReported stands for a problem already reported (a required field
// without a value), so that one mistake gives one message.
var errReported = errors.New("reported")

// resourceValueSuffix ends a reference to a resource field's registered
// value rather than its name.
const resourceValueSuffix = ".value"

// Lookup resolves ${config.…} for params.Expand.
func (c *levelConfig) Lookup(name string) (string, error) {
	if v, ok := c.values[name]; ok {
		return v.text, nil
	}
	if !strings.HasPrefix(name, "config.") {
		return "", &params.UnknownError{Name: name, Hint: "config values read only the enclosing stack's config (${config.…})"}
	}
	field, isValue := strings.CutSuffix(name, resourceValueSuffix)
	if !isValue || !strings.HasPrefix(field, "config.resource.") {
		field = name
	}
	if optional, ok := c.unset[field]; ok {
		if !optional {
			return "", errReported
		}
		return "", fmt.Errorf("%s is optional, not given: %s declares it without a default and no level passed a value (give it a default, or pass it where %[2]s is used)", field, c.owner)
	}
	if isValue && field != name {
		if _, ok := c.values[field]; ok {
			// A value would reach the text it is substituted into, and a
			// secret one would show there: only a leaf's parameter reads
			// it, as a reference the lock resolves and masks.
			return "", fmt.Errorf("a resource's value is read only by a ${%s} reference in a leaf's parameter (not in #{…} nor in a config value passed down)", name)
		}
	}
	// A prefix that is a field (a map or list) lets an expression try it.
	for p := name; ; {
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			break
		}
		p = p[:i]
		if _, ok := c.values[p]; ok {
			return "", &params.UnknownError{Name: name}
		}
	}
	// Suggest by the last segment among the fields of the same section:
	// whole names share too long a prefix to tell anything apart.
	section, last := "", name
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		section, last = name[:i+1], name[i+1:]
	}
	var known []string
	for _, m := range []map[string]bool{keys(c.values), c.unset} {
		for k := range m {
			if rest, ok := strings.CutPrefix(k, section); ok && !strings.Contains(rest, ".") {
				known = append(known, rest)
			}
		}
	}
	msg := fmt.Sprintf("%s has no field %s", c.owner, strings.TrimPrefix(name, "config."))
	if s := manifest.Suggest(last, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", "${"+section+s+"}")
	}
	// Not an UnknownError: an expression stops at this message rather than
	// trying the name's prefixes, which are sections, not fields.
	return "", errors.New(msg)
}

// Output refuses ${component:output}: config is data known before anything runs.
func (c *levelConfig) Output(component, name string) (string, error) {
	return "", fmt.Errorf("config values cannot read outputs (${%s:%s})", component, name)
}

// readGiven reads a config mapping as passed (a component's config: or a
// params file's), expanding expressions over enclosing (nil at the top,
// where values must be data). path is the full path of the mapping.
// by names the stack whose component passes the values ("" at the top).
func readGiven(n *manifest.Node, into *givenConfig, enclosing *levelConfig, by, path string, diags *manifest.Diagnostics) {
	if n == nil || n.Kind == manifest.NullNode {
		return
	}
	if n.Kind != manifest.MapNode {
		diags.Errorf(n.Pos, path, "expected a mapping of parameter, resource, scale, resilience, got %s", n.Describe())
		return
	}
	sections := []string{"parameter", "resource", "scale", "resilience"}
	for _, e := range n.Entries {
		p := path + "." + e.Key
		switch e.Key {
		case "parameter", "resource":
			m := &into.parameter
			if e.Key == "resource" {
				m = &into.resource
			}
			if e.Value.Kind == manifest.NullNode {
				continue
			}
			if e.Value.Kind != manifest.MapNode {
				diags.Errorf(e.Value.Pos, p, "expected a mapping of field names to values, got %s", e.Value.Describe())
				continue
			}
			if *m == nil {
				*m = map[string]givenValue{}
			}
			for _, f := range e.Value.Entries {
				(*m)[f.Key] = readValue(f.Value, enclosing, by, p+"."+f.Key, diags)
			}
		case "scale":
			var sc map[string]*manifest.RoleScale
			manifest.DecodeInto(e.Value, &sc, p, diags)
			markGiven(sc, givenValue{by: by}.givenFrom())
			if into.scale == nil {
				into.scale = map[string]*manifest.RoleScale{}
			}
			for role, rs := range sc {
				into.scale[role] = mergeScale(into.scale[role], rs)
			}
		case "resilience":
			v := readValue(e.Value, enclosing, by, p, diags)
			into.resilience = &v
		default:
			msg := fmt.Sprintf("unknown field %q", e.Key)
			if s := manifest.Suggest(e.Key, sections); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else {
				msg += " (expected one of parameter, resource, scale, resilience)"
			}
			diags.Errorf(e.KeyPos, p, "%s", msg)
		}
	}
}

// mergeScale lays over on base: what over sets wins, recursively through
// detail (over is the outer level).
func mergeScale(base, over *manifest.RoleScale) *manifest.RoleScale {
	if base == nil {
		return over
	}
	if over == nil {
		return base
	}
	out := *base
	if over.HSize != nil {
		// The position and the giver go with the hsize, for gantry params.
		out.HSize, out.Pos, out.By = over.HSize, over.Pos, over.By
	}
	if len(over.Detail) > 0 {
		out.Detail = map[string]*manifest.RoleScale{}
		for k, v := range base.Detail {
			out.Detail[k] = v
		}
		for k, v := range over.Detail {
			out.Detail[k] = mergeScale(out.Detail[k], v)
		}
	}
	return &out
}

// markGiven records who gave the scales of sc, through their details.
func markGiven(sc map[string]*manifest.RoleScale, by string) {
	for _, rs := range sc {
		if rs != nil {
			rs.By = by
			markGiven(rs.Detail, by)
		}
	}
}

// readValue evaluates a passed value: a string with ${…} or #{…} is
// expanded over the enclosing stack's config.
func readValue(n *manifest.Node, enclosing *levelConfig, by, path string, diags *manifest.Diagnostics) givenValue {
	v := givenValue{node: n, pos: n.Pos, by: by}
	if n.Kind != manifest.ScalarNode || n.Type != manifest.StringScalar || !strings.ContainsAny(n.Value, "$#") {
		return v
	}
	t, err := params.Parse(n.Value)
	if err != nil || t.IsLiteral() {
		if err != nil {
			diags.Errorf(n.Pos, path, "%v", err)
			v.failed = true
		}
		return v
	}
	if enclosing == nil {
		diags.Errorf(n.Pos, path, "a config value at the top must be data, got the expression %q", n.Value)
		v.failed = true
		return v
	}
	s, err := t.Eval(enclosing)
	if err != nil {
		if !errors.Is(err, errReported) {
			diags.Errorf(n.Pos, path, "%v", err)
		}
		v.failed = true
		return v
	}
	v.text, v.expr = s, true
	if len(t.Parts) == 1 {
		if p := t.Parts[0]; p.Kind == params.Ref && p.Component == "" && len(p.Encodings) == 0 {
			if o, ok := enclosing.values[p.Name]; ok {
				v.origin = &o
			}
		}
	}
	return v
}

// checkType checks a passed value against a field's type and returns its
// text for substitution.
func checkType(v givenValue, typ, path string, diags *manifest.Diagnostics) (string, bool) {
	if v.failed {
		return "", false // said where it failed
	}
	n := v.node
	if v.expr {
		// An expression's result is text: it must read as the type.
		ok := true
		switch typ {
		case "number":
			_, err := strconv.ParseFloat(v.text, 64)
			ok = err == nil
		case "bool":
			ok = v.text == "true" || v.text == "false"
		case "list", "map":
			var x any
			ok = json.Unmarshal([]byte(v.text), &x) == nil
		}
		if !ok {
			diags.Errorf(v.pos, path, "expected a %s, got %q", typ, v.text)
		}
		return v.text, ok
	}
	ok := false
	switch typ {
	case "string":
		ok = n.Kind == manifest.ScalarNode && n.Type == manifest.StringScalar
	case "number":
		ok = n.Kind == manifest.ScalarNode && (n.Type == manifest.IntScalar || n.Type == manifest.FloatScalar)
	case "bool":
		ok = n.Kind == manifest.ScalarNode && n.Type == manifest.BoolScalar
	case "list":
		ok = n.Kind == manifest.SeqNode
	case "map":
		ok = n.Kind == manifest.MapNode
	default: // a resource type: the name of a registered resource
		ok = n.Kind == manifest.ScalarNode && n.Type == manifest.StringScalar && n.Value != ""
		if !ok {
			diags.Errorf(n.Pos, path, "expected the name of a registered %s resource, got %s", typ, n.Describe())
			return "", false
		}
	}
	if !ok {
		diags.Errorf(n.Pos, path, "expected a %s, got %s", typ, n.Describe())
		return "", false
	}
	return nodeText(n), true
}

// nodeText is a value as ${config.…} substitutes it.
func nodeText(n *manifest.Node) string {
	if n.Kind == manifest.ScalarNode {
		return n.Value
	}
	b, err := json.Marshal(n.Interface())
	if err != nil {
		return ""
	}
	return string(b)
}

// validParameterType reports whether typ is a type of config parameters.
func validParameterType(typ string) bool {
	for _, t := range manifest.ParameterTypes {
		if t == typ {
			return true
		}
	}
	return false
}

// keys is the set of a map's keys.
func keys[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}
