package build

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gantry-dev/gantry/internal/dag"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/state"
)

// selectPass decides which components the plan runs, in which order, and
// what happens to orphans: deploy follows the graph, undeploy runs it
// backwards over the stack and the orphans, by the dependencies the state
// recorded.
func (b *builder) selectPass() {
	b.checkReservedNames()
	order := b.g.Order
	b.orphans = Orphans(b.g, b.in.Before)
	var teardown *dag.Graph
	if b.undeploy {
		var tord []string
		teardown, tord = teardownOrder(b.g, b.in.Before, b.orphans)
		order = reversed(tord)
	}
	b.p.SomeComponents = len(b.opts.Selection.Components) > 0 || b.opts.Selection.Offset != ""
	selected, ok := SelectOrder(b.g, teardown, order, b.verb, b.opts.Selection, &b.diags)
	if !ok {
		return
	}
	b.selected = selected
	b.selectedSet = make(map[string]bool, len(selected))
	for _, n := range selected {
		b.selectedSet[n] = true
	}
	if b.undeploy {
		b.checkDependents()
		return
	}
	l := &b.res.Stack.Lifecycle
	// Orphans are torn down only when the whole stack deploys, as
	// teardown_orphans says; otherwise they are listed with the command
	// that removes them (DESIGN 5: gantry plan always lists them).
	if !b.opts.Selection.Narrows() && (l.TeardownOrphans == "before" || l.TeardownOrphans == "after") {
		b.teardown = l.TeardownOrphans
	} else {
		b.p.Orphans = b.orphans
		if b.opts.Selection.Narrows() && (l.TeardownOrphans == "before" || l.TeardownOrphans == "after") {
			b.p.OrphansLeftBecause = "this run deploys only some components (-c, -o, -l)"
		}
		isOrphan := make(map[string]bool, len(b.orphans))
		for _, o := range b.orphans {
			isOrphan[o] = true
		}
		for _, o := range b.orphans {
			if _, gone := b.f.RecordsGone[o]; gone {
				b.p.OrphansElsewhere = append(b.p.OrphansElsewhere, o)
			}
			for _, dep := range b.in.Before.Components[o].Depends {
				if isOrphan[dep] {
					if b.p.OrphanDependents == nil {
						b.p.OrphanDependents = map[string][]string{}
					}
					b.p.OrphanDependents[dep] = append(b.p.OrphanDependents[dep], o)
				}
			}
		}
	}
}

// invokePass selects the one component a custom verb runs on: it must be in
// the stack, declare the verb, and be deployed.
func (b *builder) invokePass() {
	comp, verb := b.opts.Invoke, b.verb
	if !b.g.DAG.Has(comp) {
		msg := fmt.Sprintf("no component %q in the stack", comp)
		if s := manifest.Suggest(comp, b.g.Order); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		} else if strings.HasSuffix(b.res.Stack.File, ".elaborate") {
			// invoke reads the stack the last run elaborated, which the
			// manifest open in an editor may have moved past. (A near
			// name is more likely a typo.)
			msg += "; this is the stack as the last deploy elaborated it: deploy again to invoke a component added to the manifest since"
		}
		b.diags.Errorf(manifest.Pos{File: b.res.Stack.File}, "", "%s", msg)
		return
	}
	c := b.res.Component(comp)
	if !containsName(c.Lifecycle.Verbs, verb) && !containsName(b.res.Stack.Lifecycle.Verbs, verb) {
		b.diags.Errorf(c.Lifecycle.Pos, "lifecycle.verbs", "component %s does not declare the verb %q; list it in lifecycle.verbs of the component or the stack", comp, verb)
		return
	}
	var rec *state.Component
	if b.in.Before != nil {
		rec = b.in.Before.Components[comp]
	}
	if rec == nil || rec.Status != state.StatusDeployed {
		b.diags.Errorf(manifest.Pos{}, "", "component %s is not deployed; invoke runs verbs on deployed components with the parameters they were deployed with", comp)
		return
	}
	b.selected = []string{comp}
	b.selectedSet = map[string]bool{comp: true}
}

