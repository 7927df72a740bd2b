package build

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/dag"
	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plugin"
)

// Graph is the component graph of a stack: an edge a → b means b runs after a.
type Graph struct {
	DAG *dag.Graph
	// Order is the deploy order: lifecycle.order when given, else the stable
	// topological order (ties broken by position in components).
	Order []string
	// reasons are why each edge exists, by the positions of its ends in
	// DAG (reasonKey).
	reasons map[uint64][]string
	// ups are the nested stacks that govern the leaves of nested stacks.
	ups map[string]string
	pos map[string]int // position in Order
	// reach holds, for every component, the set of its ancestors: made the
	// first time IsAncestor asks (outputs read by plain names), as most
	// runs never do, and at 10,000 components it is 12 MB and 26 ms.
	reachOnce sync.Once
	reach     map[string][]uint64
	// deps are each component's direct dependencies in deploy order.
	depsOnce sync.Once
	deps     map[string][]string
}

// dependsReason is the reasons of an edge that a depends made: shared, and
// of capacity one, so that adding a reason copies it.
var dependsReason = []string{"depends"}[:1:1]

// Reasons says why b runs after a ("depends", "requires kubernetes", "uses db:host").
// The slice is the graph's: callers read it.
func (g *Graph) Reasons(a, b string) []string {
	i, j := g.DAG.Position(a), g.DAG.Position(b)
	if i < 0 || j < 0 {
		return nil
	}
	return g.reasons[reasonKey(i, j)]
}

// reasonKey packs an edge's ends into one map key: 30,000 edges of a large
// stack hashed as pairs of strings cost more than the rest of the graph.
func reasonKey(a, b int) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// Position is a component's position in the deploy order, or -1.
func (g *Graph) Position(name string) int {
	if p, ok := g.pos[name]; ok {
		return p
	}
	return -1
}

// IsAncestor reports whether a must finish before b starts (a path a → … → b).
func (g *Graph) IsAncestor(a, b string) bool {
	g.reachOnce.Do(g.computeReach)
	r, ok := g.reach[b]
	if !ok {
		return false
	}
	i := g.DAG.Position(a)
	return i >= 0 && r[i/64]&(1<<(i%64)) != 0
}

// NestedLeaves are the leaves of the nested stack named name ("web", or
// "web.edge" two levels down), at any depth, in order; none when no nested
// stack has that name.
func (g *Graph) NestedLeaves(order []string, name string) []string {
	var out []string
	prefix := name + "."
	for _, n := range order {
		if up := g.ups[n]; up == name || strings.HasPrefix(up, prefix) {
			out = append(out, n)
		}
	}
	return out
}

// Dependencies returns the components b runs after directly, in deploy
// order: a copy the caller may change.
func (g *Graph) Dependencies(b string) []string {
	g.depsOnce.Do(g.sortDependencies)
	return slices.Clone(g.deps[b])
}

// sortDependencies orders every component's direct dependencies by deploy
// order, once: a plan asks for each component's twice, and sorting them
// by the positions' map each time cost 24 ms at 10,000 components.
func (g *Graph) sortDependencies() {
	g.deps = make(map[string][]string, len(g.Order))
	for _, name := range g.DAG.Nodes() {
		deps := g.DAG.Predecessors(name)
		if len(deps) > 1 {
			pos := make([]int, len(deps))
			for i, d := range deps {
				pos[i] = g.pos[d]
			}
			sort.Sort(byPosition{deps, pos})
		}
		g.deps[name] = deps
	}
}

// byPosition sorts names by their positions, kept beside them.
type byPosition struct {
	names []string
	pos   []int
}

func (s byPosition) Len() int           { return len(s.names) }
func (s byPosition) Less(i, j int) bool { return s.pos[i] < s.pos[j] }
func (s byPosition) Swap(i, j int) {
	s.names[i], s.names[j] = s.names[j], s.names[i]
	s.pos[i], s.pos[j] = s.pos[j], s.pos[i]
}

