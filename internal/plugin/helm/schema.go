package helm

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"helm.sh/helm/v4/pkg/chart/common"
	cutil "helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// valuePath is where a value is in the values, key by key (a list's items by
// their index).
type valuePath []string

// within reports whether p is at or below one of the paths.
func within(p valuePath, paths []valuePath) bool {
	for _, q := range paths {
		if len(q) <= len(p) && slices.Equal(p[:len(q)], q) {
			return true
		}
	}
	return false
}

// below are the paths of paths below p, relative to p; a path at or above
// p is the whole of p ([]).
func below(paths []valuePath, p string) []valuePath {
	var out []valuePath
	for _, q := range paths {
		switch {
		case len(q) == 0:
			return []valuePath{{}}
		case q[0] == p:
			out = append(out, q[1:])
		}
	}
	return out
}

// ofDependency are the unknown paths of a dependency's values, relative
// to them: those below its name (its alias, once
// chartutil.ProcessDependencies has named it so), and the global values,
// which Helm copies into every dependency's global (a dependency's own
// global values give way to its parent's). import-values copies only the
// charts' own values, never the given ones, so it brings no unknown value.
func ofDependency(unknown []valuePath, name string) []valuePath {
	out := below(unknown, name)
	for _, q := range unknown {
		if len(q) > 0 && q[0] == common.GlobalKey {
			out = append(out, q)
		}
	}
	return out
}

// checkSchema checks the plan's values against the chart's values schema
// and its dependencies', as Helm does (cutil.ValidateAgainstSchema: each
// chart's schema over its values, a dependency's under its name), but
// leaves out what depends on unknown values: those holding a reference or
// read from a template not rendered yet, which are text until the run,
// where prepare checks them all. A value known for sure that breaks the
// schema is reported at plan time, whatever other values hold. The plan
// fetches no schema a chart's schema refers to by URL (remoteSchemas).
func checkSchema(ch *chart.Chart, values map[string]any, unknown []valuePath) error {
	var b strings.Builder
	if err := checkCharts(ch, values, unknown, &b); err != nil {
		return err
	}
	if b.Len() > 0 {
		return fmt.Errorf("values don't meet the specifications of the schema(s) in the following chart(s):\n%s", b.String())
	}
	return nil
}

func checkCharts(ch *chart.Chart, values map[string]any, unknown []valuePath, b *strings.Builder) error {
	if within(valuePath{}, unknown) {
		return nil
	}
	if ch.Schema != nil {
		if err := checkChart(ch, values, unknown, b); err != nil {
			return err
		}
	}
	for _, sub := range ch.Dependencies() {
		raw, ok := values[sub.Name()]
		if !ok || raw == nil {
			continue
		}
		subValues, ok := raw.(map[string]any)
		if !ok {
			if !within(valuePath{sub.Name()}, unknown) {
				fmt.Fprintf(b, "%s:\ninvalid type for values: expected object (map), got %T\n", sub.Name(), raw)
			}
			continue
		}
		if err := checkCharts(sub, subValues, ofDependency(unknown, sub.Name()), b); err != nil {
			return err
		}
	}
	return nil
}

// checkChart checks values against one chart's schema, writing to b the
// errors that stand. A panic of the schema library is an error, as in
// Helm's own check (cutil.ValidateAgainstSingleSchema).
func checkChart(ch *chart.Chart, values map[string]any, unknown []valuePath, b *strings.Builder) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s: unable to validate schema: %v", ch.Name(), r)
		}
	}()
	sch, remote, err := compileSchema(ch.Schema)
	if len(remote) > 0 {
		slog.Debug("the plan does not fetch the schemas a values schema refers to by URL: prepare checks what they say",
			"chart", ch.Name(), "urls", remote)
	}
	switch {
	case err != nil && len(remote) > 0:
		// The stand-ins may not fit where the schema uses them; Helm's
		// own check in prepare has the real schemas.
		slog.Debug("values schema not checked at plan time", "chart", ch.Name(), "error", err)
		return nil
	case err != nil:
		return fmt.Errorf("%s: values schema: %w", ch.Name(), err)
	}
	if err := sch.Validate(values); err != nil {
		ve, ok := err.(*jsonschema.ValidationError)
		if !ok {
			return fmt.Errorf("%s: %w", ch.Name(), err)
		}
		if ve = (lenience{unknown: unknown, standIns: len(remote) > 0}).known(ve, false); ve != nil {
			fmt.Fprintf(b, "%s:\n%s\n", ch.Name(), strings.TrimPrefix(ve.Error(), "jsonschema validation failed with 'file:///values.schema.json#'\n"))
		}
	}
	return nil
}

// compileSchema compiles a chart's values schema as Helm does, with
// references to files and URNs (Helm's URNResolver, else any value), but
// fetches no schema it refers to by http(s) URL: a stand-in that any value
// meets takes its place (remoteSchemas), and remote lists the URLs.
func compileSchema(data []byte) (sch *jsonschema.Schema, remote []string, err error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, nil, err
	}
	web := &remoteSchemas{standIn: standIn(doc)}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{"file": jsonschema.FileLoader{}, "http": web, "https": web, "urn": urnSchemas{}})
	if err := c.AddResource("file:///values.schema.json", doc); err != nil {
		return nil, nil, err
	}
	sch, err = c.Compile("file:///values.schema.json")
	return sch, web.urls, err
}

