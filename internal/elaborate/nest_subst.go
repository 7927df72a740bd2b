package elaborate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
)

// substitute replaces the ${config.…} references and the #{…} expressions
// over config alone in a parameter's value and default with the level's
// concrete config, leaving every other reference for the lock. A reference
// to a config field the level does not have is an error: when the config is
// concrete, everything that reads it must be (seed 003 rule 1). It returns
// what the value read, for gantry params (nil when it read no config).
func (n *nester) substitute(p *manifest.Parameter, cfg *levelConfig, field string) *spreadRead {
	var read *spreadRead
	for i, v := range []*manifest.Scalar{&p.Value, &p.Default} {
		var used []configRef
		out, ok := n.substituteConfig(string(*v), cfg, p.Pos, field+"."+p.Name, &used)
		if !ok {
			continue
		}
		*v = manifest.Scalar(out)
		if read == nil {
			read = &spreadRead{def: p.Pos.FileLine()}
		}
		if i == 0 {
			read.value = used
		} else {
			read.dflt = used
		}
	}
	return read
}

// localize gives the components a nested stack's parameter names by their
// local names (${leaf:out}, ${inner.leaf:out}, ${msg|leaf}, and in #{…}
// outputs["leaf"] and params["msg|leaf"]) their path in the solution
// (prefix+name), so that the stack reads its own components wherever it is
// nested. A qualifier whose first part is not a component or nested stack
// of s keeps its meaning. A read of outputs or params that cannot be
// renamed (outputs[c], dyn(outputs)) is an error: left as written, it would
// read the top stack's component of the name, silently, beside reads that
// mean the stack's own. field is the parameter's path (shop.web.parameters.NAME).
func (n *nester) localize(p *manifest.Parameter, s *manifest.Stack, prefix, field string) {
	local := func(q string) (string, bool) {
		role, _, _ := strings.Cut(q, ".")
		for _, c := range s.Components {
			if c.Name == role {
				return prefix + q, true
			}
		}
		return "", false
	}
	for _, v := range []*manifest.Scalar{&p.Value, &p.Default} {
		out, ok, unscoped := params.RenameComponents(string(*v), local)
		if ok {
			*v = manifest.Scalar(out)
		}
		for _, u := range unscoped {
			n.diags.Errorf(p.Pos, field, "#{%s}: %s: %s; a nested stack names its own components literally (outputs[\"leaf\"].out, outputs.leaf.out, params[\"msg|leaf\"]) so that elaborate gives them their path in the solution, and read any other way a name means the top stack's component: write the name literally", u.Expr, u.Read, u.Why)
		}
	}
}

// configRef is one config field a value read, with where its value came
// from.
type configRef struct {
	name  string // "config.parameter.port"
	value configValue
	whole bool // the reference was the whole value
}

