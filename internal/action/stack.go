package action

import (
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/state"
)

// Source names a stack, its params files and its state.
type Source struct {
	// Manifest is the stack manifest (hub.yaml) or an elaborated file.
	Manifest    string
	ParamsFiles []string
	// StatePath is the state (a path or file://PATH); "" for
	// <manifest>.state next to the manifest.
	StatePath string
	// Env overrides the environment for fromEnv (-e NAME=VALUE).
	Env map[string]string
}

// Terminal is what an action may use of the person at the terminal; the
// zero value means there is none (CI, piped input): nothing is asked.
type Terminal struct {
	// Prompter asks for parameters that have no value.
	Prompter params.Prompter
	// Input reads an answer to a gate or a pause.
	Input func() (string, error)
}

// Interactive reports whether someone can answer.
func (t Terminal) Interactive() bool { return t.Input != nil }

// Stack is a loaded stack: elaborated, with its state and, once locked, its
// parameters.
type Stack struct {
	Res *elaborate.Result
	// StatePath is the state file; State what it held when last read (nil
	// before the first run).
	StatePath string
	State     *state.State
	Locked    *params.Locked
	Graph     *build.Graph
	env       map[string]string
	stateSum  [32]byte
	read      bool
}

// DefaultStatePath is <manifest>.state next to the manifest given; for an
// elaborated file, next to it without .elaborate.
func DefaultStatePath(manifestPath string) string {
	return strings.TrimSuffix(manifestPath, elaborate.Suffix) + ".state"
}

// IsElaborated reports whether a path names an elaborated file.
func IsElaborated(path string) bool { return strings.HasSuffix(path, elaborate.Suffix) }

// Load elaborates the stack (or reads an elaborated file), reads its state
// and builds its component graph. Invalid input is an *InvalidError.
func Load(src Source, consequence string) (*Stack, error) {
	// -e acts as the environment when parameters are locked (source env:VAR),
	// not as values written into the manifest.
	res, diags := elaborate.Load(src.Manifest, elaborate.Options{ParamsFiles: src.ParamsFiles})
	if err := diagsError(diags, consequence); err != nil {
		return nil, err
	}
	st := &Stack{Res: res, StatePath: src.StatePath, env: src.Env}
	if st.StatePath == "" {
		st.StatePath = DefaultStatePath(src.Manifest)
	}
	var err error
	if st.StatePath, err = StatePathOf(st.StatePath); err != nil {
		return nil, err
	}
	if err := st.ReadState(); err != nil {
		return nil, err
	}
	g, diags := build.BuildGraph(res)
	if err := diagsError(diags, consequence); err != nil {
		return nil, err
	}
	st.Graph = g
	slog.Debug("stack loaded", "stack", res.Stack.Meta.Name, "components", len(res.Components), "state", st.StatePath, "recorded", st.State != nil)
	return st, nil
}

// ReadState reads the state again, refusing one that belongs to another
// stack. It reports whether the state changed since it was last read.
func (s *Stack) ReadState() error {
	_, err := s.readState()
	return err
}

func (s *Stack) readState() (changed bool, err error) {
	files, err := state.ReadFiles(s.StatePath)
	if err != nil {
		return false, invalid("nothing was run", "%w", err)
	}
	sum := files.Sum()
	if s.read && sum == s.stateSum {
		return false, nil // read before, unchanged since
	}
	st, err := files.Decode(s.StatePath)
	if err != nil {
		return false, &InvalidError{Err: err, Consequence: "nothing was run"}
	}
	if st != nil && st.Stack != "" && st.Stack != s.Res.Stack.Meta.Name {
		return false, invalid("nothing was run", "state %s belongs to stack %q, not %q; point -s at this stack's state", s.StatePath, st.Stack, s.Res.Stack.Meta.Name)
	}
	changed = s.read
	s.State, s.stateSum, s.read = st, sum, true
	return changed, nil
}

// StatePathOf accepts a path or a file:// URL (DESIGN section 8).
func StatePathOf(p string) (string, error) {
	switch {
	case strings.HasPrefix(p, "file://"):
		return strings.TrimPrefix(p, "file://"), nil
	case strings.HasPrefix(p, "postgres://"), strings.HasPrefix(p, "postgresql://"):
		return "", invalid("nothing was run", "--state %s: the PostgreSQL state backend is not part of this build yet; use a file", redactURL(p))
	case strings.Contains(p, "://"):
		return "", invalid("nothing was run", "--state %q: expected a file path or file://PATH", p)
	}
	return p, nil
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

// LockParams locks the top-level parameters with the OS environment, -e
// overrides, the state and, on a terminal, prompts. Lenient turns missing
// values into warnings and never prompts (validate). Warnings go to warn.
func (s *Stack) LockParams(term Terminal, lenient bool, warn func(manifest.Diagnostics), consequence string) error {
	in := params.LockInput{
		Stack: s.Res.Stack,
		Env: func(k string) (string, bool) {
			if v, ok := s.env[k]; ok {
				return v, true
			}
			return os.LookupEnv(k)
		},
		Outputs: declaredOutputs(s.Res),
	}
	if s.State != nil {
		in.State = s.State.Parameters
		in.DeploymentID = s.State.DeploymentID
	}
	if term.Prompter != nil && !lenient {
		in.Prompt = term.Prompter
	}
	in.Lenient = lenient
	locked, diags := params.Lock(in)
	if err := diagsError(diags, consequence); err != nil {
		return err
	}
	if warn != nil {
		warn(diags)
	}
	s.Locked = locked
	return nil
}

// LockedFromState takes the parameters the state recorded (undeploy,
// invoke): they are what the components were deployed with.
func (s *Stack) LockedFromState() {
	if s.State == nil {
		s.Locked = params.FromState(s.Res.Stack.Meta.Name, "", nil)
		return
	}
	s.Locked = params.FromState(s.Res.Stack.Meta.Name, s.State.DeploymentID, s.State.Parameters)
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

// AbsStatePath is the state's absolute path.
func (s *Stack) AbsStatePath() string {
	p, err := filepath.Abs(s.StatePath)
	if err != nil {
		return s.StatePath
	}
	return p
}
