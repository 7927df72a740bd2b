package elaborate

import (
	"strings"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// mergeLifecycle merges the lifecycle of one stack of a fromStack chain
// (src) into the accumulated lifecycle of its base stacks (dst), as the Hub
// CLI merges a child stack's lifecycle with its parent's:
//
//   - bare: the base's when it sets one, else the derived stack's;
//   - order: mergeOrder (the base's order, the derived stack's components
//     placed around the base components it names); a derived stack that
//     reorders base components is an error;
//   - verbs, mandatory, optional: unions, the base's first;
//   - readyConditions: the base's, then the derived stack's;
//   - requires.optional: mergeTuning;
//   - options: dropped, as the Hub drops them.
//
// gantry's own fields: the derived stack's parallel, teardown_orphans,
// timeout and retries win, flight groups append their steps, and a base order is extended by
// the components a derived stack without an order adds. The root of the
// chain (root) is taken as it is. Positions follow the items, so that
// messages point at the file that wrote them.
func mergeLifecycle(dst, src *manifest.StackLifecycle, root bool, comps []manifest.ComponentRef, diags *manifest.Diagnostics) {
	if dst.Positions == nil {
		dst.Positions = manifest.Positions{}
	}
	if root {
		*dst = *src
		dst.Positions = manifest.Positions{}
		for k, p := range src.Positions {
			dst.Positions[k] = p
		}
		return
	}
	base := *dst
	base.Positions = dst.Positions
	dst.Positions = manifest.Positions{}
	if src.Pos.Line != 0 {
		dst.Pos = src.Pos
	}
	for k, p := range base.Positions {
		if !strings.Contains(k, "[") {
			dst.Positions[k] = p
		}
	}
	for k, p := range src.Positions {
		if !strings.Contains(k, "[") {
			dst.Positions[k] = p
		}
	}
	if base.Bare != "" {
		dst.Positions["bare"] = base.Positions.At("bare", base.Pos)
	} else {
		dst.Bare = src.Bare
	}

	union := func(field string, dl *[]string, bl, sl []string) {
		*dl = nil
		add := func(list []string, from manifest.Positions, def manifest.Pos) {
			for i, v := range list {
				if containsString(*dl, v) {
					continue
				}
				dst.Positions[manifest.ItemPath(field, len(*dl))] = from.At(manifest.ItemPath(field, i), def)
				*dl = append(*dl, v)
			}
		}
		add(bl, base.Positions, base.Pos)
		add(sl, src.Positions, src.Pos)
	}
	union("verbs", &dst.Verbs, base.Verbs, src.Verbs)
	union("mandatory", &dst.Mandatory, base.Mandatory, src.Mandatory)
	union("optional", &dst.Optional, base.Optional, src.Optional)

	mergeStackOrder(dst, &base, src, comps, diags)

	dst.Requires.Optional = mergeTuning(base.Requires.Optional, src.Requires.Optional)
	if src.Requires.Pos.Line != 0 {
		dst.Requires.Pos = src.Requires.Pos
	}
	for i, e := range dst.Requires.Optional {
		// The newest entry of a value is the one kept: the derived
		// stack's last, else the base's last.
		field := "requires.optional"
		if j := lastIndex(src.Requires.Optional, e); j >= 0 {
			dst.Positions[manifest.ItemPath(field, i)] = src.Positions.At(manifest.ItemPath(field, j), src.Pos)
		} else if j := lastIndex(base.Requires.Optional, e); j >= 0 {
			dst.Positions[manifest.ItemPath(field, i)] = base.Positions.At(manifest.ItemPath(field, j), base.Pos)
		}
	}

	dst.ReadyConditions = append(append([]manifest.ReadyCondition(nil), base.ReadyConditions...), src.ReadyConditions...)
	dst.Options = nil
	if src.Parallel > 0 {
		dst.Parallel = src.Parallel
	}
	if src.TeardownOrphans != "" {
		dst.TeardownOrphans = src.TeardownOrphans
	}
	if src.Timeout != nil {
		dst.Timeout = src.Timeout
	}
	if src.Retries != nil {
		dst.Retries = src.Retries
	}
	dst.PreFlight = mergeFlight(base.PreFlight, src.PreFlight)
	dst.PostFlight = mergeFlight(base.PostFlight, src.PostFlight)
	dst.PostTeardown = mergeFlight(base.PostTeardown, src.PostTeardown)
}

// mergeStackOrder sets dst.Order from the base's order and the derived
// stack's, reporting each derived item that reorders base components.
func mergeStackOrder(dst, base, src *manifest.StackLifecycle, comps []manifest.ComponentRef, diags *manifest.Diagnostics) {
	items, conflicts := mergeOrderItems(base.Order, src.Order)
	for _, c := range conflicts {
		field := manifest.ItemPath("order", c.child)
		name := src.Order[c.child]
		j := indexOf(base.Order, name)
		diags.Errorf(src.Positions.At(field, src.Pos), "lifecycle."+field,
			"Component `%s` must come after `%s` in child stack `lifecycle.order` - as defined by parent stack (fromStack): %q is listed before %q here, but the base stack lists %q first (%s); a derived stack places its components around the base's, it cannot reorder them",
			c.after, name, c.after, name, name, base.Positions.At(manifest.ItemPath("order", j), base.Pos))
	}
	dst.Order = make([]string, len(items))
	for k, it := range items {
		field := manifest.ItemPath("order", it.index)
		if it.derived {
			dst.Order[k] = src.Order[it.index]
			dst.Positions[manifest.ItemPath("order", k)] = src.Positions.At(field, src.Pos)
		} else {
			dst.Order[k] = base.Order[it.index]
			dst.Positions[manifest.ItemPath("order", k)] = base.Positions.At(field, base.Pos)
		}
	}
	if len(src.Order) == 0 && len(dst.Order) > 0 {
		// gantry's extension: a derived stack without an order runs the
		// components it adds after the base's.
		for _, c := range comps {
			if !containsString(dst.Order, c.Name) {
				dst.Positions[manifest.ItemPath("order", len(dst.Order))] = c.Pos
				dst.Order = append(dst.Order, c.Name)
			}
		}
	}
}

// orderItem is an item of a merged order: the index of a component in the
// derived stack's order (derived) or in the base's.
type orderItem struct {
	derived bool
	index   int
}

// orderConflict is a component of the derived order (child, its index)
// that comes before after there, while the base orders after first.
type orderConflict struct {
	child int
	after string
}

// mergeOrder merges a base stack's lifecycle.order with a derived stack's,
// as the Hub CLI's mergeOrder: see mergeOrderItems.
func mergeOrder(base, derived []string) ([]string, []orderConflict) {
	items, conflicts := mergeOrderItems(base, derived)
	out := make([]string, len(items))
	for k, it := range items {
		if it.derived {
			out[k] = derived[it.index]
		} else {
			out[k] = base[it.index]
		}
	}
	return out, conflicts
}

// mergeOrderItems merges two orders as the Hub CLI does. The derived
// order's components that are also in the base (the anchors) cut both
// lists: the result is the base's components before the first anchor, the
// derived stack's up to and including it, the base's between the first
// anchor and the second, the derived stack's up to the second, and so on,
// then the rest of the base and the rest of the derived order. So the base
// order is kept, a derived component comes right before the anchor that
// follows it (after the base components before that anchor), and the
// derived components after the last anchor come last. Without anchors the
// result is the base's order, then the derived one.
//
// An anchor that the base orders before an earlier anchor is a conflict;
// with conflicts the result is the base's order followed by the derived
// components the base does not have. A component the derived order lists
// twice anchors once: the later entry is kept as a derived component (for
// the order's own check to report).
func mergeOrderItems(base, derived []string) ([]orderItem, []orderConflict) {
	at := make(map[string]int, len(base))
	for j, n := range base {
		if _, ok := at[n]; !ok {
			at[n] = j
		}
	}
	type anchor struct{ i, j int }
	var anchors []anchor
	var conflicts []orderConflict
	prev := 0
	for i, n := range derived {
		j, ok := at[n]
		if !ok || len(anchors) > 0 && anchors[len(anchors)-1].j == j {
			continue
		}
		if j < prev {
			conflicts = append(conflicts, orderConflict{child: i, after: base[prev]})
			continue
		}
		prev = j
		anchors = append(anchors, anchor{i, j})
	}
	items := make([]orderItem, 0, len(base)+len(derived))
	baseRange := func(from, to int) {
		for j := from; j < to; j++ {
			items = append(items, orderItem{index: j})
		}
	}
	derivedRange := func(from, to int) {
		for i := from; i < to; i++ {
			items = append(items, orderItem{derived: true, index: i})
		}
	}
	if len(conflicts) > 0 {
		baseRange(0, len(base))
		for i, n := range derived {
			if _, ok := at[n]; !ok {
				items = append(items, orderItem{derived: true, index: i})
			}
		}
		return items, conflicts
	}
	bi, di := 0, 0
	for _, a := range anchors {
		baseRange(bi, a.j)
		derivedRange(di, a.i+1)
		bi, di = a.j+1, a.i+1
	}
	baseRange(bi, len(base))
	derivedRange(di, len(derived))
	return items, conflicts
}

func mergeFlight(dst, src *manifest.FlightGroup) *manifest.FlightGroup {
	switch {
	case src == nil:
		return dst
	case dst == nil:
		g := *src
		return &g
	}
	g := *dst
	g.Pos = src.Pos
	g.SkipStandardSteps = g.SkipStandardSteps || src.SkipStandardSteps
	g.Steps = append(append([]manifest.Step(nil), dst.Steps...), src.Steps...)
	return &g
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func lastIndex(list []string, s string) int {
	for i := len(list) - 1; i >= 0; i-- {
		if list[i] == s {
			return i
		}
	}
	return -1
}
