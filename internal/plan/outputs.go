package plan

import (
	"sort"
	"strings"

	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/state"
)

// NewOutputIndex returns the outputs index of a stack: every component's
// declared outputs, the values recorded in the state, and plain names visible
// only from a producer's descendants in the graph.
func NewOutputIndex(res *elaborate.Result, g *Graph, st *state.State) *params.OutputIndex {
	x := params.NewOutputIndex(g.Order)
	x.SetVisibility(g.IsAncestor)
	for _, c := range res.Components {
		names := make([]string, 0, len(c.Outputs))
		for _, o := range c.Outputs {
			names = append(names, o.Name)
		}
		x.Declare(c.Meta.Name, names)
	}
	if st != nil {
		for name, c := range st.Components {
			if c.Outputs != nil {
				x.Set(name, c.Outputs, c.SecretOutputs)
			}
		}
	}
	return x
}

// StaticProvides returns the capabilities provided by the components before
// comp in deploy order, by their manifests and the state's dynamic provides, as
// hub.provides shows them: space-separated, sorted.
func StaticProvides(res *elaborate.Result, g *Graph, st *state.State, comp string) string {
	set := map[string]bool{}
	limit := g.Position(comp)
	for _, c := range res.Components {
		if limit >= 0 && g.Position(c.Meta.Name) >= limit {
			continue
		}
		for _, p := range c.Provides {
			set[p] = true
		}
		if st != nil {
			if sc, ok := st.Components[c.Meta.Name]; ok && sc.Status == state.StatusDeployed {
				for _, p := range sc.Provides {
					set[p] = true
				}
			}
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
