package cli

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/state"
)

// stackFlags are the flags of commands that read a stack and its state.
type stackFlags struct {
	statePath string
	env       []string
	// consequence ends the error report: what the command did not do.
	consequence string
}

func (f *stackFlags) said() string {
	if f.consequence == "" {
		return "nothing was run"
	}
	return f.consequence
}

func (f *stackFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.statePath, "state", "s", "", "state file (default: <manifest>.state next to the manifest)")
	cmd.Flags().StringArrayVarP(&f.env, "env", "e", nil, "NAME=VALUE: environment for fromEnv (repeat or separate with commas)")
}

// defaultStatePath is <manifest>.state next to the manifest given; for an
// elaborated file, next to it without .elaborate.
func defaultStatePath(manifestPath string) string {
	return strings.TrimSuffix(manifestPath, elaborate.Suffix) + ".state"
}

// loaded is a stack ready for a command: elaborated, with its state and locked
// parameters.
type loaded struct {
	res       *elaborate.Result
	statePath string
	state     *state.State // nil when there is none yet
	locked    *params.Locked
	env       map[string]string // -e overrides
	stateSum  [32]byte          // of the state file as read, to notice changes
	read      bool              // the state was read (stateSum is set)
	said      string            // what invalid input means for the command
}

// loadStack elaborates the stack (or reads an elaborated file) and reads its
// state. Invalid input is reported and ends the command with exit code 2.
func (a *app) loadStack(args []string, f *stackFlags) (*loaded, error) {
	overrides, err := envOverrides(f.env)
	if err != nil {
		return nil, err
	}
	// -e acts as the environment when parameters are locked (source env:VAR),
	// not as values written into the manifest.
	res, diags := elaborate.Load(args[0], elaborate.Options{ParamsFiles: args[1:]})
	if err := reportDiags(a.stderr, diags, f.said()); err != nil {
		return nil, err
	}
	l := &loaded{res: res, statePath: f.statePath, env: overrides, said: f.said()}
	if l.statePath == "" {
		l.statePath = defaultStatePath(args[0])
	}
	if l.statePath, err = statePathOf(l.statePath); err != nil {
		return nil, err
	}
	if err := l.readState(); err != nil {
		return nil, err
	}
	return l, nil
}

// readState reads the state, refusing one that belongs to another stack.
func (l *loaded) readState() error {
	data, err := os.ReadFile(l.statePath)
	sum := sha256.Sum256(data)
	if l.read && sum == l.stateSum {
		return nil // read before, unchanged since
	}
	var st *state.State
	switch {
	case errors.Is(err, os.ErrNotExist):
		err = nil // no state yet
	case err != nil:
		return withCode(ExitInvalid, fmt.Errorf("read state %s: %w", l.statePath, err))
	default:
		st, err = state.Decode(l.statePath, data)
	}
	if err != nil {
		return withCode(ExitInvalid, err)
	}
	if st != nil && st.Stack != "" && st.Stack != l.res.Stack.Meta.Name {
		return withCode(ExitInvalid, fmt.Errorf("state %s belongs to stack %q, not %q; point -s at this stack's state", l.statePath, st.Stack, l.res.Stack.Meta.Name))
	}
	l.state, l.stateSum, l.read = st, sum, true
	return nil
}

// statePathOf accepts a path or a file:// URL (DESIGN section 8).
func statePathOf(s string) (string, error) {
	switch {
	case strings.HasPrefix(s, "file://"):
		return strings.TrimPrefix(s, "file://"), nil
	case strings.HasPrefix(s, "postgres://"), strings.HasPrefix(s, "postgresql://"):
		return "", usageError("--state %s: the PostgreSQL state backend is not part of this build yet; use a file", redactURL(s))
	case strings.Contains(s, "://"):
		return "", usageError("--state %q: expected a file path or file://PATH", s)
	}
	return s, nil
}

// redactURL hides the password of a connection URL.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "*****")
			return u.String()
		}
	}
	return s
}

// lockParams locks the top-level parameters with the OS environment, -e
// overrides, the state and, on a terminal, prompts.
func (a *app) lockParams(l *loaded) error { return a.lockParamsWith(l, false) }

// lockParamsWith locks parameters; lenient turns missing values into warnings
// and never prompts.
func (a *app) lockParamsWith(l *loaded, lenient bool) error {
	in := params.LockInput{
		Stack: l.res.Stack,
		Env: func(k string) (string, bool) {
			if v, ok := l.env[k]; ok {
				return v, true
			}
			return os.LookupEnv(k)
		},
		Outputs: declaredOutputs(l.res),
	}
	if l.state != nil {
		in.State = l.state.Parameters
		in.DeploymentID = l.state.DeploymentID
	}
	if p := a.prompter(); p != nil && !lenient {
		in.Prompt = p
	}
	in.Lenient = lenient
	locked, diags := params.Lock(in)
	if err := reportDiags(a.stderr, diags, l.said); err != nil {
		return err
	}
	l.locked = locked
	return nil
}

// declaredOutputs lists the outputs each component declares.
func declaredOutputs(res *elaborate.Result) map[string][]string {
	m := make(map[string][]string, len(res.Components))
	for _, c := range res.Components {
		names := make([]string, len(c.Outputs))
		for i, o := range c.Outputs {
			names[i] = o.Name
		}
		m[c.Meta.Name] = names
	}
	return m
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
