package cli

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/state"
)

// engineOrEnv is the --engine a command runs with: the flag, else
// GANTRY_ENGINE, else "" (the local executor).
func engineOrEnv(flag string) string {
	if flag != "" {
		return flag
	}
	return os.Getenv("GANTRY_ENGINE")
}

func newWorkerCmd(a *app) *cobra.Command {
	var engineURL, dir, statePath string
	var parallel int
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Carry out the steps of runs started with --engine temporal://…",
		Long: `worker takes steps of the plans that gantry deploy and undeploy started with
--engine temporal://HOST:PORT/NAMESPACE and carries them out, as a local run
would: each run is rebuilt from this worker's checkout of the stack (--dir)
and refused if it differs from the one the run was started from. Run as many
workers, on as many machines, as you like; each runs up to --parallel steps
at once. The state must be in PostgreSQL: give its URL with -s (or
GANTRY_STATE), or let each run's URL be used with PGPASSWORD or ~/.pgpass.
A worker that dies has its steps' processes killed by its reaper, and the
run carries on elsewhere where components declare lifecycle.idempotent
(docs/temporal.md). Stop it with Ctrl-C or SIGTERM.`,
		Example: `  gantry worker --engine temporal://temporal.internal:7233/default --parallel 4
  GANTRY_ENGINE=temporal://localhost:7233/default gantry worker --dir ~/src/infra`,
		Args: argsRange(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			loc := engineOrEnv(engineURL)
			if loc == "" {
				return usageError("worker needs --engine temporal://HOST:PORT/NAMESPACE (or GANTRY_ENGINE)")
			}
			if parallel < 1 || parallel > manifest.MaxParallel {
				return usageError("--parallel %d: expected a number of steps to run at once from 1 to %d", parallel, manifest.MaxParallel)
			}
			eng, err := action.OpenEngine(loc)
			if err != nil {
				return a.failure(err)
			}
			if eng == nil {
				return usageError("--engine %s: a worker takes steps from a remote engine (temporal://…)", loc)
			}
			st := stateOrEnv(statePath, "")
			if st != "" && !state.IsDatabase(st) {
				return usageError("-s %s: a worker's state is a postgres:// URL", state.Redact(st))
			}
			abs, err := filepath.Abs(dir)
			if err != nil {
				return usageError("--dir %s: %v", dir, err)
			}
			if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
				return usageError("--dir %s: expected the folder of a checkout", dir)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return eng.Work(ctx, action.WorkerOptions{Dir: abs, State: st, Parallel: parallel, Ready: func(name string) {
				fmt.Fprintf(a.stdout, "gantry worker %s: taking steps from %s, %d at once, from the checkout %s\n", name, loc, parallel, abs)
			}})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&engineURL, "engine", "", "the Temporal server and namespace: temporal://HOST:PORT/NAMESPACE (default: $GANTRY_ENGINE)")
	fl.StringVar(&dir, "dir", ".", "the checkout of the stacks' repository the worker runs steps from")
	fl.StringVarP(&statePath, "state", "s", "", "the state database's URL with this worker's credentials (default: $GANTRY_STATE)")
	fl.IntVar(&parallel, "parallel", 1, "run up to N steps at once")
	return cmd
}
