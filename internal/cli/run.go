package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/report"
	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/ui"
)

// runFlags are the flags of deploy and undeploy.
type runFlags struct {
	stackFlags
	components    []string
	withDeps      bool
	offset, limit string
	parallel      int
	// flags tells which flags were given (--parallel 0 is an error, its
	// absence is not).
	flags         *pflag.FlagSet
	resume        bool
	dryRun        bool
	yes           bool
	force         bool
	output        string
	showQueue     bool
	osEnvironment string
	lockTimeout   time.Duration
	engine        string
}

func (f *runFlags) register(cmd *cobra.Command, verb string) {
	f.stackFlags.register(cmd)
	fl := cmd.Flags()
	f.flags = fl
	fl.StringSliceVarP(&f.components, "components", "c", nil, "run only these components (a,b)")
	what := "what they depend on"
	if verb == plan.VerbUndeploy {
		what = "what depends on them"
	}
	fl.BoolVarP(&f.withDeps, "with-deps", "a", false, "with -c, add "+what)
	fl.StringVarP(&f.offset, "offset", "o", "", "start at this component")
	fl.StringVarP(&f.limit, "limit", "l", "", "stop after this component")
	fl.IntVar(&f.parallel, "parallel", 0, "run up to N steps at once (default: lifecycle.parallel, else 1)")
	fl.BoolVar(&f.resume, "resume", false, "skip components deployed with an unchanged fingerprint")
	if verb == plan.VerbUndeploy {
		// Accepted as it always was, and said to do nothing (runVerb): a
		// script that passes it to both verbs keeps working.
		_ = fl.MarkHidden("resume")
	}
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the plan and run nothing")
	fl.BoolVar(&f.yes, "yes", false, "approve every gate")
	force := "after a mandatory component fails, go on with independent components"
	if verb == plan.VerbUndeploy {
		force += "; with -c, in a sow landscape, forget the components named none of whose records are in its folder"
	}
	fl.BoolVar(&f.force, "force", false, force)
	fl.StringVar(&f.output, "output", "text", "text, or json for one event per line")
	fl.BoolVar(&f.showQueue, "show-queue", false, "on a terminal, list the components waiting to start and what each waits for")
	fl.StringVar(&f.osEnvironment, "os-environment", "", "\"everything\" keeps TF_VAR_* variables in components' environment")
	registerSelection(cmd)
	registerLockTimeout(fl, &f.lockTimeout)
	fl.StringVar(&f.engine, "engine", "", "run the steps on Temporal workers: temporal://HOST:PORT/NAMESPACE (default: $GANTRY_ENGINE, else here; docs/temporal.md)")
}

func (f *runFlags) selection() build.Selection {
	return build.Selection{Components: f.components, WithDeps: f.withDeps, Offset: f.offset, Limit: f.limit}
}

func newDeployCmd(a *app) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "deploy [STACK|ELABORATE] [PARAMS...]",
		Short: "Deploy a stack: every component in dependency order, in parallel where it can",
		Long: `deploy elaborates the stack (writing <manifest>.elaborate) or reads an elaborated
file, locks its parameters, builds the plan and runs it: each component's
implementation with its parameters, outputs flowing to the next. The state
(<manifest>.state) is written after every step and locked against a second run.
Invalid input stops everything before anything runs (exit 2).`,
		Example: `  gantry deploy hub.yaml params.yaml
  gantry deploy hub.yaml --parallel 4
  gantry deploy hub.yaml -c api -a        # api and what it depends on
  gantry deploy hub.yaml --resume         # only what changed or failed`,
		Args: minArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runVerb(cmd.Context(), plan.VerbDeploy, args, &f)
		},
	}
	f.register(cmd, plan.VerbDeploy)
	_ = cmd.RegisterFlagCompletionFunc("output", fixed("text", "json"))
	return cmd
}

