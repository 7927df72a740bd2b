package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/ui"
	"github.com/gantry-dev/gantry/internal/workspace"
)

// runsDir is where the runs of the stack with this state keep their folders.
func runsDir(statePath string) string {
	abs, err := filepath.Abs(statePath)
	if err != nil {
		abs = statePath
	}
	return workspace.For(abs).RunsDir()
}

// writeRuns lists recent runs (explain --runs).
func writeRuns(w io.Writer, statePath string, limit int) error {
	runs, err := ui.ListRuns(runsDir(statePath))
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		fmt.Fprintf(w, "no runs recorded in %s\n", relPath(runsDir(statePath)))
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tVERB\tSTARTED\tDURATION\tSTATUS\tCOMPONENTS")
	for i, r := range runs {
		if limit > 0 && i >= limit {
			break
		}
		started, dur := "-", "-"
		if !r.Started.IsZero() {
			started = r.Started.UTC().Format("2006-01-02 15:04:05Z")
		}
		if r.Duration > 0 {
			dur = ui.FormatDuration(r.Duration)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, orDash(r.Verb), started, dur, r.Status, r.Counts())
	}
	return tw.Flush()
}

func newLogsCmd(a *app) *cobra.Command {
	var statePath, comp string
	cmd := &cobra.Command{
		Use:   "logs [RUN]",
		Short: "Print the logs of a run (the latest unless named)",
		Long: `logs prints the logs a run kept in .gantry/runs/<run>/ next to the state: every
component's log in the order the run met them, or with -c just one. RUN is a
run id from 'gantry explain --runs', or a prefix of one; without it, the latest run.`,
		Example: `  gantry logs
  gantry logs -c db
  gantry logs 20261121T1914 -c api`,
		Args: argsRange(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			run, err := a.findRun(statePath, args)
			if err != nil {
				return err
			}
			names, paths := ui.Logs(run.Dir)
			if comp != "" {
				p, ok := paths[comp]
				if !ok {
					return usageError("run %s has no log of %q (logs: %s)", run.ID, comp, strings.Join(names, ", "))
				}
				return copyFile(a.stdout, p)
			}
			for i, n := range names {
				if i > 0 {
					fmt.Fprintln(a.stdout)
				}
				fmt.Fprintf(a.stdout, "== %s (%s)\n", n, relPath(paths[n]))
				if err := copyFile(a.stdout, paths[n]); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&statePath, "state", "s", "", "state file (default hub.yaml.state); its runs are in .gantry/runs next to it")
	cmd.Flags().StringVarP(&comp, "component", "c", "", "only this component's log")
	return cmd
}

// findRun finds the run args name (a run id or a prefix of one), or
// without it the latest, among the runs of the stack whose state is at
// statePath (hub.yaml.state, or GANTRY_STATE, when empty). No run, or a
// name that matches none or several, is bad usage.
func (a *app) findRun(statePath string, args []string) (ui.RunInfo, error) {
	store, statePath, err := action.OpenState(stateOrEnv(statePath, "hub.yaml.state"), "", "")
	if err != nil {
		return ui.RunInfo{}, a.failure(err)
	}
	store.Close() // the runs are files next to the state, or to where it would be
	runs, err := ui.ListRuns(runsDir(statePath))
	if err != nil {
		return ui.RunInfo{}, fmt.Errorf("list the runs in %s: %w", relPath(runsDir(statePath)), err)
	}
	if len(runs) == 0 {
		return ui.RunInfo{}, usageError("no runs recorded in %s", relPath(runsDir(statePath)))
	}
	if len(args) == 0 {
		return runs[0], nil
	}
	var found []ui.RunInfo
	for _, r := range runs {
		if strings.HasPrefix(r.ID, args[0]) {
			found = append(found, r)
		}
	}
	switch len(found) {
	case 0:
		return ui.RunInfo{}, usageError("no run %q (gantry explain --runs lists them)", args[0])
	case 1:
		return found[0], nil
	}
	return ui.RunInfo{}, usageError("%q matches %d runs; give more of the id", args[0], len(found))
}

func copyFile(w io.Writer, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}
