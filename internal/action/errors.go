// Package action holds gantry's verbs as values: Deploy, Undeploy, Invoke,
// Plan and Validate, each with a Run that owns the whole of its work — load
// the stack, lock its parameters, build the plan, take the state's lock,
// execute the plan with the one executor — and returns what happened. The
// command line only parses flags into them, gives them a display, and
// prints what they return.
package action

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/state"
)

// InvalidError is input that cannot be carried out: every problem at once,
// with positions where they have them. Nothing was run or written.
type InvalidError struct {
	// Diags are the problems, warnings included (the caller prints them).
	Diags manifest.Diagnostics
	// Err is a single problem without a position, when Diags has none.
	Err error
	// Consequence says what was not done: "nothing was run".
	Consequence string
}

func (e *InvalidError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	n := len(e.Diags.Errors())
	noun := "errors"
	if n == 1 {
		noun = "error"
	}
	return fmt.Sprintf("%d %s; %s", n, noun, e.Consequence)
}

func (e *InvalidError) Unwrap() error { return e.Err }

// invalid wraps a single problem of the input.
func invalid(consequence, format string, args ...any) error {
	return &InvalidError{Err: fmt.Errorf(format, args...), Consequence: consequence}
}

// unreadable is the error of a state that could not be read before
// anything ran: invalid input (a file that is no state), but a backend
// that could not be reached (state.UnavailableError) is no fault of the
// input, and stays what it is.
func unreadable(consequence string, err error) error {
	if state.IsUnavailable(err) {
		return err
	}
	return &InvalidError{Err: err, Consequence: consequence}
}

// diagsError returns an *InvalidError when diags hold errors, else nil.
func diagsError(diags manifest.Diagnostics, consequence string) error {
	if !diags.HasErrors() {
		return nil
	}
	return &InvalidError{Diags: diags, Consequence: consequence}
}

// LockedError is a state another run holds.
type LockedError struct {
	*state.LockedError
	StatePath string
	// Differs says how the run on Temporal workers that holds the state is
	// not the one this command asks for (RemoteRun.Differs): it is not
	// attached to.
	Differs string
}

func (e *LockedError) Error() string {
	where := e.StatePath
	if state.IsDatabase(where) {
		where = "URL" // the URL shown hides its password: it cannot be pasted
	}
	if e.Holder != nil && e.Holder.Workflow != "" && e.Differs != "" {
		return fmt.Sprintf("%v\nthat run is not the one this command asks for (%s), so this command does not attach to it: wait for it to end (the command that started it attaches to it when no client is, and shows it; an interrupt there stops it), or %s; then run this command again", e.LockedError, e.Differs, e.waitLonger())
	}
	if e.Holder != nil && e.Holder.Workflow != "" {
		return fmt.Sprintf("%v\nwait for it to finish, or %s; gantry deploy --engine temporal://… attaches to it when no client is, and gives the lock back if its workflow is gone (docs/temporal.md)", e.LockedError, e.waitLonger())
	}
	if free := e.Regaining.FreeIn; free > 0 {
		return fmt.Sprintf("%v\nrun again then, or wait for it with --lock-timeout (%v covers it); gantry unlock does not break it meanwhile", e.LockedError, (free + time.Second).Round(time.Second))
	}
	return fmt.Sprintf("%v\nwait for it to finish, or %s; if that run is gone, 'gantry unlock -s %s' removes a stale lock", e.LockedError, e.waitLonger(), where)
}

// waitLonger is the advice on --lock-timeout: the flag, or, when it was
// given, that it passed.
func (e *LockedError) waitLonger() string {
	if e.Waited > 0 {
		return fmt.Sprintf("for it with a --lock-timeout longer than the %v waited", e.Waited)
	}
	return "for it with --lock-timeout"
}

// DetachedError is a client of a run on workers that stopped following it
// at an interrupt before the run ended (exit 130): the run was asked to
// stop, and holds the stack's lock until it ends. Its text says what to do.
type DetachedError struct{ Msg string }

func (e *DetachedError) Error() string { return e.Msg }

// InterruptedError is a command interrupted before any component ran (exit
// 130): while it waited for the state's lock (an installation handler's
// prepare may have run).
type InterruptedError struct{ While string }

func (e *InterruptedError) Error() string {
	return "interrupted while " + e.While + "; no component ran"
}

// IsInvalid reports whether err is invalid input.
func IsInvalid(err error) bool {
	var ie *InvalidError
	return errors.As(err, &ie) || manifest.IsInvalid(err)
}

// allProblems is err, invalid input a deploy of the whole stack found before
// running anything, with what validate finds in the same input besides: a
// deploy stops at the first phase that fails (the manifests, the graph, the
// parameters, the plan), and nobody should need a run per phase to see
// every mistake. Other verbs, a deploy of some components (validate would
// tell of the others') and other errors get err as it is.
func allProblems(ctx context.Context, src Source, verb string, sel build.Selection, err error, consequence string) error {
	var ie *InvalidError
	if verb != plan.VerbDeploy || sel.Narrows() || !errors.As(err, &ie) || ie.Err != nil {
		return err
	}
	_, verr := (&Validate{Source: src}).Run(ctx)
	var all *InvalidError
	if !errors.As(verr, &all) || all.Err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, d := range ie.Diags {
		seen[d.String()] = true
	}
	diags := append(manifest.Diagnostics(nil), ie.Diags...)
	added := false
	for _, d := range all.Diags.Errors() {
		if !seen[d.String()] {
			seen[d.String()] = true
			diags = append(diags, d)
			added = true
		}
	}
	if !added {
		return err
	}
	return &InvalidError{Diags: diags, Consequence: consequence}
}
