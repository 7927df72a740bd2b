package action

import (
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
)

// linkComponents records in the plan why each component runs after each
// component it waits for directly (plan.Component.Links), from the reasons
// of the stack's graph: the component graph and the reports label their
// ties with them. A tie that is only a depends needs no entry.
func linkComponents(p *plan.Plan, g *build.Graph) {
	if g == nil {
		return
	}
	for name, c := range p.Components {
		if c.FromState {
			continue
		}
		depends := dependsSet(c.Depends)
		for _, up := range c.After {
			reasons := g.Reasons(up, name)
			if len(reasons) == 0 || len(reasons) == 1 && reasons[0] == "depends" && depends(up) {
				continue
			}
			links := make([]plan.Link, len(reasons))
			for i, r := range reasons {
				links[i] = linkOf(up, r)
			}
			if c.Links == nil {
				c.Links = map[string][]plan.Link{}
			}
			c.Links[up] = links
		}
	}
}

// dependsSet tells the components a component's depends names: a map
// past a few (the last component of a fan-in of 10,000 looked each of its
// 10,000 ties up in its list of 10,000).
func dependsSet(depends []string) func(string) bool {
	if len(depends) <= 8 {
		return func(up string) bool { return slices.Contains(depends, up) }
	}
	set := make(map[string]bool, len(depends))
	for _, d := range depends {
		set[d] = true
	}
	return func(up string) bool { return set[up] }
}

// linkOf reads one of the graph's reasons for a tie to the component up:
// "depends", "requires kubernetes", "requires helm, which an earlier
// component may provide", "uses db:host", "uses host", "up web".
func linkOf(up, reason string) plan.Link {
	switch {
	case reason == "depends":
		return plan.Link{Kind: plan.LinkDepends}
	case strings.HasPrefix(reason, "requires "):
		what, maybe := strings.CutSuffix(strings.TrimPrefix(reason, "requires "), ", which an earlier component may provide")
		return plan.Link{Kind: plan.LinkProvides, What: what, Maybe: maybe}
	case strings.HasPrefix(reason, "up "):
		return plan.Link{Kind: plan.LinkUp, What: strings.TrimPrefix(reason, "up ")}
	case strings.HasPrefix(reason, "uses "):
		return plan.Link{Kind: plan.LinkOutput, What: strings.TrimPrefix(strings.TrimPrefix(reason, "uses "), up+":")}
	}
	return plan.Link{Kind: plan.LinkAfter, What: reason}
}
