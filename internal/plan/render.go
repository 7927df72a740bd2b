package plan

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/internal/dag"
)

// RenderOptions shape the text plan.
type RenderOptions struct {
	// Stack is the stack as the command was given it, for the commands the
	// plan suggests: the manifest, its params files, and -s STATE when one
	// was given (without them the suggested command reads another state or
	// misses the values the stack requires).
	Stack []string
}

// WriteText writes the plan as an indented tree: groups and components with
// what will happen to them, and their visible steps with labels.
func (p *Plan) WriteText(w io.Writer, o RenderOptions) error {
	var b strings.Builder
	comps := 0
	verbs := map[string]*Node{}
	visible := map[string]bool{}
	for _, n := range p.Nodes {
		if n.Kind == KindComponent {
			comps++
			if verbs[n.Group] == nil {
				verbs[n.Group] = n
			}
		}
		if !n.Hidden {
			visible[n.Group] = true
		}
	}
	steps := p.visibleSteps()
	fmt.Fprintf(&b, "%s %s: %d component%s, %d step%s\n", p.Verb, p.Stack, comps, plural(comps), steps, plural(steps))
	deps := p.groupDependencies()
	group := ""
	// nested are the nested stacks whose headings are open, outermost
	// first; indent is the indentation of their components.
	var nested []string
	indent := ""
	for _, n := range p.Nodes {
		if n.Group != group && (visible[n.Group] || verbs[n.Group] != nil) {
			group = n.Group
			var chain []string
			if c := p.Components[n.Component]; c != nil && n.Component == group {
				chain = NestChain(c.Up)
			}
			same := 0
			for same < len(chain) && same < len(nested) && chain[same] == nested[same] {
				same++
			}
			for i := same; i < len(chain); i++ {
				up := p.Stack
				if i > 0 {
					up = chain[i-1]
				}
				fmt.Fprintf(&b, "  %s%s: nested stack, up to %s\n", strings.Repeat("  ", i), chain[i], up)
			}
			nested, indent = chain, strings.Repeat("  ", len(chain))
			b.WriteString("  " + indent + groupTitle(group, verbs[group], deps[group]) + "\n")
		}
		if n.Hidden {
			continue
		}
		b.WriteString("    " + indent + Title(n))
		if l := limitsOf(n).String(); l != "" {
			b.WriteString(" [" + l + "]")
		}
		b.WriteString("\n")
	}
	if len(p.Orphans) > 0 {
		because := p.OrphansLeftBecause
		if because == "" {
			because = "teardown_orphans is none"
		}
		b.WriteString("orphans (in the state, no longer in the stack; left alone as " + because + "):\n")
		stack := stackArgs(o.Stack)
		var here, blocking []string // blocking: elsewhere, and depending on one here
		for _, orphan := range p.Orphans {
			if slices.Contains(p.OrphansElsewhere, orphan) {
				// Its undeploy from here is refused: it would delete
				// nothing.
				fmt.Fprintf(&b, "  %s: its records are not in this folder: undeploy it from the folder it was deployed from, or forget it, deleting nothing, with gantry undeploy %s --force -c %s\n",
					orphan, stack, ShellWord(orphan))
				continue
			}
			// One that other orphans depend on goes with them (alone it
			// is refused); those whose records are elsewhere cannot go
			// from here, and must be gone first.
			var with, first []string
			for _, o := range orphanWithDependents(p, orphan) {
				if slices.Contains(p.OrphansElsewhere, o) {
					first = append(first, o)
				} else {
					with = append(with, o)
				}
			}
			fmt.Fprintf(&b, "  %s: remove with gantry undeploy %s -c %s", orphan, stack, ShellWord(strings.Join(with, ",")))
			switch len(with) {
			case 1:
			case 2:
				fmt.Fprintf(&b, " (%s depends on it)", with[1])
			default:
				fmt.Fprintf(&b, " (%s depend on it)", strings.Join(with[1:], ", "))
			}
			if len(first) > 0 {
				verb := "depends"
				if len(first) > 1 {
					verb = "depend"
				}
				fmt.Fprintf(&b, ", once %s, which %s on it and whose records are not in this folder, %s", strings.Join(first, ", "), verb, goneWord(len(first)))
				for _, o := range first {
					if !slices.Contains(blocking, o) {
						blocking = append(blocking, o)
					}
				}
			}
			b.WriteString("\n")
			here = append(here, orphan)
		}
		if len(here) > 1 {
			// One that depended on another is refused alone: together they
			// go, once those elsewhere that depend on them are gone.
			fmt.Fprintf(&b, "  all of them: gantry undeploy %s -c %s", stack, ShellWord(strings.Join(here, ",")))
			if len(blocking) > 0 {
				fmt.Fprintf(&b, ", once %s %s", strings.Join(blocking, ", "), goneWord(len(blocking)))
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// NestChain is the chain of nested stacks a component's Up names,
// outermost first: "web.edge" is in web.edge, itself in web. Names in a
// nesting have no dots of their own (elaborate refuses them), so the
// chain is the prefixes of up at its dots.
func NestChain(up string) []string {
	if up == "" {
		return nil
	}
	var out []string
	for i := 0; i < len(up); i++ {
		if up[i] == '.' {
			out = append(out, up[:i])
		}
	}
	return append(out, up)
}

// Title is how a step is shown in a plan: its label, after the injection
// point of a component's step and the lane of a parallel plugin list.
func Title(n *Node) string {
	t := n.Label
	if n.Point != "" && n.Component != "" {
		t = n.Point + ": " + t
	}
	if n.Lane != "" {
		t = "[" + n.Lane + "] " + t
	}
	return t
}

// stackArgs is the stack's arguments as words of a shell command.
func stackArgs(args []string) string {
	if len(args) == 0 {
		return "hub.yaml"
	}
	words := make([]string, len(args))
	for i, a := range args {
		words[i] = ShellWord(a)
	}
	return strings.Join(words, " ")
}

// ShellWord quotes s for a POSIX shell when it is not a plain word, so that
// the command the plan suggests can be pasted as it is.
func ShellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./,:=@%+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (p *Plan) visibleSteps() int {
	n := 0
	for _, x := range p.Nodes {
		if !x.Hidden {
			n++
		}
	}
	return n
}

// groupTitle is a group's heading: a component with its action (its verb
// step's) and what it runs after, or a flight group's name.
func groupTitle(group string, verb *Node, after []string) string {
	if verb == nil {
		return group
	}
	t := group + ": " + verb.Action
	if verb.Reason != "" {
		t += " (" + verb.Reason + ")"
	}
	if len(after) > 0 {
		t += ", after " + strings.Join(after, ", ")
	}
	return t
}

// groupDependencies lists, for each component group, the component groups its
// first step waits for directly.
func (p *Plan) groupDependencies() map[string][]string {
	out := map[string][]string{}
	// Each pair once, in the order of the edges: looking through a group's
	// list for each edge was quadratic in its dependencies (a component
	// that reads a plain output name waits for every earlier component
	// that declares it).
	seen := map[[2]string]bool{}
	for i := range p.Edges {
		a, b := p.EdgeEnds(i)
		from, to := p.Nodes[a], p.Nodes[b]
		if from.Group == to.Group || to.Kind != KindBegin && !to.SettledUnchanged() || from.Component == "" {
			continue
		}
		if k := [2]string{to.Group, from.Group}; !seen[k] {
			seen[k] = true
			out[to.Group] = append(out[to.Group], from.Group)
		}
	}
	return out
}

// jsonPlan is the JSON shape of a plan (docs/lifecycle.md).
type jsonPlan struct {
	Stack   string     `json:"stack"`
	Verb    string     `json:"verb"`
	Nodes   []jsonNode `json:"nodes"`
	Edges   []jsonEdge `json:"edges"`
	Orphans []string   `json:"orphans"`
	// OrphansElsewhere is Plan.OrphansElsewhere, left out when none.
	OrphansElsewhere []string `json:"orphansElsewhere,omitempty"`
	// OrphanDependents is Plan.OrphanDependents, left out when none.
	OrphanDependents map[string][]string `json:"orphanDependents,omitempty"`
	// OrphansLeftBecause is Plan.OrphansLeftBecause, left out when empty
	// (teardown_orphans: none).
	OrphansLeftBecause string                `json:"orphansLeftBecause,omitempty"`
	Components         map[string]*Component `json:"components"`
}

type jsonNode struct {
	ID        string   `json:"id"`
	Kind      Kind     `json:"kind"`
	Label     string   `json:"label"`
	Component string   `json:"component,omitempty"`
	Group     string   `json:"group,omitempty"`
	Point     string   `json:"point,omitempty"`
	Action    string   `json:"action,omitempty"`
	Reason    string   `json:"reason,omitempty"`
	Lane      string   `json:"lane,omitempty"`
	Hidden    bool     `json:"hidden,omitempty"`
	Quiet     bool     `json:"quiet,omitempty"`
	Critical  bool     `json:"critical,omitempty"`
	Always    bool     `json:"always,omitempty"`
	Inputs    []string `json:"inputs,omitempty"`
	Takes     []string `json:"takes,omitempty"`
	Frees     []string `json:"frees,omitempty"`
	Spec      Spec     `json:"spec"`
}

type jsonEdge struct {
	From string `json:"from"`
	To   string `json:"to"`
	Kind string `json:"kind"`
}

// WriteJSON writes the plan's nodes with their specs, its edges (failure
// edges have kind "failure", completion edges "complete") and what its
// components' steps share.
func (p *Plan) WriteJSON(w io.Writer) error { return p.EncodeJSON(w, true) }

// EncodeJSON writes the plan as WriteJSON does, indented or on one line
// (the run folder's copy: at 10,000 components indenting cost a third of
// a --resume's CPU).
func (p *Plan) EncodeJSON(w io.Writer, indent bool) error {
	if !indent {
		return p.streamJSON(w)
	}
	jp := jsonPlan{Stack: p.Stack, Verb: p.Verb, Nodes: make([]jsonNode, 0, len(p.Nodes)), Edges: make([]jsonEdge, 0, len(p.Edges)),
		Orphans: append([]string{}, p.Orphans...), OrphansElsewhere: p.OrphansElsewhere, OrphanDependents: p.OrphanDependents,
		OrphansLeftBecause: p.OrphansLeftBecause, Components: p.Components}
	if jp.Components == nil {
		jp.Components = map[string]*Component{}
	}
	for _, n := range p.Nodes {
		jp.Nodes = append(jp.Nodes, jsonNode{ID: n.ID, Kind: n.Kind, Label: n.Label, Component: n.Component, Group: n.Group,
			Point: n.Point, Action: n.Action, Reason: n.Reason, Lane: n.Lane, Hidden: n.Hidden, Quiet: n.Quiet, Critical: n.Critical,
			Always: n.Always, Inputs: n.Inputs, Takes: n.Takes, Frees: n.Frees, Spec: n.Spec})
	}
	for _, e := range p.Edges {
		jp.Edges = append(jp.Edges, jsonEdge{From: e.From, To: e.To, Kind: e.Kind.String()})
	}
	enc := json.NewEncoder(w)
	if indent {
		enc.SetIndent("", "  ")
	}
	return enc.Encode(jp)
}

// renderGraph converts the plan for the DOT and Mermaid renderers.
func (p *Plan) renderGraph() (*dag.Graph, dag.RenderOptions) {
	g := dag.New()
	kinds := map[[2]string]EdgeKind{}
	for _, n := range p.Nodes {
		g.AddNode(n.ID)
	}
	for _, e := range p.Edges {
		g.AddEdge(e.From, e.To)
		kinds[[2]string{e.From, e.To}] = e.Kind
	}
	o := dag.RenderOptions{
		Label: func(id string) string {
			n := p.index[id]
			label := n.Label
			if n.Lane != "" {
				label = "[" + n.Lane + "] " + label
			}
			if n.Point != "" && n.Component != "" {
				return n.Point + "\n" + label
			}
			return label
		},
		Cluster: func(id string) string { return p.index[id].Group },
		EdgeStyle: func(from, to string) string {
			switch kinds[[2]string{from, to}] {
			case OnFailure:
				return "dashed"
			case OnComplete:
				return "dotted"
			}
			return ""
		},
		EdgeLabel: func(from, to string) string {
			if kinds[[2]string{from, to}] == OnFailure {
				return "on failure"
			}
			return ""
		},
	}
	return g, o
}

// WriteDOT writes the plan in Graphviz DOT, a box per group; failure edges
// are dashed, completion edges dotted.
func (p *Plan) WriteDOT(w io.Writer) error {
	g, o := p.renderGraph()
	return g.WriteDOT(w, p.Verb+" "+p.Stack, o)
}

// WriteMermaid writes the plan as a Mermaid flowchart.
func (p *Plan) WriteMermaid(w io.Writer) error {
	g, o := p.renderGraph()
	return g.WriteMermaid(w, o)
}

// orphanWithDependents is an orphan and, after it, the orphans that depend
// on it, directly or not, in the order of p.Orphans.
func orphanWithDependents(p *Plan, orphan string) []string {
	in := map[string]bool{orphan: true}
	queue := []string{orphan}
	for len(queue) > 0 {
		o := queue[0]
		queue = queue[1:]
		for _, d := range p.OrphanDependents[o] {
			if !in[d] {
				in[d] = true
				queue = append(queue, d)
			}
		}
	}
	out := []string{orphan}
	for _, o := range p.Orphans {
		if in[o] && o != orphan {
			out = append(out, o)
		}
	}
	return out
}

// goneWord is "is gone" or "are gone" for n subjects.
func goneWord(n int) string {
	if n == 1 {
		return "is gone"
	}
	return "are gone"
}
