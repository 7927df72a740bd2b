package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/state"
)

func newUnlockCmd(a *app) *cobra.Command {
	var statePath string
	var force bool
	cmd := &cobra.Command{
		Use:   "unlock",
		Short: "Break a stale lock left on a state",
		Long: `unlock removes the lock record of a run that is gone. A run killed even with
SIGKILL releases its lock by itself (the kernel drops it), so this only clears a
stale record. A lock that a process still holds is never broken, whatever host
its record names: two runs would then write the state at once. Stop that run.`,
		Example: `  gantry unlock
  gantry unlock -s stacks/prod/hub.yaml.state`,
		Args: argsRange(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if force {
				fmt.Fprintln(a.stderr, "warning: --force no longer breaks a lock: a lock that is held is never broken")
			}
			store, _, err := action.OpenState(stateOrEnv(statePath, "hub.yaml.state"), "", "")
			if err != nil {
				return a.failure(err)
			}
			defer store.Close()
			res, err := store.Unlock(cmd.Context())
			var le *state.LockedError
			if errors.As(err, &le) {
				return withCode(ExitLocked, fmt.Errorf("%w; it is held: stop that run first (a lock that is held is never broken)", le))
			}
			if err != nil {
				return err
			}
			switch {
			case res.Stale != nil:
				fmt.Fprintf(a.stdout, "removed the stale lock of %s\n", res.Stale)
			default:
				fmt.Fprintf(a.stdout, "%s is not locked\n", store)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&statePath, "state", "s", "", "state: a file, file://PATH or postgres://... (default: $GANTRY_STATE when it is a postgres:// URL, else hub.yaml.state)")
	cmd.Flags().BoolVar(&force, "force", false, "no effect: a lock that is held is never broken")
	_ = cmd.Flags().MarkHidden("force")
	return cmd
}