// dependenciesOf returns the components b depends on: from the graph when b
// is in the stack, and for undeploy also what the state recorded, since the
// components were deployed by that graph.
func dependenciesOf(g *Graph, before *state.State, b string, undeploy bool) []string {
	var deps []string
	if g.DAG.Has(b) {
		deps = g.Dependencies(b)
	}
	if (undeploy || !g.DAG.Has(b)) && before != nil {
		if c, ok := before.Components[b]; ok {
			for _, d := range c.Depends {
				deps = appendNew(deps, d)
			}
		}
	}
	return deps
}

// selectedDeps finds, for each component of a plan, the selected
// components it must wait for: its dependencies, and through the ones that
// are not selected, theirs — so that -c a,c keeps a before c when a → b → c.
// What each unselected component leads to is worked out once: walking
// through them again for every selected component took 0.5 s of a plan of
// 10,000 with -o (every component after the offset walked through every one
// before it).
type selectedDeps struct {
	g        *Graph
	before   *state.State
	selected map[string]bool
	undeploy bool
	// through holds, for an unselected component, the selected ones its
	// dependencies lead to, in the order a depth-first walk meets them;
	// walking marks the ones being worked out.
	through map[string][]string
	walking map[string]bool
	// cyclic: the dependencies the state recorded close a cycle with the
	// graph's (an undeploy of a stack whose order changed since); then
	// every component is walked on its own, as a cycle makes a partial
	// answer of the component met twice.
	cyclic bool
}

func newSelectedDeps(g *Graph, before *state.State, selected map[string]bool, undeploy bool) *selectedDeps {
	return &selectedDeps{g: g, before: before, selected: selected, undeploy: undeploy, through: map[string][]string{}, walking: map[string]bool{}}
}

// of returns the selected components name must wait for, each once, in the
// order a depth-first walk of its dependencies meets them.
func (s *selectedDeps) of(name string) []string {
	// Most often every dependency is selected: they are the answer, with
	// no walk.
	direct := dependenciesOf(s.g, s.before, name, s.undeploy)
	if allSelected(direct, name, s.selected) {
		return direct
	}
	if !s.cyclic {
		out := &orderedSet{exclude: name}
		for _, d := range direct {
			if s.selected[d] {
				out.add(d)
			} else {
				out.addAll(s.leadsTo(d))
			}
		}
		if !s.cyclic {
			return out.list
		}
	}
	return s.walk(name)
}

// leadsTo returns the selected components an unselected one's dependencies
// lead to, in the order a depth-first walk from it meets them. Remembering
// them is exact on a graph without cycles: a component a walk meets again
// was walked through whole before, so it adds nothing new, and the lists
// joined in order are what one walk would give.
func (s *selectedDeps) leadsTo(u string) []string {
	if list, ok := s.through[u]; ok {
		return list
	}
	if s.walking[u] {
		s.cyclic = true
		return nil
	}
	s.walking[u] = true
	out := &orderedSet{}
	for _, d := range dependenciesOf(s.g, s.before, u, s.undeploy) {
		if s.selected[d] {
			out.add(d)
		} else {
			out.addAll(s.leadsTo(d))
		}
	}
	delete(s.walking, u)
	s.through[u] = out.list
	return out.list
}

// walk is the walk of one component with nothing remembered, which a cycle
// cannot lead astray: each component is met once.
func (s *selectedDeps) walk(name string) []string {
	var out []string
	seen := map[string]bool{name: true}
	var visit func(n string)
	visit = func(n string) {
		for _, d := range dependenciesOf(s.g, s.before, n, s.undeploy) {
			if seen[d] {
				continue
			}
			seen[d] = true
			if s.selected[d] {
				out = append(out, d)
			} else {
				visit(d)
			}
		}
	}
	visit(name)
	return out
}

// orderedSet is a list without repeats, in the order added, that never
// holds exclude (the component whose list it is).
type orderedSet struct {
	exclude string
	list    []string
	seen    map[string]bool // once the list is long
}

func (s *orderedSet) add(v string) {
	if v == s.exclude {
		return
	}
	if s.seen == nil && len(s.list) >= 16 {
		s.seen = make(map[string]bool, 2*len(s.list))
		for _, x := range s.list {
			s.seen[x] = true
		}
	}
	if s.seen != nil {
		if s.seen[v] {
			return
		}
		s.seen[v] = true
	} else if slices.Contains(s.list, v) {
		return
	}
	s.list = append(s.list, v)
}

func (s *orderedSet) addAll(vs []string) {
	for _, v := range vs {
		s.add(v)
	}
}

