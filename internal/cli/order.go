package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
)

func newOrderCmd(a *app) *cobra.Command {
	var del, withDeps bool
	var comps []string
	var offset, limit string
	cmd := &cobra.Command{
		Use:   "order [STACK] [PARAMS...]",
		Short: "Print the deploy order (or with -d the delete order), one component per line",
		Example: `  gantry order hub.yaml
  gantry order hub.yaml -d
  gantry order hub.yaml -c api -a`,
		Args: minArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := stackArgs(args)
			if err != nil {
				return err
			}
			st, err := a.loadStack(args, &stackFlags{consequence: "no order", graphOnly: true})
			if err != nil {
				return err
			}
			g := st.Graph
			verb, order := plan.VerbDeploy, g.Order
			if del {
				verb = plan.VerbUndeploy
				order = make([]string, len(g.Order))
				for i, n := range g.Order {
					order[len(order)-1-i] = n
				}
			}
			var sd manifest.Diagnostics
			out, ok := build.SelectOrder(g, nil, order, verb, build.Selection{Components: comps, WithDeps: withDeps, Offset: offset, Limit: limit}, &sd)
			if !ok {
				return reportDiags(a.stderr, sd, "no order")
			}
			for _, n := range out {
				fmt.Fprintln(a.stdout, n)
			}
			return nil
		},
	}
	cmd.Flags().BoolVarP(&del, "delete", "d", false, "the delete (undeploy) order")
	cmd.Flags().StringSliceVarP(&comps, "components", "c", nil, "only these components")
	cmd.Flags().BoolVarP(&withDeps, "with-deps", "a", false, "with -c, add dependencies (or with -d dependents)")
	cmd.Flags().StringVarP(&offset, "offset", "o", "", "start at this component")
	cmd.Flags().StringVarP(&limit, "limit", "l", "", "stop after this component")
	registerSelection(cmd)
	return cmd
}
