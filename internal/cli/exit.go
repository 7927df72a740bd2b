package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/state"
)

// Exit codes of the gantry command (DESIGN section 9).
const (
	ExitOK          = 0
	ExitFailed      = 1
	ExitInvalid     = 2
	ExitLocked      = 3
	ExitInterrupted = 130
)

// exitError carries an exit code out of a command; its message, if any, has
// already been printed or is printed by Main.
type exitError struct {
	code int
	err  error
	// invalid says the input was invalid whatever the code says (plan
	// --detailed-exitcode exits 1 for it); valid says it was valid (the
	// same flag's 2 for changes).
	invalid, valid bool
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// withCode wraps err so that Main exits with code.
func withCode(code int, err error) error { return &exitError{code: code, err: err} }

// silentExit ends the command with code after it printed everything itself.
func silentExit(code int) error { return &exitError{code: code} }

// usageError is bad usage of the command line: exit code 2.
func usageError(format string, args ...any) error {
	return withCode(ExitInvalid, fmt.Errorf(format, args...))
}

// invalidInput reports whether a command ended on invalid input, whatever
// its exit code: plan --detailed-exitcode exits 1 for it and 2 for a plan
// with changes.
func invalidInput(err error) bool {
	var ee *exitError
	if errors.As(err, &ee) && (ee.invalid || ee.valid) {
		return ee.invalid
	}
	return exitCode(err) == ExitInvalid
}

// unreadable is the error of a state a command could not read: invalid
// input (exit 2), unless its backend could not be reached (exit 1, as
// failure makes it).
func unreadable(err error) error {
	if state.IsUnavailable(err) {
		return err
	}
	return withCode(ExitInvalid, err)
}

// exitCode maps an error returned by a command to the process exit code.
func exitCode(err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.code
	case manifest.IsInvalid(err):
		return ExitInvalid
	case strings.HasPrefix(err.Error(), "unknown command"), strings.HasPrefix(err.Error(), "unknown flag"),
		strings.HasPrefix(err.Error(), "unknown shorthand flag"):
		return ExitInvalid
	}
	return ExitFailed
}