// BuildGraph builds the component graph from depends, requires → provides,
// data references: ${component:output} and plain names of outputs declared by
// earlier components, in a component's parameters and in the link parameters
// its names reach, and the nesting of stacks (up). A cycle, or a lifecycle.order that breaks an edge, is an error.
func BuildGraph(res *elaborate.Result) (*Graph, manifest.Diagnostics) {
	var diags manifest.Diagnostics
	s := res.Stack
	edges := 0
	for _, ref := range s.Components {
		edges += len(ref.Depends)
	}
	g := &Graph{DAG: dag.NewSized(len(s.Components), edges), reasons: make(map[uint64][]string, edges)}
	for _, ref := range s.Components {
		g.DAG.AddNode(ref.Name)
		if ref.Up != "" {
			if g.ups == nil {
				g.ups = map[string]string{}
			}
			g.ups[ref.Name] = ref.Up
		}
	}
	edge := func(a, b, why string) {
		if a == b {
			return
		}
		i, j := g.DAG.AddNode(a), g.DAG.AddNode(b)
		k := reasonKey(i, j)
		if g.DAG.AddEdgeAt(i, j) {
			if why == "depends" {
				g.reasons[k] = dependsReason // most edges: one slice for all
			} else {
				g.reasons[k] = []string{why}
			}
			return
		}
		for _, r := range g.reasons[k] {
			if r == why {
				return
			}
		}
		g.reasons[k] = append(g.reasons[k], why)
	}
	for _, ref := range s.Components {
		for _, d := range ref.Depends {
			edge(d, ref.Name, "depends")
		}
	}
	providers := map[string][]string{}
	for _, c := range res.Components {
		for _, p := range c.Provides {
			providers[p] = append(providers[p], c.Meta.Name)
		}
	}
	for i, c := range res.Components {
		for _, r := range c.Requires {
			for _, p := range providers[r] {
				edge(p, c.Meta.Name, "requires "+r)
			}
			// Nobody provides r in a manifest: an earlier component may print
			// it in a Provides: block, so, as in the Hub CLI, the requirement
			// is checked once every earlier component has run. The
			// environment's capabilities (tools on PATH) are checked where
			// they are needed: the graph does not depend on what PATH holds.
			if len(providers[r]) == 0 && !IsEnvironmentCapability(r) && !containsName(s.Provides, r) {
				for _, earlier := range res.Components[:i] {
					edge(earlier.Meta.Name, c.Meta.Name, "requires "+r+mayProvide)
				}
			}
		}
	}
	dataEdges(res, edge)
	upEdges(s, g.DAG, edge)

	if len(s.Lifecycle.Order) > 0 {
		g.Order = append([]string(nil), s.Lifecycle.Order...)
	} else {
		order, err := g.DAG.TopoOrder()
		if err != nil {
			pos, field := g.cyclePlace(s, err)
			diags.Errorf(pos, field, "%s", g.describeCycles(err))
			return nil, diags
		}
		g.Order = order
	}
	g.pos = make(map[string]int, len(g.Order))
	for i, n := range g.Order {
		g.pos[n] = i
	}
	if len(s.Lifecycle.Order) > 0 {
		if cycles := g.DAG.Cycles(); len(cycles) > 0 {
			err := &dag.CycleError{Cycles: cycles}
			pos, field := g.cyclePlace(s, err)
			diags.Errorf(pos, field, "%s", g.describeCycles(err))
			return nil, diags
		}
		for _, e := range g.DAG.Edges() {
			if g.pos[e[0]] > g.pos[e[1]] {
				diags.Errorf(s.Lifecycle.Positions.At("order", s.Lifecycle.Pos), "lifecycle.order",
					"puts %s before %s, but %s runs after %s (%s)", e[1], e[0], e[1], e[0], strings.Join(g.Reasons(e[0], e[1]), ", "))
			}
		}
		if diags.HasErrors() {
			return nil, diags
		}
	}
	return g, diags
}

