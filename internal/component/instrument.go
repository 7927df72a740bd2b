package component

import (
	"strconv"
	"text/template"
	"text/template/parse"
)

// Functions the render adds to a parsed Go template, under names no
// template can write (they are not identifiers a user would choose, and a
// template that calls them only spends its own budget).
const (
	tickFunc   = "gantryBudgetTick"
	chargeFunc = "gantryBudgetCharge"
)

// chargedBuiltins are text/template's own functions whose work grows with
// their operands (comparing or indexing long strings); their operands pass
// through chargeFunc first. Printing and escaping builtins are replaced by
// bounded functions in funcMap instead; and, or, not and len take constant
// time.
var chargedBuiltins = map[string]bool{"eq": true, "ne": true, "lt": true, "le": true, "gt": true, "ge": true, "index": true, "slice": true}

// instrument rewrites a parsed template so that it pays as it runs: every
// range iteration and every template call starts with a tick, and the
// operands of chargedBuiltins are charged. text/template has no hook for
// either, so the parse tree gets the calls.
func instrument(t *template.Template) {
	for _, tt := range t.Templates() {
		if tt.Tree != nil && tt.Tree.Root != nil {
			instrumentList(tt.Tree.Root, true)
		}
	}
}

func instrumentList(l *parse.ListNode, tick bool) {
	if l == nil {
		return
	}
	for _, n := range l.Nodes {
		instrumentNode(n)
	}
	if tick {
		l.Nodes = append([]parse.Node{tickAction(l.Position())}, l.Nodes...)
	}
}

func instrumentNode(n parse.Node) {
	switch n := n.(type) {
	case *parse.ActionNode:
		instrumentPipe(n.Pipe)
	case *parse.IfNode:
		instrumentBranch(&n.BranchNode, false)
	case *parse.WithNode:
		instrumentBranch(&n.BranchNode, false)
	case *parse.RangeNode:
		instrumentBranch(&n.BranchNode, true)
	case *parse.TemplateNode:
		instrumentPipe(n.Pipe)
	case *parse.ListNode:
		instrumentList(n, false)
	}
}

func instrumentBranch(b *parse.BranchNode, loop bool) {
	instrumentPipe(b.Pipe)
	instrumentList(b.List, loop)
	instrumentList(b.ElseList, false)
}

func instrumentPipe(p *parse.PipeNode) {
	if p == nil {
		return
	}
	cmds := make([]*parse.CommandNode, 0, len(p.Cmds))
	for i, c := range p.Cmds {
		for _, a := range c.Args {
			instrumentArg(a)
		}
		if id, ok := c.Args[0].(*parse.IdentifierNode); ok && chargedBuiltins[id.Ident] {
			for j := 1; j < len(c.Args); j++ {
				c.Args[j] = chargedArg(c.Args[j])
			}
			if i > 0 {
				// The value piped in is the builtin's last operand.
				cmds = append(cmds, chargeCommand(c.Position()))
			}
		}
		cmds = append(cmds, c)
	}
	p.Cmds = cmds
}

// instrumentArg reaches pipelines nested in an operand: (pipe) and (pipe).Field.
func instrumentArg(a parse.Node) {
	switch a := a.(type) {
	case *parse.PipeNode:
		instrumentPipe(a)
	case *parse.ChainNode:
		instrumentArg(a.Node)
	}
}

// chargedArg wraps an operand that can be long — a field, variable, call or
// pipeline — as (chargeFunc operand); literals are as short as the source.
func chargedArg(a parse.Node) parse.Node {
	switch a.(type) {
	case *parse.FieldNode, *parse.VariableNode, *parse.ChainNode, *parse.PipeNode, *parse.DotNode, *parse.IdentifierNode:
	default:
		return a
	}
	cmd := chargeCommand(a.Position())
	cmd.Args = append(cmd.Args, a)
	return &parse.PipeNode{NodeType: parse.NodePipe, Pos: a.Position(), Cmds: []*parse.CommandNode{cmd}}
}

func chargeCommand(pos parse.Pos) *parse.CommandNode {
	return &parse.CommandNode{NodeType: parse.NodeCommand, Pos: pos, Args: []parse.Node{parse.NewIdentifier(chargeFunc).SetPos(pos)}}
}

// tickAction is {{tickFunc pos}}: the tick learns where it is.
func tickAction(pos parse.Pos) *parse.ActionNode {
	at := &parse.NumberNode{NodeType: parse.NodeNumber, Pos: pos, IsInt: true, Int64: int64(pos), Text: strconv.Itoa(int(pos))}
	cmd := &parse.CommandNode{NodeType: parse.NodeCommand, Pos: pos, Args: []parse.Node{parse.NewIdentifier(tickFunc).SetPos(pos), at}}
	return &parse.ActionNode{NodeType: parse.NodeAction, Pos: pos, Pipe: &parse.PipeNode{NodeType: parse.NodePipe, Pos: pos, Cmds: []*parse.CommandNode{cmd}}}
}
