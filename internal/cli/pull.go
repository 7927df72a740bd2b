package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/ui"
)

func newPullCmd(a *app) *cobra.Command {
	var force bool
	var parallel int
	cmd := &cobra.Command{
		Use:   "pull [STACK]",
		Short: "Fetch the sources of components that come from Git into their folders",
		Long: `pull fetches the sources of every component whose stack entry names a Git
repository (source.git: remote, ref, subDir), in the stack and its base stacks, as
the Hub CLI's pull does. A component with dir and subDir gets that folder of the
repository in dir; one without subDir gets a clone of the whole repository in its
folder, and a later pull updates the clone (a fast-forward pull); one without dir
gets the Hub's layout: a clone named after the component, whose subDir it reads.
A repository is cloned once (shallow, the ref's branch or tag only), however many
components take folders of it; git never prompts for credentials.

pull replaces a folder it filled before (it leaves a .gantry-pull file there) and
never one that holds other files, unless --force. A folder is swapped in whole:
an interrupted pull leaves the old sources or the new ones. pull changes nothing
outside the folder of the stack that lists the component, never that folder
itself nor one holding a stack file or the state.`,
		Example: `  gantry pull hub.yaml
  gantry pull hub.yaml --force`,
		Args: argsRange(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := stackArgs(args)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("parallel") && (parallel < 1 || parallel > manifest.MaxParallel) {
				return usageError("--parallel %d: expected a number of repositories to clone at once from 1 to %d", parallel, manifest.MaxParallel)
			}
			sty := ui.Style{Color: a.color()}
			plain := ui.NewPlain(a.stdout, sty)
			p, err := (&action.Pull{Stack: args[0], Force: force, Parallel: parallel, Display: plain, Warn: a.warn}).Run(cmd.Context())
			plain.Idle()
			if p != nil && p.Folders == 0 && err == nil {
				fmt.Fprintf(a.stdout, "no component of stack %s comes from Git: nothing to pull\n", p.Stack)
				return nil
			}
			if err != nil {
				if action.IsInvalid(err) {
					return a.failure(err)
				}
				return withCode(ExitFailed, err)
			}
			fmt.Fprintf(a.stdout, "pulled %d component folders of stack %s\n", p.Folders, p.Stack)
			return nil
		},
	}
	cmd.Flags().BoolVarP(&force, "force", "f", false, "replace folders that hold files an earlier pull did not put there")
	cmd.Flags().IntVar(&parallel, "parallel", action.DefaultPullParallel, "repositories to clone at once")
	return cmd
}
