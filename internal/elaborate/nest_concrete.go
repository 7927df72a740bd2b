package elaborate

import (
	"reflect"
	"strconv"
	"strings"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
)

// checkConcrete verifies seed 003's rule 1 on the solution: once the config
// at the top is concrete, everything below is. Config is substituted in
// the parameters of every level, the leaves' outputs and the top stack's
// outputs; a ${config.…} or #{…config…} left anywhere else (a step's
// arguments, a template target, an annotation) would reach a component as
// text or fail when it runs, so each is an error, with where it is.
func (n *nester) checkConcrete(s *manifest.Stack, refs []manifest.ComponentRef, comps []*manifest.Component) {
	w := concreteWalker{n: n}
	top := *s
	top.Components = nil
	w.walk(reflect.ValueOf(&top).Elem(), n.root, s.Pos)
	for i := range refs {
		w.walk(reflect.ValueOf(&refs[i]).Elem(), refs[i].Name, refs[i].Pos)
	}
	for i, c := range comps {
		if c == nil || i >= len(refs) || n.configs[refs[i].Name] == nil {
			continue
		}
		w.walk(reflect.ValueOf(c).Elem(), refs[i].Name, c.Pos)
	}
}

// concreteWalker looks through a manifest's fields for config references.
type concreteWalker struct {
	n *nester
}

var (
	posType  = reflect.TypeOf(manifest.Pos{})
	nodeType = reflect.TypeOf(manifest.Node{})
)

// walk visits v, whose path is path and whose nearest position is pos.
func (w concreteWalker) walk(v reflect.Value, path string, pos manifest.Pos) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			w.walk(v.Elem(), path, pos)
		}
	case reflect.Struct:
		if v.Type() == posType || v.Type() == nodeType {
			return
		}
		if f := v.FieldByName("Pos"); f.IsValid() && f.Type() == posType {
			if p := f.Interface().(manifest.Pos); p.File != "" {
				pos = p
			}
		}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ",")
			if name == "-" {
				continue
			}
			sub := path
			if name != "" {
				sub = path + "." + name
			}
			w.walk(v.Field(i), sub, pos)
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			w.walk(v.Index(i), path+"["+strconv.Itoa(i)+"]", pos)
		}
	case reflect.Map:
		iter := v.MapRange()
		for iter.Next() {
			w.walk(iter.Value(), path+"."+iter.Key().String(), pos)
		}
	case reflect.String:
		if ref := configReference(v.String()); ref != "" {
			w.n.diags.Errorf(pos, path, "%s is left unresolved: config is made concrete in parameters and outputs only (seed 003: once the config at the top is concrete, everything below must be); read it here through a parameter whose value is %s", ref, ref)
		}
	}
}

// configReference returns the first reference to config in s, "" when it
// has none: ${config.…}, or an expression that reads config.
func configReference(s string) string {
	if !strings.Contains(s, "config") || !strings.ContainsAny(s, "$#") {
		return ""
	}
	t, err := params.Parse(s)
	if err != nil {
		return ""
	}
	for _, p := range t.Parts {
		switch p.Kind {
		case params.Ref:
			if p.Component == "" && (p.Name == "config" || strings.HasPrefix(p.Name, "config.")) {
				return "${" + p.Text + "}"
			}
		case params.Expr:
			for _, cands := range params.ExprNames(p.Text) {
				if len(cands) > 0 && (cands[0] == "config" || strings.HasPrefix(cands[0], "config.")) {
					return "#{" + p.Text + "}"
				}
			}
		}
	}
	return ""
}
