package cli

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/action"
)

func newStateCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "state",
		Short: "Work on a stack's state: move it between backends",
		Args:  argsRange(0, 0),
	}
	cmd.AddCommand(newStateMigrateCmd(a))
	return cmd
}

func newStateMigrateCmd(a *app) *cobra.Command {
	var force bool
	var lockTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "migrate FROM TO",
		Short: "Copy a stack's state from one backend to another",
		Long: `migrate copies a stack's state from FROM to TO — a state file and a PostgreSQL
database (postgres://...), either way — with both locked meanwhile. A state of
another stack at TO is refused, and so are a newer one (its last change later
than FROM's) and another deployment of the stack (another hub.deploymentId,
whatever its age) unless --force. A state that a run holds is refused (exit 3), or
with --lock-timeout waited for. FROM is left as it was: point -s (or
GANTRY_STATE) at TO from now on, and remove FROM when you no longer need it.`,
		Example: `  gantry state migrate hub.yaml.state 'postgres://gantry@db:5432/platform?sslmode=require'
  gantry state migrate 'postgres://gantry@db/platform?stack=dev' dev.state`,
		Args: argsRange(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			lock, err := a.lockOptions(lockTimeout)
			if err != nil {
				return err
			}
			out, err := (&action.Migrate{From: args[0], To: args[1], Force: force, Lock: lock}).Run(cmd.Context())
			if err != nil {
				return a.failure(err)
			}
			if out.Same {
				fmt.Fprintf(a.stdout, "%s holds this state of stack %s already: nothing to copy\n", out.To, out.Stack)
			} else {
				fmt.Fprintf(a.stdout, "copied the state of stack %s (%d components) from %s to %s\n", out.Stack, out.Components, out.From, out.To)
			}
			if len(out.Moved) > 0 {
				fmt.Fprintf(a.stdout, "%d plugin data folder(s) of the deployment moved to %s, where runs on %s keep them\n", len(out.Moved), relPath(filepath.Join(out.Workspace, "state")), out.To)
			}
			if out.Rekeyed > 0 {
				fmt.Fprintf(a.stdout, "%d plugin data folder(s) of the deployment marked as %s's\n", out.Rekeyed, out.To)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "overwrite a newer state at TO")
	registerLockTimeout(cmd.Flags(), &lockTimeout)
	return cmd
}
