package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/state"
)

func newUnlockCmd(a *app) *cobra.Command {
	var statePath string
	var force bool
	cmd := &cobra.Command{
		Use:   "unlock",
		Short: "Break a stale lock left on a state",
		Long: `unlock removes the lock record of a run that is gone. A run killed even with
SIGKILL releases its lock by itself (the kernel drops it), so this is for a lock
file on a shared folder held from another host, or to clear a stale record. A
lock held by a live process on this host is never broken: stop that process.`,
		Example: `  gantry unlock
  gantry unlock -s stacks/prod/hub.yaml.state --force`,
		Args: argsRange(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := state.Unlock(statePath, force)
			var le *state.LockedError
			if errors.As(err, &le) {
				hint := "stop that run first"
				if !force {
					hint += ", or --force if it runs on another host and is gone"
				}
				return withCode(ExitLocked, fmt.Errorf("%w; %s", le, hint))
			}
			if err != nil {
				return err
			}
			switch {
			case res.Stale != nil:
				fmt.Fprintf(a.stdout, "removed the stale lock of %s\n", res.Stale)
			default:
				fmt.Fprintf(a.stdout, "%s is not locked\n", statePath)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&statePath, "state", "s", "hub.yaml.state", "state file")
	cmd.Flags().BoolVar(&force, "force", false, "break a lock held from another host")
	return cmd
}
