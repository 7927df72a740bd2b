package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/elaborate"
)

func newValidateCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "validate STACK [PARAMS...]",
		Short: "Check a stack, its base stacks, params files and components without running anything",
		Long: `validate reads everything elaborate reads and reports every problem at once, each
with file:line:col and the field. It exits 0 when the stack is valid and 2 when it
is not. It never runs anything and never writes a file.`,
		Example: `  gantry validate hub.yaml
  gantry validate hub.yaml params.yaml params-dev.yaml`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			res, diags := elaborate.Load(args[0], elaborate.Options{ParamsFiles: args[1:]})
			if err := reportDiags(a.stderr, diags, "the stack is not valid"); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "stack %s is valid: %d components, %d parameters\n",
				res.Stack.Meta.Name, len(res.Components), len(res.Stack.Parameters))
			return nil
		},
	}
}