// allSelected reports a list of dependencies that are all selected, none
// twice and none the component itself: what the walk would return as it is.
func allSelected(deps []string, name string, selected map[string]bool) bool {
	if len(deps) > 16 {
		return false // the quadratic check below is for short lists
	}
	for i, d := range deps {
		if d == name || !selected[d] || slices.Contains(deps[:i], d) {
			return false
		}
	}
	return true
}

// teardownOrder is the deploy order of everything an undeploy may touch: the
// stack's components and the orphans, ordered by the graph and by the
// dependencies the state recorded. Undeploy runs it backwards.
func teardownOrder(g *Graph, before *state.State, orphans []string) (*dag.Graph, []string) {
	d := dag.New()
	for _, n := range g.Order {
		d.AddNode(n)
	}
	for _, n := range orphans {
		d.AddNode(n)
	}
	for _, n := range d.Nodes() {
		for _, dep := range dependenciesOf(g, before, n, true) {
			if d.Has(dep) {
				d.AddEdge(dep, n)
			}
		}
	}
	order, err := d.TopoOrder()
	if err != nil {
		// The recorded dependencies and the new manifest disagree in a loop:
		// the recorded deploy order is what was really done.
		return d, append(append([]string(nil), orphans...), g.Order...)
	}
	return d, order
}

// Orphans are components recorded in the state, not undeployed, that the
// stack no longer lists, in their recorded deploy order.
func Orphans(g *Graph, before *state.State) []string {
	if before == nil {
		return nil
	}
	var out []string
	for _, name := range before.ComponentOrder() {
		c := before.Components[name]
		if g.DAG.Has(name) || c.Status == state.StatusUndeployed || c.Status == state.StatusSkipped {
			continue
		}
		out = append(out, name)
	}
	return out
}

// formatNames are the output formats of gantry's commands: -o with one of
// them meant --output.
var formatNames = []string{"text", "json", "yaml", "dot", "mermaid", "html"}

// SelectOrder applies -c, -a, -o and -l to a run order. For an undeploy,
// teardown (when not nil) is the graph of what it may touch, the orphans
// and what they recorded depending on included: -a adds them too.
func SelectOrder(g *Graph, teardown *dag.Graph, order []string, verb string, sel Selection, diags *manifest.Diagnostics) ([]string, bool) {
	known := map[string]bool{}
	for _, n := range order {
		known[n] = true
	}
	check := func(flag, name string) bool {
		if known[name] {
			return true
		}
		msg := fmt.Sprintf("%s %s: no component %q in the stack", flag, name, name)
		if s := manifest.Suggest(name, order); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		if flag == "-o" && slices.Contains(formatNames, name) {
			// The Hub's -o is the offset; a format is meant.
			msg += fmt.Sprintf("; -o is the offset (the component to start at), as in the Hub CLI, not a format: a command with formats takes --output %s", name)
		}
		diags.Errorf(manifest.Pos{}, "", "%s", msg)
		return false
	}
	ok := true
	want := map[string]bool{}
	if len(sel.Components) > 0 {
		for _, c := range sel.Components {
			// A nested stack's name selects its leaves (DESIGN 2.7); a
			// component's name is looked up first: looking through every
			// component for the leaves of each of 5,000 names took 0.75 s.
			if !known[c] {
				if leaves := g.NestedLeaves(order, c); len(leaves) > 0 {
					for _, l := range leaves {
						want[l] = true
					}
					continue
				}
			}
			if check("-c", c) {
				want[c] = true
			} else {
				ok = false
			}
		}
		if sel.WithDeps {
			// What the selected depend on (undeploy: what depends on
			// them), in one walk from all of them.
			from := make([]string, 0, len(want))
			for c := range want {
				from = append(from, c)
			}
			var more []string
			if verb == plan.VerbUndeploy {
				reach := g.DAG
				if teardown != nil {
					reach = teardown
				}
				more = reach.ReachableFrom(from...)
			} else {
				more = g.DAG.AncestorsOf(from...)
			}
			for _, m := range more {
				want[m] = true
			}
		}
	}
	// A nested stack's name as -o starts at its first leaf in the order,
	// as -l stops after its last.
	offset, limit := sel.Offset, sel.Limit
	if offset != "" && !known[offset] {
		if leaves := g.NestedLeaves(order, offset); len(leaves) > 0 {
			offset = leaves[0]
		}
	}
	if limit != "" && !known[limit] {
		if leaves := g.NestedLeaves(order, limit); len(leaves) > 0 {
			limit = leaves[len(leaves)-1]
		}
	}
	for _, f := range []struct{ flag, name string }{{"-o", offset}, {"-l", limit}} {
		if f.name != "" && !check(f.flag, f.name) {
			ok = false
		}
	}
	if !ok {
		return nil, false
	}
	var out []string
	started := offset == ""
	for _, n := range order {
		if n == offset {
			started = true
		}
		if started && (len(want) == 0 || want[n]) {
			out = append(out, n)
		}
		if n == limit {
			break
		}
	}
	if len(out) == 0 && (sel.Offset != "" || sel.Limit != "") {
		var bounds []string
		if sel.Offset != "" {
			bounds = append(bounds, "from -o "+sel.Offset)
		}
		if sel.Limit != "" {
			bounds = append(bounds, "up to -l "+sel.Limit)
		}
		switch {
		case len(want) > 0:
			diags.Errorf(manifest.Pos{}, "", "the selection is empty: none of the -c components is %s in the %s order", strings.Join(bounds, " "), verb)
		default:
			diags.Errorf(manifest.Pos{}, "", "the selection is empty: -o %s comes after -l %s in the %s order", sel.Offset, sel.Limit, verb)
		}
		return nil, false
	}
	return out, true
}

