// Package cli holds gantry's cobra commands: they parse flags, call the packages
// below and print.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/lmittmann/tint"
	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/manifest"
	// The terraform plugin registers itself with the plugin registry.
	_ "github.com/gantry-dev/gantry/internal/plugin/terraform"
)

// app is what every command shares: the streams and the global flags.
type app struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	// errs is stderr as given (errs.w), which stderr writes through; nil
	// for an app that prints nothing (quiet).
	errs    *stderrStream
	verbose bool
	noColor bool
	log     *slog.Logger
	ttyOnce sync.Once
	tty     *ttyPrompter
}

// Main runs gantry with args (without the program name) and returns the exit code.
//
// A panic is a bug of gantry's, never of the input: it is reported as one,
// with its stack, and exits 1 — not 2, which says the input is wrong.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(stderr, "gantry: internal error: %v\nThis is a bug in gantry, not a problem of your input; please report it with what follows.\n%s", p, debug.Stack())
			code = ExitFailed
		}
	}()
	errs := &stderrStream{w: stderr}
	a := &app{stdin: stdin, stdout: stdout, stderr: errs, errs: errs}
	root := newRoot(a)
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	code = exitCode(err)
	// The trees of large files parsed on the way are cached only when the
	// input was valid: invalid input writes nothing.
	if invalidInput(err) {
		manifest.DropParsedTrees()
	} else {
		manifest.KeepParsedTrees()
	}
	if err != nil {
		var ee *exitError
		if !errors.As(err, &ee) || ee.err != nil {
			fmt.Fprintf(stderr, "gantry: %v\n", err)
		}
	}
	return code
}

func newRoot(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "gantry",
		Short: "Deploy and tear down stacks of interdependent components",
		Long: `gantry deploys and tears down stacks of interdependent components — databases,
cluster add-ons, Terraform modules, Helm charts, scripts — with parameters and
outputs flowing between them, independent work in parallel, and a state that
survives crashes. STACK defaults to hub.yaml in the current folder, else
acre.yaml (a sow landscape).

Exit codes: 0 success; 1 a run failed, or the state's database could not be
reached (nothing was run); 2 bad usage or invalid input, a database refusing
the URL's credentials included (nothing was run); 3 the state is locked by
another run; 130 the run was interrupted
(Ctrl-C, SIGTERM, SIGHUP), its running steps stopped and the state recording
what was done.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if os.Getenv("NO_COLOR") != "" {
				a.noColor = true
			}
			level := slog.LevelWarn
			if a.verbose {
				level = slog.LevelDebug
			}
			f, isFile := a.rawStderr().(*os.File)
			colour := !a.noColor && isFile && isTerminal(f) && !dumbTerminal()
			var h slog.Handler = tint.NewHandler(a.stderr, &tint.Options{Level: level, NoColor: !colour})
			if a.errs != nil && a.verbose {
				h = levelSplit{low: tint.NewHandler(a.errs.logs(), &tint.Options{Level: level, NoColor: !colour}), high: h}
			}
			a.log = slog.New(h)
			slog.SetDefault(a.log)
			return nil
		},
	}
	root.PersistentFlags().BoolVarP(&a.verbose, "verbose", "v", false, "print debug logs on stderr: phases and their timings, the lock, processes started and ended (never their arguments)")
	root.PersistentFlags().BoolVar(&a.noColor, "no-color", false, "no colours in the output (also NO_COLOR)")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		if strings.Contains(err.Error(), "unknown shorthand flag: 'o'") && cmd.Flags().Lookup("output") != nil {
			return usageError("-o is not a flag of gantry %s: for the output format, use --output (gantry %s --output json)", cmd.Name(), cmd.Name())
		}
		return withCode(ExitInvalid, err)
	})
	root.AddCommand(
		newVersionCmd(a),
		newValidateCmd(a),
		newElaborateCmd(a),
		newParamsCmd(a),
		newPlanCmd(a),
		newDeployCmd(a),
		newUndeployCmd(a),
		newExplainCmd(a),
		newOrderCmd(a),
		newUnlockCmd(a),
		newStateCmd(a),
		newInvokeCmd(a),
		newRenderCmd(a),
		newLogsCmd(a),
		newReportCmd(a),
		newPullCmd(a),
		newWorkerCmd(a),
	)
	return root
}

// rawStderr is stderr as given, for what writes where the cursor is (a
// prompt, which is not a whole line) or needs the file (is it a terminal?).
func (a *app) rawStderr() io.Writer {
	if a.errs != nil {
		return a.errs.w
	}
	return a.stderr
}

// exactArgs and friends turn cobra's argument errors into usage errors (exit 2).
func argsRange(min, max int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.RangeArgs(min, max)(cmd, args); err != nil {
			return withCode(ExitInvalid, fmt.Errorf("%s: %w\nRun '%s --help' for usage.", cmd.Name(), err, cmd.CommandPath()))
		}
		return nil
	}
}

func minArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.MinimumNArgs(n)(cmd, args); err != nil {
			return withCode(ExitInvalid, fmt.Errorf("%s: %w\nRun '%s --help' for usage.", cmd.Name(), err, cmd.CommandPath()))
		}
		return nil
	}
}
