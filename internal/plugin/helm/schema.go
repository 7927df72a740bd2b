package helm

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

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
// schema is reported at plan time, whatever other values hold.
func checkSchema(ctx context.Context, ch *chart.Chart, values map[string]any, unknown []valuePath) error {
	var b strings.Builder
	if err := checkCharts(ctx, ch, values, unknown, &b); err != nil {
		return err
	}
	if b.Len() > 0 {
		return fmt.Errorf("values don't meet the specifications of the schema(s) in the following chart(s):\n%s", b.String())
	}
	return nil
}

func checkCharts(ctx context.Context, ch *chart.Chart, values map[string]any, unknown []valuePath, b *strings.Builder) error {
	if within(valuePath{}, unknown) {
		return nil
	}
	if ch.Schema != nil {
		sch, err := compileSchema(ctx, ch.Schema)
		if err != nil {
			return fmt.Errorf("%s: values schema: %w", ch.Name(), err)
		}
		if err := sch.Validate(values); err != nil {
			ve, ok := err.(*jsonschema.ValidationError)
			if !ok {
				return fmt.Errorf("%s: %w", ch.Name(), err)
			}
			if ve = known(ve, unknown, false); ve != nil {
				fmt.Fprintf(b, "%s:\n%s\n", ch.Name(), strings.TrimPrefix(ve.Error(), "jsonschema validation failed with 'file:///values.schema.json#'\n"))
			}
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
		if err := checkCharts(ctx, sub, subValues, ofDependency(unknown, sub.Name()), b); err != nil {
			return err
		}
	}
	return nil
}

// compileSchema compiles a chart's values schema as Helm does: references
// to files, http(s) URLs and URNs (Helm's URNResolver, else any value).
func compileSchema(ctx context.Context, data []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	web := webSchemas{ctx: ctx}
	c := jsonschema.NewCompiler()
	c.UseLoader(jsonschema.SchemeURLLoader{"file": jsonschema.FileLoader{}, "http": web, "https": web, "urn": urnSchemas{}})
	if err := c.AddResource("file:///values.schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("file:///values.schema.json")
}

// webSchemas loads the schemas a chart's schema refers to by URL.
type webSchemas struct{ ctx context.Context }

func (l webSchemas) Load(url string) (any, error) {
	ctx, cancel := context.WithTimeout(l.ctx, 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return jsonschema.UnmarshalJSON(resp.Body)
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

// known is what of a schema error stands whatever the unknown values turn
// out to be: nil when nothing does. An error about an unknown value or a
// value below one goes; so does one about a value above unknown ones that
// their content could change (enum, const, not, a oneOf that matched
// twice...), but not one about its shape (type, required, additional
// properties, sizes). anyOf and oneOf fail only if no alternative can
// pass: when an alternative's errors all go, the error goes. conditional
// is set below a then or else: the if chose it, perhaps on unknown values,
// so its errors go when any value is unknown.
func known(e *jsonschema.ValidationError, unknown []valuePath, conditional bool) *jsonschema.ValidationError {
	at := valuePath(e.InstanceLocation)
	if within(at, unknown) {
		return nil
	}
	conditional = conditional || underCondition(e.SchemaURL)
	if len(e.Causes) == 0 {
		if conditional && len(unknown) > 0 || !shapeOnly(e.ErrorKind) && above(at, unknown) {
			return nil
		}
		return e
	}
	var causes []*jsonschema.ValidationError
	for _, c := range e.Causes {
		k := known(c, unknown, conditional)
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