// cyclePlace is where a cycle is reported: at the first depends of the
// first cycle that closes it — the one edge the user wrote and can take
// out — or else at the entry of the cycle's first component.
func (g *Graph) cyclePlace(s *manifest.Stack, err error) (manifest.Pos, string) {
	ce, ok := err.(*dag.CycleError)
	if !ok || len(ce.Cycles) == 0 || len(ce.Cycles[0]) == 0 {
		return s.Meta.Pos, "components"
	}
	c := ce.Cycles[0]
	refs := make(map[string]*manifest.ComponentRef, len(c))
	for i := range s.Components {
		if slices.Contains(c, s.Components[i].Name) {
			refs[s.Components[i].Name] = &s.Components[i]
		}
	}
	for i := 0; i+1 < len(c); i++ {
		ref := refs[c[i+1]]
		if ref == nil || ref.DependsRewritten || !slices.Contains(g.Reasons(c[i], c[i+1]), "depends") {
			continue
		}
		if j := slices.Index(ref.Depends, c[i]); j >= 0 {
			return ref.Positions.At(manifest.ItemPath("depends", j), ref.Pos), manifest.ItemPath(manifest.ItemPath("components", ref.Item)+".depends", j)
		}
	}
	if ref := refs[c[0]]; ref != nil {
		return ref.Pos, manifest.ItemPath("components", ref.Item)
	}
	return s.Meta.Pos, "components"
}

// mayProvide ends the reason of a tie to a component that requires what
// no manifest provides (an earlier component may print it).
const mayProvide = ", which an earlier component may provide"

func (g *Graph) describeCycles(err error) string {
	ce, ok := err.(*dag.CycleError)
	if !ok {
		return err.Error()
	}
	var parts []string
	var unprovided []string
	for _, c := range ce.Cycles {
		var why []string
		for i := 0; i+1 < len(c); i++ {
			reasons := g.Reasons(c[i], c[i+1])
			why = append(why, fmt.Sprintf("%s runs after %s: %s", c[i+1], c[i], strings.Join(reasons, ", ")))
			for _, r := range reasons {
				if what, ok := strings.CutSuffix(strings.TrimPrefix(r, "requires "), mayProvide); ok && !slices.Contains(unprovided, what) {
					unprovided = append(unprovided, what)
				}
			}
		}
		parts = append(parts, strings.Join(c, " → ")+" ("+strings.Join(why, "; ")+")")
	}
	msg := "dependency cycle: " + strings.Join(parts, "; ")
	// The tie that closes such a cycle is one gantry made up, for a
	// capability no manifest provides: say so, since the cycle is not the
	// user's doing.
	for _, what := range unprovided {
		msg += fmt.Sprintf("; no component declares %s in its provides, so gantry waits for every component listed before the one that requires it, in case one prints it: declare it where it comes from (provides: [%s]), or list the component that requires it earlier", what, what)
	}
	return msg
}

// computeReach records, for every component, the set of its ancestors.
func (g *Graph) computeReach() {
	n := g.DAG.Len()
	words := (n + 63) / 64
	g.reach = make(map[string][]uint64, n)
	for _, name := range g.Order {
		r := make([]uint64, words)
		for _, p := range g.DAG.Predecessors(name) {
			i := g.DAG.Position(p)
			r[i/64] |= 1 << (i % 64)
			for k, x := range g.reach[p] {
				r[k] |= x
			}
		}
		g.reach[name] = r
	}
}

