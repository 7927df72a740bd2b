package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/report"
)

func newReportCmd(a *app) *cobra.Command {
	var statePath, out string
	cmd := &cobra.Command{
		Use:   "report [RUN]",
		Short: "Write the HTML report of a run (the latest unless named)",
		Long: `report writes the report of a run: one self-contained HTML page (nothing is
fetched when it is opened) with the component graph coloured by outcome, a
timeline of components and steps with the waiting before each and the
critical path, each component's parameters with their sources, its outputs and
its log (failing lines first, searchable), the summary and the plan's reasons.
Secrets are masked, as in the logs it is made from.

Every run writes its report next to its logs, in .gantry/runs/<run>/report.html;
report writes it again from the run's folder — into that file, or with -o into
another (- for standard output). RUN is a run id from 'gantry explain --runs',
or a prefix of one; without it, the latest run.`,
		Example: `  gantry report
  gantry report 20261121T1914 -o deploy.html
  gantry report -s prod/hub.yaml.state -o - > report.html`,
		Args: argsRange(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if fi, err := os.Stat(out); out != "" && out != "-" && err == nil && fi.IsDir() {
				return usageError("-o %s is a directory: expected the path of the file to write", out)
			}
			if err := fileNotFormat(out, "report writes one HTML page"); err != nil {
				return err
			}
			run, err := a.findRun(statePath, args)
			if err != nil {
				return err
			}
			m, err := report.LoadRun(run.Dir)
			if err != nil {
				return fmt.Errorf("the report of run %s: %w", run.ID, err)
			}
			// Masked again with the secrets the state knows now (gantry logs).
			if mask := stateMasker(cmd.Context(), statePath); !mask.Empty() {
				m.Remask(mask.Text)
			}
			if out == "-" {
				return report.Write(a.stdout, m)
			}
			path := out
			if path == "" {
				path = filepath.Join(run.Dir, report.ReportFile)
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return fmt.Errorf("write the report: %w", err)
			}
			if err := report.WriteFile(path, m); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "report of run %s: %s\n", run.ID, relPath(path))
			return nil
		},
	}
	cmd.Flags().StringVarP(&statePath, "state", "s", "", "state file (default hub.yaml.state); its runs are in .gantry/runs next to it")
	cmd.Flags().StringVarP(&out, "output", "o", "", "the file to write (default: report.html in the run's folder; - for standard output)")
	cmd.ValidArgsFunction = a.runIDs
	return cmd
}
