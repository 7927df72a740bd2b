package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/state"
)

// The manifests a command finds in the current folder when it is given no
// STACK: a Hub stack, else a sow landscape.
const (
	hubManifest  = "hub.yaml"
	acreManifest = "acre.yaml"
)

// stackArgs are a command's arguments with its STACK: the first argument,
// else hub.yaml in the current folder, else acre.yaml.
func stackArgs(args []string) ([]string, error) {
	if len(args) > 0 {
		return args, nil
	}
	for _, m := range []string{hubManifest, acreManifest} {
		if fi, err := os.Stat(m); err == nil && !fi.IsDir() {
			return []string{m}, nil
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		wd = "the current folder"
	}
	return nil, usageError("no STACK given, and no %s or %s in %s to take instead", hubManifest, acreManifest, wd)
}

// stackFlags are the flags of commands that read a stack and its state.
type stackFlags struct {
	statePath string
	env       []string
	// consequence ends the error report: what the command did not do.
	consequence string
	// graphOnly says the command reads the component graph and no more
	// (order): a sow landscape's deployment manifests are not evaluated.
	graphOnly bool
}

func (f *stackFlags) said() string {
	if f.consequence == "" {
		return "nothing was run"
	}
	return f.consequence
}

func (f *stackFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.statePath, "state", "s", "", "state: a file, file://PATH or postgres://... (default: $GANTRY_STATE when it is a postgres:// URL, else <manifest>.state next to the manifest)")
	cmd.Flags().StringArrayVarP(&f.env, "env", "e", nil, "NAME=VALUE: environment for fromEnv (repeat or separate with commas)")
}

// source is the stack the arguments name: the manifest, then params files.
func (f *stackFlags) source(args []string) (action.Source, error) {
	env, err := envOverrides(f.env)
	if err != nil {
		return action.Source{}, err
	}
	return action.Source{Manifest: args[0], ParamsFiles: args[1:], StatePath: stateOrEnv(f.statePath, ""), Env: env, GraphOnly: f.graphOnly}, nil
}

// stackGiven is the stack as the command was given it, for the commands a
// plan suggests: the manifest, the params files and -s. A database URL's
// password is hidden: the plan is printed, and the user has it.
func (f *stackFlags) stackGiven(args []string) []string {
	given := slices.Clone(args)
	if f.statePath != "" {
		given = append(given, "-s", state.Redact(f.statePath))
	}
	return given
}

// stateOrEnv is the state a command was given (-s), else GANTRY_STATE when
// it names a database (a team's shared state, set once in the shell or CI),
// else def. A file path in GANTRY_STATE is the state of the run a component
// runs in, set by gantry itself: a stack deployed from inside a component
// keeps its own state file.
func stateOrEnv(flag, def string) string {
	if flag != "" {
		return flag
	}
	if env := os.Getenv("GANTRY_STATE"); state.IsDatabase(env) {
		return env
	}
	return def
}

// envOverrides parses -e flags: NAME=VALUE, several per flag separated by
// commas; a piece without "=" belongs to the value before it, so that
// -e LIST=a,b keeps its comma.
func envOverrides(flags []string) (map[string]string, error) {
	env := map[string]string{}
	for _, f := range flags {
		last := ""
		for _, piece := range strings.Split(f, ",") {
			k, v, ok := strings.Cut(piece, "=")
			switch {
			case ok && k != "":
				env[k], last = v, k
			case last != "":
				env[last] += "," + piece
			default:
				return nil, usageError("-e %q: expected NAME=VALUE", f)
			}
		}
	}
	return env, nil
}

// loadStack elaborates the stack (or reads an elaborated file) and reads its
// state. Invalid input is reported and ends the command with exit code 2.
func (a *app) loadStack(args []string, f *stackFlags) (*action.Stack, error) {
	src, err := f.source(args)
	if err != nil {
		return nil, err
	}
	st, err := action.Load(src, f.said())
	if err != nil {
		return nil, a.failure(err)
	}
	return st, nil
}

// failure turns what an action returned into the command's end: invalid
// input prints its diagnostics and exits 2, a locked state exits 3, a run
// with nothing to do says so and succeeds.
func (a *app) failure(err error) error {
	var ie *action.InvalidError
	var le *action.LockedError
	var nothing *action.Nothing
	var detached *action.DetachedError
	var busy *component.RegistryBusyError
	var stopped *action.InterruptedError
	switch {
	case err == nil:
		return nil
	case a.tty != nil && a.tty.interrupted != "":
		// Whatever the lock made of the prompt's error: the person at the
		// terminal stopped gantry.
		return withCode(ExitInterrupted, fmt.Errorf("interrupted at the prompt for %s", a.tty.interrupted))
	case errors.As(err, &detached), errors.As(err, &stopped):
		return withCode(ExitInterrupted, err)
	case state.IsUnavailable(err):
		// Whatever the command made of it: the state's backend could not
		// be reached, which no input mends (exit 1, not 2).
		return withCode(ExitFailed, err)
	case state.IsRefused(err):
		// Whatever the command made of it: the credentials or the
		// database the URL names are wrong (exit 2, as input).
		return withCode(ExitInvalid, err)
	case errors.As(err, &nothing):
		fmt.Fprintln(a.stdout, nothing.Reason)
		return nil
	case errors.As(err, &ie) && ie.Err == nil:
		return reportDiags(a.stderr, ie.Diags, ie.Consequence)
	case errors.As(err, &ie):
		return withCode(ExitInvalid, ie.Err)
	case errors.As(err, &le), errors.As(err, &busy):
		return withCode(ExitLocked, err)
	}
	var sle *state.LockedError
	if errors.As(err, &sle) {
		return withCode(ExitLocked, err)
	}
	return err
}

// warn prints warnings about the input on stderr.
func (a *app) warn(diags manifest.Diagnostics) {
	printWarnings(a.stderr, diags.Sorted().Warnings())
}

// terminal is what the actions may ask the person at the terminal: nothing
// when stdin is not one (CI, pipes).
func (a *app) terminal() action.Terminal {
	p := a.prompter()
	if p == nil {
		return action.Terminal{}
	}
	return action.Terminal{Prompter: p, Ask: a.ask}
}

// lockParams locks the top-level parameters with the OS environment, -e
// overrides, the state and, on a terminal, prompts.
func (a *app) lockParams(st *action.Stack, consequence string) error {
	return a.failure(st.LockParams(a.terminal(), false, a.warn, consequence))
}

// componentRef returns the stack's entry for a component.
func componentRef(s *manifest.Stack, name string) *manifest.ComponentRef {
	for i := range s.Components {
		if s.Components[i].Name == name {
			return &s.Components[i]
		}
	}
	return nil
}

// relPath shortens a path for display when it is below the working directory.
func relPath(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	if r, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// formats are the output formats of gantry's commands.
var formats = []string{"text", "json", "yaml", "dot", "mermaid", "html"}

// fileNotFormat refuses -o FORMAT where -o names the file a command writes:
// "gantry elaborate hub.yaml -o json" means a format, not a file named json.
// A file of that name is ./json.
func fileNotFormat(out, what string) error {
	if slices.Contains(formats, out) {
		return usageError("-o %s: -o names the file to write (%s), not a format; for a file named %s, write -o ./%s", out, what, out, out)
	}
	return nil
}
