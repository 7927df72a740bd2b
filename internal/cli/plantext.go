package cli

import (
	"fmt"

	"github.com/gantry-dev/gantry/internal/plan"
)

// printPlanText prints the plan as an indented list of the visible steps.
func (a *app) printPlanText(p *plan.Plan) error {
	fmt.Fprintf(a.stdout, "plan: %s %s\n", p.Verb, p.Stack)
	group := ""
	for _, n := range p.Nodes {
		if n.Hidden {
			continue
		}
		if n.Group != group {
			group = n.Group
			fmt.Fprintf(a.stdout, "  %s\n", group)
		}
		fmt.Fprintf(a.stdout, "    %s\n", n.Label)
	}
	return nil
}
