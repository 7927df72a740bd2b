package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/action"
)

func newValidateCmd(a *app) *cobra.Command {
	sf := stackFlags{consequence: "the stack is not valid"}
	cmd := &cobra.Command{
		Use:   "validate [STACK] [PARAMS...]",
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
		Args: minArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := stackArgs(args)
			if err != nil {
				return err
			}
			src, err := sf.source(args)
			if err != nil {
				return err
			}
			v, err := (&action.Validate{Source: src, Warn: a.warn}).Run(cmd.Context())
			if err != nil {
				return a.failure(err)
			}
			fmt.Fprintf(a.stdout, "stack %s is valid: %s, %s\n", v.Stack, counted(v.Components, "component"), counted(v.Parameters, "parameter"))
			return nil
		},
	}
	sf.register(cmd)
	return cmd
}

// counted is "1 component", "2 components".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
