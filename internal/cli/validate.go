package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/plan"
)

func newValidateCmd(a *app) *cobra.Command {
	sf := stackFlags{consequence: "the stack is not valid"}
	cmd := &cobra.Command{
		Use:   "validate STACK [PARAMS...]",
		Short: "Check a stack, its base stacks, params files and components without running anything",
		Long: `validate checks everything deploy checks before it runs anything, and reports
every problem at once, each with file:line:col and the field: the manifests, the
dependency graph (cycles, lifecycle.order), the parameters (references,
expressions, cycles), the implementations, requirements and lifecycle steps.
Parameters that get their value from the environment at deploy time are
reported as warnings when they have none here. validate exits 0 when the stack
is valid and 2 when it is not; it never runs anything and never writes a file.`,
		Example: `  gantry validate hub.yaml
  gantry validate hub.yaml params.yaml params-dev.yaml`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, err := a.loadStack(args, &sf)
			if err != nil {
				return err
			}
			g, diags := plan.BuildGraph(l.res)
			if err := reportDiags(a.stderr, diags, "the stack is not valid"); err != nil {
				return err
			}
			if err := a.lockParamsWith(l, true); err != nil {
				return err
			}
			rt, err := a.newRuntime(l, g, "validate", &runFlags{}, false)
			if err != nil {
				return err
			}
			_, diags = plan.Build(rt, plan.BuildOptions{Verb: plan.VerbDeploy})
			if err := reportDiags(a.stderr, diags, "the stack is not valid"); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "stack %s is valid: %d components, %d parameters\n",
				l.res.Stack.Meta.Name, len(l.res.Components), len(l.res.Stack.Parameters))
			return nil
		},
	}
	sf.register(cmd)
	return cmd
}
