package params

import (
	"sort"
	"strconv"
	"strings"

	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
)

// RenameComponents rewrites the component qualifiers a value names: the
// component of ${component:output}, the qualifier of ${name|component},
// and in #{…} the keys of outputs["component"] / outputs.component and of
// params["name|component"]. rename returns a qualifier's new name, or false
// to keep it. The value is returned unchanged (false) when nothing was
// renamed or when it does not parse: the lock reports malformed values.
//
// A nested stack names its own components by their local names; elaborate
// gives them their path in the solution with this (DESIGN 2.7).
func RenameComponents(src string, rename func(string) (string, bool)) (string, bool) {
	if !strings.ContainsAny(src, "$#") {
		return src, false
	}
	t, err := Parse(src)
	if err != nil {
		return src, false
	}
	var b strings.Builder
	changed := false
	for _, p := range t.Parts {
		switch p.Kind {
		case Literal:
			// Parse turned "$${" into "${": keep it literal.
			b.WriteString(strings.ReplaceAll(strings.ReplaceAll(p.Text, "${", "$${"), "#{", "##{"))
		case Ref:
			text, ok := renameRef(p, rename)
			changed = changed || ok
			b.WriteString("${" + text + "}")
		case Expr:
			expr, ok := renameExpr(p.Text, rename)
			changed = changed || ok
			b.WriteString("#{" + expr + "}")
		}
	}
	if !changed {
		return src, false
	}
	return b.String(), true
}

// renameRef is RenameComponents for one ${…}; it returns what goes between
// the braces.
func renameRef(p Part, rename func(string) (string, bool)) (string, bool) {
	comp, name, sep := p.Component, p.Name, ":"
	if comp == "" {
		var ok bool
		if name, comp, ok = strings.Cut(p.Name, "|"); !ok {
			return p.Text, false
		}
		sep = "|"
	}
	to, ok := rename(comp)
	if !ok {
		return p.Text, false
	}
	text := to + sep + name
	if sep == "|" {
		text = name + sep + to
	}
	for _, e := range p.Encodings {
		text += "/" + e
	}
	return text, true
}

// renameExpr is RenameComponents for one expression. It splices the new
// names into the source at the places the parser gives, so that the rest
// of the expression stays as written.
func renameExpr(expr string, rename func(string) (string, bool)) (string, bool) {
	e, err := celEnvironment()
	if err != nil {
		return expr, false
	}
	parsed, iss := e.Parse(expr)
	if iss != nil && iss.Err() != nil {
		return expr, false
	}
	native := parsed.NativeRep()
	info := native.SourceInfo()
	src := []rune(expr) // offsets count code points
	type splice struct {
		start, stop int
		text        string
	}
	var splices []splice
	// key renames the string literal k, which names a component (or, in
	// params, a name|component).
	key := func(k ast.Expr, qualified bool) {
		if k.Kind() != ast.LiteralKind {
			return
		}
		s, ok := k.AsLiteral().(types.String)
		if !ok {
			return
		}
		name, comp := "", string(s)
		if qualified {
			if name, comp, ok = strings.Cut(comp, "|"); !ok {
				return
			}
		}
		to, ok := rename(comp)
		if !ok {
			return
		}
		if qualified {
			to = name + "|" + to
		}
		// The range's start counts code points but its stop adds the
		// literal's length in bytes: find the end here. A name written
		// with escapes or in triple quotes is left as it is.
		r, ok := info.GetOffsetRange(k.ID())
		start, n := int(r.Start), len([]rune(string(s)))
		end := start + n + 1
		if !ok || end >= len(src) || src[start] != '"' && src[start] != '\'' || src[end] != src[start] || string(src[start+1:end]) != string(s) {
			return
		}
		splices = append(splices, splice{start, end + 1, strconv.Quote(to)})
	}
	ast.PostOrderVisit(native.Expr(), ast.NewExprVisitor(func(x ast.Expr) {
		switch x.Kind() {
		case ast.CallKind:
			c := x.AsCall()
			if c.FunctionName() != operators.Index || len(c.Args()) != 2 || c.Args()[0].Kind() != ast.IdentKind {
				return
			}
			switch c.Args()[0].AsIdent() {
			case outputsVar:
				key(c.Args()[1], false)
			case paramsVar:
				key(c.Args()[1], true)
			}
		case ast.SelectKind:
			// outputs.component: the field follows the dot the parser
			// places the select at.
			sel := x.AsSelect()
			if sel.Operand().Kind() != ast.IdentKind || sel.Operand().AsIdent() != outputsVar {
				return
			}
			to, ok := rename(sel.FieldName())
			r, found := info.GetOffsetRange(x.ID())
			if !ok || !found || int(r.Start) >= len(src) || src[r.Start] != '.' {
				return
			}
			i := int(r.Start) + 1
			for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
				i++
			}
			field := []rune(sel.FieldName())
			if i+len(field) > len(src) || string(src[i:i+len(field)]) != sel.FieldName() {
				return // a quoted field (outputs.`name`): left as it is
			}
			// outputs.a.b would read outputs["a"]["b"]: index instead.
			splices = append(splices, splice{int(r.Start), i + len(field), "[" + strconv.Quote(to) + "]"})
		}
	}))
	if len(splices) == 0 {
		return expr, false
	}
	sort.Slice(splices, func(i, j int) bool { return splices[i].start > splices[j].start })
	for _, s := range splices {
		src = append(src[:s.start], append([]rune(s.text), src[s.stop:]...)...)
	}
	return string(src), true
}