func newUndeployCmd(a *app) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "undeploy [STACK|ELABORATE] [PARAMS...]",
		Short: "Undeploy a stack in reverse order, from what the state recorded",
		Long: `undeploy runs each deployed component's undeploy in the reverse of the deploy
order, with the parameters recorded in the state, so it works after the
manifest changed. Components that were never deployed are skipped. Undeploying a
component that a deployed component still depends on is refused unless that
one is selected too (-a selects what depends on the selection).`,
		Example: `  gantry undeploy hub.yaml
  gantry undeploy hub.yaml -c db -a`,
		Args: minArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.resume {
				fmt.Fprintln(a.stderr, "warning: an undeploy tears down every deployed component whatever its fingerprint: --resume changes nothing")
			}
			return a.runVerb(cmd.Context(), plan.VerbUndeploy, args, &f)
		},
	}
	f.register(cmd, plan.VerbUndeploy)
	_ = cmd.RegisterFlagCompletionFunc("output", fixed("text", "json"))
	return cmd
}

// runVerb carries out a deploy or an undeploy (or with --dry-run prints its
// plan).
func (a *app) runVerb(ctx context.Context, verb string, args []string, f *runFlags) error {
	args, err := stackArgs(args)
	if err != nil {
		return err
	}
	if fl := f.flags; fl != nil && fl.Changed("parallel") && (f.parallel < 1 || f.parallel > manifest.MaxParallel) {
		return usageError("--parallel %d: expected a number of steps to run at once from 1 to %d", f.parallel, manifest.MaxParallel)
	}
	if fl := f.flags; fl != nil && fl.Changed("components") {
		empty := len(f.components) == 0
		for _, c := range f.components {
			empty = empty || strings.TrimSpace(c) == ""
		}
		if empty {
			return usageError("-c %q: an empty component name", strings.Join(f.components, ","))
		}
	}
	if f.output != "text" && f.output != "json" {
		return usageError("--output %q: expected text or json", f.output)
	}
	if f.osEnvironment != "" && f.osEnvironment != "everything" {
		return usageError("--os-environment %q: expected everything", f.osEnvironment)
	}
	lock, err := a.lockOptions(f.lockTimeout)
	if err != nil {
		return err
	}
	src, err := f.source(args)
	if err != nil {
		return err
	}
	src.Lock = lock
	if f.dryRun {
		if f.parallel < 0 {
			return usageError("--parallel %d: expected a positive number", f.parallel)
		}
		p, err := (&action.Plan{Source: src, Verb: verb, Selection: f.selection(), Resume: f.resume, Force: f.force, Terminal: a.terminal(), Warn: a.warn}).Run(ctx)
		if err != nil {
			return a.failure(err)
		}
		if f.output == "json" {
			// What gantry plan --output json prints: a machine asked.
			return p.WriteJSON(a.stdout)
		}
		// As gantry plan prints it: labels from manifests (someone
		// else's, after gantry pull) reach the terminal without their
		// escape sequences.
		var text strings.Builder
		if err := p.WriteText(&text, plan.RenderOptions{Stack: f.stackGiven(args)}); err != nil {
			return err
		}
		_, err = io.WriteString(a.stdout, ui.SanitizeLines(strings.ReplaceAll(text.String(), "\r", " ")))
		return err
	}
	opts := action.RunOptions{
		Source: src, Selection: f.selection(), Parallel: f.parallel, Resume: f.resume, Yes: f.yes, Force: f.force,
		KeepTFVars: f.osEnvironment == "everything", Terminal: a.terminal(), Warn: a.warn, Display: a.display(f.output, ui.TTYOptions{ShowQueue: f.showQueue}),
		Interrupted: a.interrupted, Engine: engineOrEnv(f.engine),
	}
	var out *action.Outcome
	if verb == plan.VerbDeploy {
		out, err = (&action.Deploy{RunOptions: opts}).Run(ctx)
	} else {
		out, err = (&action.Undeploy{RunOptions: opts}).Run(ctx)
	}
	if err == nil && f.output != "json" {
		a.printReport(out)
	}
	return a.runEnd(out, err)
}