// upEdges orders the leaves of nested stacks after the stack they are up to
// (DESIGN 2.7, seed 003's up): at each level, every leaf of the stacks
// nested in it runs after the level's own components, unless a path
// already orders them the other way (a depends, a requirement, an output
// read: what the stacks say wins over nesting). Undeploy reverses the
// graph, so nested stacks are torn down before the stack they are up to.
// It adds edges from the level's last components (those no other of them
// comes after) to the first leaves of its nested stacks (those no other of
// them comes before) only: the rest follow.
func upEdges(s *manifest.Stack, d *dag.Graph, edge func(a, b, why string)) {
	if !slices.ContainsFunc(s.Components, func(ref manifest.ComponentRef) bool { return ref.Up != "" }) {
		return
	}
	direct := map[string][]string{} // level → its own components
	for _, ref := range s.Components {
		direct[ref.Up] = append(direct[ref.Up], ref.Name)
	}
	// Levels innermost first: an inner level's edges are in place when an
	// outer level looks for the first leaves of its nested stacks, which
	// are then fewer.
	levels := make([]string, 0, len(direct))
	for up := range direct {
		levels = append(levels, up)
	}
	depthOf := func(level string) int {
		if level == "" {
			return 0
		}
		return strings.Count(level, ".") + 1
	}
	sort.Slice(levels, func(i, j int) bool {
		di, dj := depthOf(levels[i]), depthOf(levels[j])
		return di > dj || di == dj && levels[i] < levels[j]
	})
	for _, level := range levels {
		depth := depthOf(level)
		// below are the leaves of the stacks nested in this level, by the
		// nested stack of this level that holds them.
		var below []string
		holder := map[string]string{}
		inside := map[string]bool{}
		for _, ref := range s.Components {
			if ref.Up == level || level != "" && !strings.HasPrefix(ref.Up, level+".") || ref.Up == "" {
				continue
			}
			below = append(below, ref.Name)
			holder[ref.Name] = strings.Join(strings.Split(ref.Up, ".")[:depth+1], ".")
			inside[ref.Name] = true
		}
		if len(below) == 0 {
			continue
		}
		var first []string
		for _, l := range below {
			isFirst := true
			for _, p := range d.Predecessors(l) {
				if inside[p] {
					isFirst = false
					break
				}
			}
			if isFirst {
				first = append(first, l)
			}
		}
		after := map[string]bool{}
		for _, n := range d.ReachableFrom(first...) {
			after[n] = true
		}
		for _, c := range lastOf(d, direct[level]) {
			if !after[c] {
				for _, l := range first {
					edge(c, l, "up "+holder[l])
				}
				continue
			}
			// Something nested comes before c: only the first leaves that
			// do not lead to c come after it.
			before := map[string]bool{}
			for _, a := range d.Ancestors(c) {
				before[a] = true
			}
			for _, l := range first {
				if !before[l] {
					edge(c, l, "up "+holder[l])
				}
			}
		}
	}
}

// lastOf are the components of level that no other of them comes after:
// a nested leaf after these is after them all.
func lastOf(d *dag.Graph, level []string) []string {
	if len(level) < 2 {
		return level
	}
	member := make(map[string]bool, len(level))
	for _, c := range level {
		member[c] = true
	}
	var out []string
	for _, c := range level {
		last := true
		for _, n := range d.Reachable(c) {
			if member[n] {
				last = false
				break
			}
		}
		if last {
			out = append(out, c)
		}
	}
	return out
}

