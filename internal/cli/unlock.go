package cli

import (
	"errors"
	"fmt"
	"strings"

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
			location := stateOrEnv(statePath, defaultState())
			store, anchor, err := action.OpenState(location, "", "")
			if err != nil {
				return a.failure(err)
			}
			defer store.Close()
			if missing(location) {
				fmt.Fprintf(a.stdout, "no state at %s, and no lock: nothing to unlock%s\n", relPath(anchor), otherStatesHere(anchor))
				return nil
			}
			res, err := store.Unlock(cmd.Context())
			var le *state.LockedError
			if errors.As(err, &le) {
				if le.Holder != nil && le.Holder.Workflow != "" {
					return withCode(ExitLocked, fmt.Errorf("%w; a run on Temporal workers holds it: gantry deploy --engine temporal://… attaches to it, and gives the lock back if its workflow is gone (docs/temporal.md)", le))
				}
				if le.Regaining.FreeIn > 0 {
					return withCode(ExitLocked, fmt.Errorf("%w; it is not broken meanwhile: the run may be taking it back", le))
				}
				return withCode(ExitLocked, fmt.Errorf("%w; it is held: stop that run first (a lock that is held is never broken)", le))
			}
			if err != nil {
				return a.failure(err)
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
	cmd.Flags().StringVarP(&statePath, "state", "s", "", "state: a file, file://PATH or postgres://... (default: $GANTRY_STATE when it is a postgres:// URL, else hub.yaml.state, or acre.yaml.state in a landscape's folder)")
	cmd.Flags().BoolVar(&force, "force", false, "no effect: a lock that is held is never broken")
	_ = cmd.Flags().MarkHidden("force")
	return cmd
}

// missing reports whether a state file location holds neither a state nor
// a lock (a database's state is never missing here: its backend says).
func missing(location string) bool {
	if state.IsDatabase(location) {
		return false
	}
	for _, l := range state.SplitLocations(location) {
		p := strings.TrimPrefix(l, "file://")
		if state.IsDatabase(l) || exists(p) || exists(state.LockPath(p)) || exists(state.JournalPath(p)) {
			return false
		}
	}
	return true
}