// remoteSchemas stands in for the schemas a chart's schema refers to by
// URL: a plan runs with what is on the machine, and one that waits on a
// web server, or fails without one, is no plan. Helm fetches them when it
// checks the values, in prepare.
type remoteSchemas struct {
	standIn any
	urls    []string
}

func (l *remoteSchemas) Load(u string) (any, error) {
	l.urls = append(l.urls, u)
	return l.standIn, nil
}

// standIn is a document that has, at every JSON pointer a reference in doc
// names (#/definitions/x), a schema any value meets, and every plain-name
// anchor (#x) a reference names: it stands in for any schema doc refers
// to.
func standIn(doc any) map[string]any {
	out := map[string]any{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				addStandIn(out, ref)
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(doc)
	return out
}

// addStandIn adds to a stand-in document what a reference's fragment
// names.
func addStandIn(doc map[string]any, ref string) {
	u, err := url.Parse(ref)
	if err != nil || u.Fragment == "" {
		return
	}
	if !strings.HasPrefix(u.Fragment, "/") {
		defs, _ := doc["$defs"].(map[string]any)
		if defs == nil {
			defs = map[string]any{}
			doc["$defs"] = defs
		}
		defs[u.Fragment] = map[string]any{"$anchor": u.Fragment}
		return
	}
	unescape := strings.NewReplacer("~1", "/", "~0", "~")
	at := doc
	tokens := strings.Split(u.Fragment[1:], "/")
	for i, tok := range tokens {
		tok = unescape.Replace(tok)
		if i == len(tokens)-1 {
			if _, ok := at[tok]; !ok {
				at[tok] = true
			}
			return
		}
		next, ok := at[tok].(map[string]any)
		if !ok {
			next = map[string]any{}
			at[tok] = next
		}
		at = next
	}
}

// urnSchemas resolves urn: references as Helm does: through its
// URNResolver, else to a schema any value meets.
type urnSchemas struct{}

func (urnSchemas) Load(urn string) (any, error) {
	if doc, err := cutil.URNResolver(urn); err == nil && doc != nil {
		return doc, nil
	}
	return true, nil
}

// lenience is what the plan does not know of a chart's values and schema:
// the unknown values, and whether stand-ins took the place of remote
// schemas (remoteSchemas).
type lenience struct {
	unknown  []valuePath
	standIns bool
}

// known is what of a schema error stands whatever the unknown values (and
// remote schemas) turn out to be: nil when nothing does. An error about an
// unknown value or a value below one goes; so does one about a value above
// unknown ones that their content could change (enum, const, not, a oneOf
// that matched twice...), but not one about its shape (type, required,
// additional properties, sizes). anyOf and oneOf fail only if no
// alternative can pass: when an alternative's errors all go, the error
// goes. conditional is set below a then or else: the if chose it, perhaps
// on unknown values, so its errors go when any value is unknown. A
// stand-in meets any value where the real schema may not: the errors it
// can bring about (not, a oneOf that matched twice, maxContains, a then or
// else its if chose) go.
func (l lenience) known(e *jsonschema.ValidationError, conditional bool) *jsonschema.ValidationError {
	at := valuePath(e.InstanceLocation)
	if within(at, l.unknown) {
		return nil
	}
	conditional = conditional || underCondition(e.SchemaURL)
	if len(e.Causes) == 0 {
		if conditional && (len(l.unknown) > 0 || l.standIns) || l.standIns && byStandIn(e.ErrorKind) ||
			!shapeOnly(e.ErrorKind) && above(at, l.unknown) {
			return nil
		}
		return e
	}
	var causes []*jsonschema.ValidationError
	for _, c := range e.Causes {
		k := l.known(c, conditional)
		switch e.ErrorKind.(type) {
		case *kind.AnyOf, *kind.OneOf:
			if k == nil {
				return nil // this alternative may pass
			}
		}
		if k != nil {
			causes = append(causes, k)
		}
	}
	if len(causes) == 0 {
		return nil
	}
	out := *e
	out.Causes = causes
	return &out
}

// byStandIn reports whether an error of the kind may come of a subschema
// that any value meets.
func byStandIn(k jsonschema.ErrorKind) bool {
	switch k.(type) {
	case *kind.Not, *kind.OneOf, *kind.MaxContains:
		return true
	}
	return false
}

// above reports whether an unknown value is below p.
func above(p valuePath, unknown []valuePath) bool {
	for _, q := range unknown {
		if len(q) > len(p) && slices.Equal(q[:len(p)], p) {
			return true
		}
	}
	return false
}

// shapeOnly reports whether an error of the kind depends only on a
// value's type and keys or length, not on the values below it.
func shapeOnly(k jsonschema.ErrorKind) bool {
	switch k.(type) {
	case *kind.Type, *kind.Required, *kind.AdditionalProperties, *kind.PropertyNames, *kind.DependentRequired,
		*kind.MinProperties, *kind.MaxProperties, *kind.MinItems, *kind.MaxItems:
		return true
	}
	return false
}

// underCondition reports whether a schema location is in a then or else.
func underCondition(schemaURL string) bool {
	_, frag, _ := strings.Cut(schemaURL, "#")
	for _, kw := range strings.Split(frag, "/") {
		if kw == "then" || kw == "else" {
			return true
		}
	}
	return false
}