// substituteConfig is substitute for one value; ok is false when it has no
// config references. A reference that cannot be resolved is reported here,
// once, and left in the value as literal text, so that the lock (which
// knows no config) does not report it again; nothing runs either way.
func (n *nester) substituteConfig(src string, cfg *levelConfig, pos manifest.Pos, field string, used *[]configRef) (string, bool) {
	if !strings.Contains(src, "config.") {
		return src, false
	}
	t, err := params.Parse(src)
	if err != nil {
		return src, false // the lock reports malformed values
	}
	var b strings.Builder
	changed := false
	fail := func(text string, err error) {
		if !errors.Is(err, errReported) {
			n.diags.Errorf(pos, field, "%s: %v", text, err)
		}
		b.WriteString(escape(text))
		changed = true
	}
	// What the config puts into a value is bounded as an expansion's is:
	// the value, and all the elaboration writes (an expression's result
	// is charged by its expansion, over the config's budget).
	bounded := func(text, v string, charge bool) bool {
		if b.Len()+len(v) > params.MaxValueSize {
			fail(text, &params.BudgetError{Msg: fmt.Sprintf("the value would be larger than %d MiB", params.MaxValueSize>>20)})
			return false
		}
		if !charge || cfg.budget == nil {
			return true
		}
		if err := cfg.budget.SpendBytes(len(v)); err != nil {
			fail(text, err)
			return false
		}
		return true
	}
	for _, part := range t.Parts {
		switch part.Kind {
		case params.Literal:
			// Keep escapes escaped: the lock parses the value again.
			b.WriteString(escape(part.Text))
		case params.Ref:
			text := "${" + part.Text + "}"
			if part.Component != "" || !strings.HasPrefix(part.Name, "config.") {
				b.WriteString(text)
				continue
			}
			if ref, from, ok, err := n.resourceValue(cfg, part); ok {
				if err != nil {
					fail(text, err)
					continue
				}
				*used = append(*used, configRef{name: part.Name, value: from, whole: len(t.Parts) == 1})
				// Left for the lock, which marks what reads a secret
				// resource secret and masks it.
				b.WriteString(ref)
				changed = true
				continue
			}
			v, err := cfg.Lookup(part.Name)
			if err == nil {
				v, err = params.Encode(v, part.Encodings)
			}
			if err != nil {
				fail(text, err)
				continue
			}
			if !bounded(text, v, true) {
				continue
			}
			*used = append(*used, configRef{name: part.Name, value: cfg.values[part.Name], whole: len(t.Parts) == 1 && len(part.Encodings) == 0})
			// Config is data: what it holds is never read as a reference.
			b.WriteString(escape(v))
			changed = true
		case params.Expr:
			text := "#{" + part.Text + "}"
			if !onlyConfig(part.Text) {
				b.WriteString(text)
				continue
			}
			v, err := params.Expand(text, cfg)
			if err != nil {
				fail(text, err)
				continue
			}
			if !bounded(text, v, false) {
				continue
			}
			for _, cands := range params.ExprNames(part.Text) {
				for _, c := range cands {
					if cv, ok := cfg.values[c]; ok {
						*used = append(*used, configRef{name: c, value: cv})
						break
					}
				}
			}
			b.WriteString(escape(v))
			changed = true
		}
	}
	return b.String(), changed
}

// escape makes text literal for the lock, which parses values again.
func escape(s string) string {
	if !strings.ContainsAny(s, "$#") {
		return s
	}
	s = strings.ReplaceAll(s, "${", "$${")
	return strings.ReplaceAll(s, "#{", "##{")
}

// onlyConfig reports whether an expression reads config fields alone.
func onlyConfig(expr string) bool {
	names := params.ExprNames(expr)
	if len(names) == 0 {
		return false
	}
	for _, cands := range names {
		if len(cands) == 0 || cands[0] != "config" && !strings.HasPrefix(cands[0], "config.") {
			return false
		}
	}
	return true
}

// substituteComponents replaces ${config.…} in the parameters and outputs of
// the leaves' component manifests with their level's config.
func (n *nester) substituteComponents(refs []manifest.ComponentRef, comps []*manifest.Component) {
	for i, c := range comps {
		if c == nil || i >= len(refs) {
			continue
		}
		cfg := n.configs[refs[i].Name]
		if cfg == nil {
			continue
		}
		for j := range c.Parameters {
			p := &c.Parameters[j]
			n.record(manifest.QualifiedName(p.Name, refs[i].Name), n.substitute(p, cfg, refs[i].Name+".parameters"))
		}
		n.substituteOutputs(c.Outputs, cfg, refs[i].Name+".outputs")
	}
}

// substituteOutputs replaces ${config.…} in the values of outputs with the
// level's config: a leaf's outputs, and the top stack's.
func (n *nester) substituteOutputs(outputs []manifest.Output, cfg *levelConfig, field string) {
	for i := range outputs {
		o := &outputs[i]
		var used []configRef
		if v, ok := n.substituteConfig(o.Value, cfg, o.Pos, field+"."+o.Name, &used); ok {
			o.Value = v
		}
	}
}