// printReport says where the run's report is, after where its logs are,
// or how to write it when the run did not (a very large run).
func (a *app) printReport(out *action.Outcome) {
	path := filepath.Join(out.LogDir, report.ReportFile)
	if _, err := os.Stat(path); err == nil {
		fmt.Fprintf(a.stdout, "report: %s\n", relPath(path))
	} else if _, err := os.Stat(filepath.Join(out.LogDir, report.PlanFile)); err == nil {
		fmt.Fprintf(a.stdout, "report: gantry report %s writes it\n", out.RunID)
	}
}

// interrupted says what an interrupt does, on stderr (the display may be
// the terminal's whole screen; on a live display's terminal, above the live
// area, whose header then says the run is stopping).
func (a *app) interrupted(second bool) {
	if a.errs != nil {
		if live := a.errs.liveDisplay(); live != nil {
			live.Interrupted(second)
		}
	}
	if second {
		fmt.Fprintln(a.stderr, "\ngantry: interrupted again: stopping every process now")
		return
	}
	fmt.Fprintf(a.stderr, "\ngantry: interrupted: stopping the running steps (their processes get up to %s to end; interrupt again to stop them at once)\n", component.StopGrace())
}

// runEnd is the exit of a run: 0 when it succeeded, 1 when it failed (the
// summary said how), 130 when it was interrupted.
func (a *app) runEnd(out *action.Outcome, err error) error {
	if err != nil && out != nil && out.Status == action.StatusInterrupted {
		// An interrupted run whose state could not all be written (the
		// database away, the wait for it stopped): interrupted all the
		// same, and the error says what the state lacks.
		return withCode(ExitInterrupted, err)
	}
	if err != nil {
		return a.failure(err)
	}
	switch out.Status {
	case action.StatusInterrupted:
		if out.NothingRan {
			return withCode(ExitInterrupted, errors.New("interrupted before any component ran; nothing was run"))
		}
		return withCode(ExitInterrupted, errors.New("interrupted; the state records what was done"))
	case action.StatusFailed:
		// A run stopped before any component ran (the installation
		// handler's prepare, a pre-flight check) says why where errors go.
		if h := out.Halt; h != nil && h.Component == "" && out.NothingRan {
			what := "no component ran"
			if h.Kind == plan.KindHandler && strings.HasSuffix(h.ID, "/prepare") {
				what = "nothing was run"
			}
			return withCode(ExitFailed, fmt.Errorf("%s failed: %s; %s", out.HaltLabel(), strings.TrimSpace(out.HaltReason()), what))
		}
		// Nothing the summary marks as a failure of the run failed it:
		// it says why it failed.
		if why := out.UndoneReason(); why != "" {
			return withCode(ExitFailed, errors.New("the run failed: "+why))
		}
		return silentExit(ExitFailed)
	}
	return nil
}

// registerLockTimeout registers --lock-timeout, of the commands that take
// the state's lock (deploy, undeploy, invoke, state migrate).
func registerLockTimeout(fl *pflag.FlagSet, d *time.Duration) {
	fl.DurationVar(d, "lock-timeout", 0, "wait up to this long (30s, 10m) for the state's lock another run holds, instead of failing at once")
}

// lockOptions is how a run waits for the state's lock: up to timeout
// (--lock-timeout), saying whom it waits for.
func (a *app) lockOptions(timeout time.Duration) (state.LockOptions, error) {
	if timeout < 0 {
		return state.LockOptions{}, usageError("--lock-timeout %s: expected a duration of 0 or more (30s, 10m)", timeout)
	}
	return state.LockOptions{Timeout: timeout, Waiting: a.lockWaiting}, nil
}

// lockWaiting tells the person waiting for the state's lock who holds it,
// each time the holder changes.
func (a *app) lockWaiting(h *state.Holder) {
	if h == nil {
		fmt.Fprintln(a.stderr, "waiting for the state's lock, held by another gantry run")
		return
	}
	fmt.Fprintf(a.stderr, "waiting for the state's lock, held by %s\n", h)
}
