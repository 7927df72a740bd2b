package elaborate

import (
	"strings"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
)

// substitute replaces the ${config.…} references and the #{…} expressions
// over config alone in a parameter's value and default with the level's
// concrete config, leaving every other reference for the lock. A reference
// to a config field the level does not have is an error: when the config is
// concrete, everything that reads it must be (seed 003 rule 1).
func (n *nester) substitute(p *manifest.Parameter, cfg *levelConfig, field string) {
	for _, v := range []*manifest.Scalar{&p.Value, &p.Default} {
		if out, ok := substituteConfig(string(*v), cfg, p.Pos, field+"."+p.Name, n.diags); ok {
			*v = manifest.Scalar(out)
		}
	}
}

// substituteConfig is substitute for one value; ok is false when it has no
// config references (or a problem was reported).
func substituteConfig(src string, cfg *levelConfig, pos manifest.Pos, field string, diags *manifest.Diagnostics) (string, bool) {
	if !strings.Contains(src, "config.") {
		return src, false
	}
	t, err := params.Parse(src)
	if err != nil {
		return src, false // the lock reports malformed values
	}
	var b strings.Builder
	changed := false
	for _, part := range t.Parts {
		switch part.Kind {
		case params.Literal:
			// Keep escapes escaped: the lock parses the value again.
			s := strings.ReplaceAll(part.Text, "${", "$${")
			b.WriteString(strings.ReplaceAll(s, "#{", "##{"))
		case params.Ref:
			if part.Component != "" || !strings.HasPrefix(part.Name, "config.") {
				b.WriteString("${" + part.Text + "}")
				continue
			}
			v, err := cfg.Lookup(part.Name)
			if err == nil {
				v, err = params.Encode(v, part.Encodings)
			}
			if err != nil {
				diags.Errorf(pos, field, "${%s} is left unresolved: %v", part.Text, err)
				return src, false
			}
			b.WriteString(v)
			changed = true
		case params.Expr:
			if !onlyConfig(part.Text) {
				b.WriteString("#{" + part.Text + "}")
				continue
			}
			v, err := params.Expand("#{"+part.Text+"}", cfg)
			if err != nil {
				diags.Errorf(pos, field, "#{%s} is left unresolved: %v", part.Text, err)
				return src, false
			}
			b.WriteString(v)
			changed = true
		}
	}
	return b.String(), changed
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

// substituteComponents replaces ${config.…} in the parameters of the leaves'
// component manifests with their level's config.
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
			n.substitute(&c.Parameters[j], cfg, refs[i].Name+".parameters")
		}
	}
}