// dataEdges adds the edges of data references.
func dataEdges(res *elaborate.Result, edge func(a, b, why string)) {
	s := res.Stack
	// position indexes the stack's entries by name (the first of a
	// duplicate, as the builder's stackRef): looking an entry up by a scan
	// per component made this pass O(N²), 0.44 s of a plan of 10,000.
	position := make(map[string]int, len(s.Components))
	for i, ref := range s.Components {
		if _, dup := position[ref.Name]; !dup {
			position[ref.Name] = i
		}
	}
	stackRef := func(name string) *manifest.ComponentRef {
		if i, ok := position[name]; ok {
			return &s.Components[i]
		}
		return nil
	}
	// Plain output names → components declaring them, in position order.
	producers := map[string][]string{}
	for _, c := range res.Components {
		for _, o := range c.Outputs {
			if !strings.Contains(o.Name, ":") {
				producers[o.Name] = append(producers[o.Name], c.Meta.Name)
			}
		}
	}
	tuning := TuningIndex(s)
	instances := newInstanceReader()
	absDir := absDirs()
	links := map[string]*manifest.Parameter{}
	for i := range s.Parameters {
		p := &s.Parameters[i]
		if p.Kind == manifest.KindLink {
			links[p.QName()] = p
		}
	}
	for _, c := range res.Components {
		name := c.Meta.Name
		seenLinks := map[string]bool{}
		var visit func(ref params.Part)
		use := func(n string) {
			for _, p := range producers[n] {
				if position[p] < position[name] {
					edge(p, name, "uses "+n)
				}
			}
			for _, q := range []string{manifest.QualifiedName(n, name), n} {
				if lp, ok := links[q]; ok && !seenLinks[q] {
					seenLinks[q] = true
					for _, r := range params.RefsOf(string(lp.Value)) {
						visit(r)
					}
				}
			}
		}
		visit = func(r params.Part) {
			if r.Component != "" {
				// A component the stack does not have is the expansion's
				// error to report ("there is no component …"), not a node.
				if _, ok := position[r.Component]; ok {
					edge(r.Component, name, "uses "+r.Component+":"+r.Name)
				}
				return
			}
			use(r.Name)
		}
		above := map[string]bool{}
		for _, p := range c.Parameters {
			use(p.Name)
			for _, v := range []string{string(p.Value), string(p.Default)} {
				for _, r := range params.RefsOf(v) {
					// A name defined above is this component's own parameter.
					if r.Component != "" || !above[r.Name] {
						visit(r)
					}
				}
			}
			above[p.Name] = true
		}
		// Its outputs' values, its lifecycle steps and its ready
		// conditions read outputs as its
		// parameters do, when it runs: what they read of another
		// component is as much an edge (order, and the fingerprint's
		// outputs of what it comes after). Names of its own (parameters,
		// outputs) are its own.
		// A tuning condition that is a link reads what the link reads,
		// when the component begins (UnmetCondition).
		for _, cond := range tuning[name] {
			if lp, ok := links[cond]; ok && !seenLinks[cond] {
				seenLinks[cond] = true
				for _, r := range params.RefsOf(string(lp.Value)) {
					visit(r)
				}
			}
		}
		ownParams := maps.Clone(above)
		for _, o := range c.Outputs {
			above[o.Name] = true
		}
		var texts []string
		for _, o := range c.Outputs {
			texts = append(texts, o.Value)
		}
		ref := stackRef(name)
		lc := EffectiveLifecycle(c, ref)
		for _, rc := range lc.ReadyConditions {
			texts = append(texts, rc.DNS, rc.URL)
		}
		for _, point := range deployPoints {
			for _, st := range pointSteps(&lc, point) {
				texts = append(texts, st.Args...)
				texts = append(texts, st.Message)
				for _, v := range st.Params {
					if t, ok := v.(string); ok {
						texts = append(texts, t)
					}
				}
			}
		}
		for _, t := range texts {
			for _, r := range params.RefsOf(t) {
				if r.Component != "" || !above[r.Name] {
					visit(r)
				}
			}
		}
		// So do its plugin entries' arguments and configs, expanded when
		// the entries run, its template files and its plugin instances'
		// manifests, as far as their text says (a folder not there yet,
		// which a checkout brings, reads nothing here). They are expanded
		// before the component has outputs: a name it declares as an output
		// is read from the components it runs after.
		// Lists gantry made (a sow landscape's) are data, never expanded.
		var refs []params.Part
		if !c.Generated {
			for _, t := range appendEntryTexts(appendEntryTexts(nil, plugin.Specs(c.Plugins)), plugin.Specs(c.SetupPlugins)) {
				refs = append(refs, params.RefsOf(t)...)
			}
		}
		if ref != nil && ref.Source.Dir != "" {
			// Absolute, as the plan's facts and the run name the folder:
			// the templates' confinement to it compares real paths.
			dir := absDir(ref.Source.Dir)
			if c.Templates != nil {
				refs = append(refs, component.TemplateRefs(dir, c.Templates)...)
			}
			refs = append(refs, instances.refs(c, dir)...)
		}
		for _, r := range refs {
			if r.Component != "" || !ownParams[r.Name] {
				visit(r)
			}
		}
	}
}