// checkDependents refuses to undeploy a component that a deployed component
// outside the selection still depends on.
func (b *builder) checkDependents() {
	before := b.in.Before
	deployed := func(n string) bool {
		if before == nil {
			return false
		}
		c, ok := before.Components[n]
		return ok && (c.Status == state.StatusDeployed || c.Status == state.StatusIncomplete || c.Status == state.StatusFailed)
	}
	// A component still in the stack depends on what its manifest says now
	// (an orphan's teardown may come before its redeploy, as with
	// teardown_orphans: before); one that left it, on what it recorded.
	// Those are indexed once: looking through the state for each selected
	// component took 3.6 s to plan the undeploy of 10,000.
	departed := map[string][]string{} // a component → the departed that depend on it
	if before != nil {
		for name, c := range before.Components {
			if b.g.DAG.Has(name) {
				continue
			}
			for _, dep := range c.Depends {
				departed[dep] = append(departed[dep], name)
			}
		}
	}
	for _, s := range b.selected {
		var blocking []string
		seen := map[string]bool{}
		var dependents []string
		if b.g.DAG.Has(s) {
			dependents = b.g.DAG.Successors(s)
		}
		dependents = append(dependents, departed[s]...)
		for _, d := range dependents {
			if !b.selectedSet[d] && !seen[d] && deployed(d) {
				seen[d] = true
				blocking = append(blocking, d)
			}
		}
		sort.Strings(blocking)
		if len(blocking) > 0 {
			verbS, pronoun := "", "them"
			if len(blocking) == 1 {
				verbS, pronoun = "s", "it"
			}
			b.diags.Errorf(manifest.Pos{}, "", "cannot undeploy %s: %s still depend%s on it; select %s too or add -a to undeploy what depends on it",
				s, strings.Join(blocking, ", "), verbS, pronoun)
		}
	}
}

// checkReservedNames refuses a component called like one of the plan's own
// groups (stack, leftovers, ...): its logs, times and status would merge
// with the group's. One the state records (an earlier gantry deployed it)
// is let be, with a warning: refused, it could be neither undeployed nor
// renamed without being deployed again under the new name.
func (b *builder) checkReservedNames() {
	for _, c := range b.res.Stack.Components {
		if !manifest.ReservedComponentName(c.Name) {
			continue
		}
		field := manifest.ItemPath("components", c.Item) + ".name"
		if b.in.Before != nil && b.in.Before.Components[c.Name] != nil {
			b.diags.Warnf(c.Pos, field, "component name %q is the plan's own group of that name (its logs, times and status merge with the component's); the state records it, so it is run all the same: undeploy it, then deploy it under another name", c.Name)
			continue
		}
		b.diags.Errorf(c.Pos, field, "%s", manifest.ReservedNameMessage(c.Name))
	}
}
