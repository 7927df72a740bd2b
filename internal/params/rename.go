package params

import (
	"sort"
	"strconv"
	"strings"

	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/operators"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/parser"
)

// Unscoped is a read of outputs or params in an expression that
// RenameComponents cannot give a renamed component's new name: a computed
// key (outputs[c]), a name it cannot rewrite in place (a raw, triple-quoted
// or escaped string, a quoted field), or outputs or params used as a whole
// (dyn(outputs).leaf, cel.bind(o, outputs, o.leaf)). Left as written, it
// would read the component of the name as written.
type Unscoped struct {
	Expr string // the expression it is in, without #{ }
	Read string // the read, as the parser gives it back: outputs[c]
	Why  string // why it cannot be renamed
}

// RenameComponents rewrites the component qualifiers a value names: the
// component of ${component:output}, the qualifier of ${name|component},
// and in #{…} the keys of outputs["component"] / outputs.component and of
// params["name|component"]. rename returns a qualifier's new name, or false
// to keep it. The value is returned unchanged (false) when nothing was
// renamed or when it does not parse: the lock reports malformed values.
// unscoped are the reads in its expressions that could name a component
// rename would rename but that cannot be rewritten.
//
// A nested stack names its own components by their local names; elaborate
// gives them their path in the solution with this (DESIGN 2.7), and refuses
// what it cannot rename.
func RenameComponents(src string, rename func(string) (string, bool)) (out string, changed bool, unscoped []Unscoped) {
	if !strings.ContainsAny(src, "$#") {
		return src, false, nil
	}
	t, err := Parse(src)
	if err != nil {
		return src, false, nil
	}
	var b strings.Builder
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
			expr, ok, us := renameExpr(p.Text, rename)
			changed = changed || ok
			unscoped = append(unscoped, us...)
			b.WriteString("#{" + expr + "}")
		}
	}
	if !changed {
		return src, false, unscoped
	}
	return b.String(), true, unscoped
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
func renameExpr(expr string, rename func(string) (string, bool)) (string, bool, []Unscoped) {
	e, err := celEnvironment()
	if err != nil {
		return expr, false, nil
	}
	parsed, iss := e.Parse(expr)
	if iss != nil && iss.Err() != nil {
		return expr, false, nil
	}
	native := parsed.NativeRep()
	info := native.SourceInfo()
	src := []rune(expr) // offsets count code points
	type splice struct {
		start, stop int
		text        string
	}
	var splices []splice
	// Every outputs and params the expression names is read by a key
	// (read) or a field, or it is unscoped.
	var vars []ast.Expr
	read := map[int64]bool{}
	type found struct {
		at int32
		u  Unscoped
	}
	var unscoped []found
	refuse := func(x ast.Expr, why string) {
		r, _ := info.GetOffsetRange(x.ID())
		text, err := parser.Unparse(x, info)
		if err != nil {
			text = string(src[min(max(int(r.Start), 0), len(src)):])
		}
		unscoped = append(unscoped, found{r.Start, Unscoped{Expr: expr, Read: text, Why: why}})
	}
	// key renames the string literal k of the index x, which names a
	// component (or, in params, a name|component).
	key := func(x, k ast.Expr, qualified bool) {
		if k.Kind() != ast.LiteralKind {
			refuse(x, "the key is computed")
			return
		}
		s, ok := k.AsLiteral().(types.String)
		if !ok {
			refuse(x, "the key is computed")
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
		// with escapes or in triple quotes cannot be rewritten in place.
		r, ok := info.GetOffsetRange(k.ID())
		start, n := int(r.Start), len([]rune(string(s)))
		end := start + n + 1
		if !ok || end >= len(src) || src[start] != '"' && src[start] != '\'' || src[end] != src[start] || string(src[start+1:end]) != string(s) {
			refuse(x, strconv.Quote(comp)+" is written with escapes or in a raw or triple-quoted string")
			return
		}
		splices = append(splices, splice{start, end + 1, strconv.Quote(to)})
	}
	ast.PostOrderVisit(native.Expr(), ast.NewExprVisitor(func(x ast.Expr) {
		switch x.Kind() {
		case ast.IdentKind:
			if x.AsIdent() == outputsVar || x.AsIdent() == paramsVar {
				vars = append(vars, x)
			}
		case ast.CallKind:
			c := x.AsCall()
			if c.FunctionName() != operators.Index || len(c.Args()) != 2 || c.Args()[0].Kind() != ast.IdentKind {
				return
			}
			switch v := c.Args()[0]; v.AsIdent() {
			case outputsVar:
				read[v.ID()] = true
				key(x, c.Args()[1], false)
			case paramsVar:
				read[v.ID()] = true
				key(x, c.Args()[1], true)
			}
		case ast.SelectKind:
			sel := x.AsSelect()
			if sel.Operand().Kind() != ast.IdentKind {
				return
			}
			switch sel.Operand().AsIdent() {
			case paramsVar:
				// params.name names no component.
				read[sel.Operand().ID()] = true
				return
			case outputsVar:
				read[sel.Operand().ID()] = true
			default:
				return
			}
			to, ok := rename(sel.FieldName())
			if !ok || sel.IsTestOnly() {
				// has(outputs.leaf) is true for any name.
				return
			}
			// outputs.component: the field follows the dot the parser
			// places the select at.
			r, found := info.GetOffsetRange(x.ID())
			if !found || int(r.Start) >= len(src) || src[r.Start] != '.' {
				refuse(x, "the name cannot be rewritten where it is written")
				return
			}
			i := int(r.Start) + 1
			for i < len(src) && (src[i] == ' ' || src[i] == '\t' || src[i] == '\n' || src[i] == '\r') {
				i++
			}
			field := []rune(sel.FieldName())
			if i+len(field) > len(src) || string(src[i:i+len(field)]) != sel.FieldName() {
				refuse(x, "`"+sel.FieldName()+"` is quoted") // outputs.`leaf`
				return
			}
			// outputs.a.b would read outputs["a"]["b"]: index instead.
			splices = append(splices, splice{int(r.Start), i + len(field), "[" + strconv.Quote(to) + "]"})
		}
	}))
	for _, v := range vars {
		if !read[v.ID()] {
			refuse(v, "used as a whole, not read by a name")
		}
	}
	sort.SliceStable(unscoped, func(i, j int) bool { return unscoped[i].at < unscoped[j].at })
	var us []Unscoped
	for _, f := range unscoped {
		us = append(us, f.u)
	}
	if len(splices) == 0 {
		return expr, false, us
	}
	sort.Slice(splices, func(i, j int) bool { return splices[i].start > splices[j].start })
	for _, s := range splices {
		src = append(src[:s.start], append([]rune(s.text), src[s.stop:]...)...)
	}
	return string(src), true, us
}
