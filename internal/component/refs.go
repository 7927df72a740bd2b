package component

import (
	"strings"
	"text/template"
	"text/template/parse"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
)

// TemplateRefs are the names the templates of a component read through its
// resolver, as far as their text says: the ${…} references and the names of
// the #{…} expressions of a curly template, the tags of a mustache one, the
// param "name" and output "component" "name" calls with literal arguments
// of a Go template (a name computed while rendering cannot be known
// before). A plan makes edges of those that read another component's
// outputs. A template that cannot be listed, read or parsed reads nothing
// here: its render reports it.
func TemplateRefs(dir string, t *manifest.Templates) []params.Part {
	files, _ := Declared(dir, t)
	var out []params.Part
	for _, f := range files {
		data, err := readTemplate(f.Path)
		if err != nil {
			continue
		}
		switch f.Kind {
		case TemplateGo:
			out = append(out, goRefs(f.Path, string(data))...)
		case TemplateMustache:
			out = append(out, mustacheRefs(string(data))...)
		default:
			out = append(out, params.RefsOf(string(data))...)
		}
	}
	return out
}

// mustacheRefs are the names of a mustache template's tags, as
// renderMustache reads them: sections and inverted sections by their
// name, substitutions without their encodings; comments and closing tags
// read nothing.
func mustacheRefs(src string) []params.Part {
	var out []params.Part
	for i := 0; i < len(src); {
		start := strings.Index(src[i:], "{{")
		if start < 0 {
			break
		}
		start += i
		closing, skip := "}}", 2
		if strings.HasPrefix(src[start:], "{{{") {
			closing, skip = "}}}", 3
		}
		end := strings.Index(src[start+skip:], closing)
		if end < 0 {
			break
		}
		tag := strings.TrimSpace(src[start+skip : start+skip+end])
		i = start + skip + end + len(closing)
		sigil := byte(0)
		if skip == 2 && tag != "" && strings.IndexByte("#^/!&", tag[0]) >= 0 {
			sigil = tag[0]
			tag = strings.TrimSpace(tag[1:])
		}
		if sigil == '!' || sigil == '/' || tag == "" {
			continue
		}
		if sigil == 0 || sigil == '&' {
			if j := strings.IndexByte(tag, '/'); j > 0 {
				tag = tag[:j]
			}
		}
		out = append(out, params.Part{Kind: params.Ref, Name: tag})
	}
	return out
}

// goRefs are the param and output calls of a Go template whose arguments
// are literal strings. Its fields (.db.host) are the component's own
// parameters, not reads of anything else.
func goRefs(name, src string) []params.Part {
	if !strings.Contains(src, "param") && !strings.Contains(src, "output") {
		return nil
	}
	funcs := funcMap()
	for _, n := range []string{"param", "output", "lookupfile", "lookupdir"} {
		funcs[n] = func(...string) (string, error) { return "", nil }
	}
	t, err := template.New(name).Funcs(funcs).Parse(src)
	if err != nil {
		return nil
	}
	var out []params.Part
	for _, tt := range t.Templates() {
		if tt.Tree != nil {
			walkGo(tt.Tree.Root, &out)
		}
	}
	return out
}

// walkGo collects the reads of the calls below n.
func walkGo(n parse.Node, out *[]params.Part) {
	switch n := n.(type) {
	case *parse.ListNode:
		if n == nil {
			return
		}
		for _, c := range n.Nodes {
			walkGo(c, out)
		}
	case *parse.ActionNode:
		walkGo(n.Pipe, out)
	case *parse.PipeNode:
		if n == nil {
			return
		}
		for _, c := range n.Cmds {
			walkGo(c, out)
		}
	case *parse.CommandNode:
		goCall(n.Args, out)
		for _, a := range n.Args {
			walkGo(a, out)
		}
	case *parse.IfNode:
		walkBranch(&n.BranchNode, out)
	case *parse.RangeNode:
		walkBranch(&n.BranchNode, out)
	case *parse.WithNode:
		walkBranch(&n.BranchNode, out)
	case *parse.TemplateNode:
		walkGo(n.Pipe, out)
	case *parse.ChainNode:
		walkGo(n.Node, out) // (output "db" "x").Field
	}
}

// walkBranch collects the reads of an if, range or with: its pipeline and
// both lists.
func walkBranch(n *parse.BranchNode, out *[]params.Part) {
	walkGo(n.Pipe, out)
	walkGo(n.List, out)
	walkGo(n.ElseList, out)
}

// goCall notes a param or output call with literal arguments.
func goCall(args []parse.Node, out *[]params.Part) {
	if len(args) == 0 {
		return
	}
	id, ok := args[0].(*parse.IdentifierNode)
	if !ok {
		return
	}
	var lits []string
	for _, a := range args[1:] {
		s, ok := a.(*parse.StringNode)
		if !ok {
			return
		}
		lits = append(lits, s.Text)
	}
	switch {
	case id.Ident == "param" && len(lits) == 1:
		*out = append(*out, params.Part{Kind: params.Ref, Name: lits[0]})
	case id.Ident == "output" && len(lits) == 2:
		*out = append(*out, params.Part{Kind: params.Ref, Component: lits[0], Name: lits[1]})
	}
}
