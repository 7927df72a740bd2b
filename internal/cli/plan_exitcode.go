package cli

import (
	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/plan"
)

// ExitChanges is the exit code of plan --detailed-exitcode when the plan
// changes something, as Terraform's: with the flag, 0 means no changes,
// 1 an error (invalid input included) and 2 changes.
const ExitChanges = 2

// detailedExit is plan's --detailed-exitcode: whether it was given, and
// whether the plan printed has changes.
type detailedExit struct {
	on      bool
	changes bool
}

// record notes whether the plan has changes.
func (d *detailedExit) record(p *plan.Plan) { d.changes = p.HasChanges() }

// register adds the flag to plan and wraps its RunE: with the flag, a plan
// with changes exits 2, and invalid input exits 1 instead of 2, so that
// a script tells changes from errors as it does with Terraform.
func (d *detailedExit) register(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&d.on, "detailed-exitcode", false, "exit 0 when the plan changes nothing, 2 when it changes something, 1 on errors (as terraform plan)")
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		err := run(cmd, args)
		if !d.on {
			return err
		}
		if err != nil {
			if exitCode(err) == ExitInvalid {
				var inner error
				if ee, ok := err.(*exitError); ok {
					inner = ee.err
				} else {
					inner = err
				}
				return &exitError{code: ExitFailed, err: inner, invalid: true}
			}
			return err
		}
		if d.changes {
			return &exitError{code: ExitChanges, valid: true}
		}
		return nil
	}
}
