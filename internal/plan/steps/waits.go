package steps

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plugin"
)

// gate asks for approval on the terminal: the one gate of gantry, for gate
// steps and gate entries of plugin lists alike. --yes approves every gate;
// without a terminal and without --yes it fails, saying how to approve; on a
// terminal "y" or "yes" approves.
func gate(env plan.Env, msg string) plan.Result {
	if env.Yes() {
		env.Logf("gate %q approved by --yes", msg)
		return plan.Ok()
	}
	if !env.Interactive() {
		return plan.Fail(fmt.Errorf("gate %q needs approval: run on a terminal to answer it, or pass --yes to approve every gate", msg))
	}
	var answer string
	err := talk(env, func() error {
		var err error
		answer, err = env.Ask(msg + " [y/N]")
		return err
	})
	if err != nil {
		return plan.Fail(fmt.Errorf("gate %q: %w", msg, err))
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		env.Logf("gate %q approved", msg)
		return plan.Ok()
	}
	return plan.Fail(fmt.Errorf("gate %q was not approved", msg))
}

// talk holds the run back while fn talks to the person at the terminal
// (env.Pause), and tells the displays that this step is the one talking
// (plan.NoteAsking).
func talk(env plan.Env, fn func() error) error {
	return env.Pause(func() error {
		env.Note(plan.Note{Kind: plan.NoteAsking})
		return fn()
	})
}

// delay waits d: the one delay of gantry.
func delay(ctx context.Context, d time.Duration) plan.Result {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return plan.Fail(errors.New("interrupted during the delay"))
	case <-t.C:
		return plan.Ok()
	}
}

// probe calls a probe plugin's action: the one way gantry waits for
// something to answer (probe steps, calls, waits of plugin lists, ready
// conditions). Each failed attempt of a wait shows as a line.
func (rt *Runtime) probe(ctx context.Context, env plan.Env, name, action string, args map[string]any, timeout time.Duration, dir string, procEnv []string, out io.Writer) plan.Result {
	p, ok := plugin.Lookup(name)
	if !ok {
		return plan.Fail(fmt.Errorf("unknown plugin %q", name))
	}
	if action == "" {
		action = p.Actions()[0]
	}
	if err := p.Validate(action, args); err != nil {
		return plan.Fail(fmt.Errorf("%s %s: %w", name, action, err))
	}
	err := p.Run(ctx, &plugin.Call{Action: action, Args: args, Dir: dir, Env: procEnv, Stdout: out, Stderr: env.Stream(), Timeout: timeout,
		Attempt: func(n int, elapsed time.Duration, err error) {
			env.Logf("attempt %d failed (%s of %s): %v", n, elapsed.Round(time.Second), timeout, err)
		}})
	if err != nil {
		return failure(ctx, fmt.Errorf("%s %s: %w", name, action, err))
	}
	return plan.Ok()
}

// onFail applies a step's on_fail list (seed 001) to its failure: only next
// makes the plan go on; warn and info say how a failure that goes on is
// logged; pause holds the run and asks first whether to continue or abort.
// Without next, a failed step fails its component, pause or not.
func onFail(res plan.Result, actions []string, label string, env plan.Env) plan.Result {
	has := func(a string) bool { return slices.Contains(actions, a) }
	if has(manifest.OnFailPause) && !pause(res, label, env) {
		res.Abort = true
		return res
	}
	if !has(manifest.OnFailNext) {
		return res
	}
	if has(manifest.OnFailWarn) || has(manifest.OnFailPause) && !has(manifest.OnFailInfo) {
		return plan.Result{Status: plan.OK, Warning: res.Reason}
	}
	return plan.Result{Status: plan.OK, Info: res.Reason}
}

// pause holds the run after a failed step and asks whether to continue. With
// no terminal to ask, --yes continues and anything else aborts, as a gate
// would.
func pause(res plan.Result, label string, env plan.Env) bool {
	if !env.Interactive() {
		if env.Yes() {
			env.Logf("%s failed and on_fail is pause; no terminal to ask, --yes continues", label)
			return true
		}
		env.Logf("%s failed and on_fail is pause, but there is no terminal to ask (--yes continues): aborting", label)
		return false
	}
	var answer string
	err := talk(env, func() error {
		env.Logf("%s failed: %s", label, res.Reason)
		var err error
		answer, err = env.Ask(fmt.Sprintf("paused after %s failed: continue or abort? [c/a]", label))
		return err
	})
	return err == nil && strings.HasPrefix(strings.ToLower(strings.TrimSpace(answer)), "c")
}

// Defaults of ready conditions, as the Hub CLI's: how long to wait for each
// check in all. Between attempts gantry waits a second (the Hub ten).
const (
	defaultReadyWait = 1200 * time.Second
	readyInterval    = time.Second
)

// ready waits until every ready condition holds, one after the other, as the
// Hub CLI checks them: pauseSeconds first, then the name (its port dropped)
// resolves, then the URL answers with a status below 500; each check waits
// up to waitSeconds. A line per attempt while it waits is the live line of
// the display.
func (rt *Runtime) ready(ctx context.Context, env plan.Env, n *plan.Node, s plan.Ready) plan.Result {
	label := rt.sayLabel(env, n, s.Component)
	res := rt.readyChecks(ctx, env, s)
	res.Label = label
	return res
}

// readyChecks checks the conditions of a ready step.
func (rt *Runtime) readyChecks(ctx context.Context, env plan.Env, s plan.Ready) plan.Result {
	x, err := rt.expander(env, s.Component)
	if err != nil {
		return plan.Fail(err)
	}
	if s.Component != "" {
		x.tracking = withOwnOutputs(x.tracking, s.Component, rt.Outputs)
	}
	for _, c := range s.Conditions {
		if c.Pause > 0 {
			env.Logf("pausing %ds before checking", c.Pause)
			t := time.NewTimer(time.Duration(c.Pause) * time.Second)
			select {
			case <-ctx.Done():
				t.Stop()
				return plan.Fail(errors.New("interrupted while pausing"))
			case <-t.C:
			}
		}
		wait := defaultReadyWait
		if c.Wait > 0 {
			wait = time.Duration(c.Wait) * time.Second
		}
		if c.DNS != "" {
			name, err := x.expand(c.DNS)
			if err != nil {
				return plan.Fail(err)
			}
			if i := strings.Index(name, ":"); i > 0 {
				name = name[:i]
			}
			if r := rt.readyCheck(ctx, env, "dns "+name, wait, func(ctx context.Context) error {
				_, err := net.DefaultResolver.LookupHost(ctx, name)
				return err
			}); r != nil {
				return *r
			}
		}
		if c.URL != "" {
			url, err := x.expand(c.URL)
			if err != nil {
				return plan.Fail(err)
			}
			if !strings.HasPrefix(url, "http://") && !strings.HasPrefix(url, "https://") {
				return plan.Fail(fmt.Errorf("a ready condition's url must be http:// or https://, got %q", url))
			}
			if r := rt.readyCheck(ctx, env, url, wait, func(ctx context.Context) error {
				_, err := plugin.GetBelow(ctx, url, 500)
				return err
			}); r != nil {
				return *r
			}
		}
	}
	return plan.Ok()
}

// readyCheck tries until try succeeds or wait passes: nil when what is
// ready, else the step's failure.
func (rt *Runtime) readyCheck(ctx context.Context, env plan.Env, what string, wait time.Duration, try func(context.Context) error) *plan.Result {
	err := plugin.Wait(ctx, wait, readyInterval, try, func(n int, elapsed time.Duration, err error) {
		env.Logf("waiting for %s: attempt %d failed (%s of %s): %s", what, n, elapsed.Round(time.Second), wait, short(err))
	})
	var r plan.Result
	switch we, ok := plugin.IsWaitError(err); {
	case ok:
		r = plan.Fail(fmt.Errorf("%s not ready after %s: %s", what, wait, short(we.Last)))
	case err != nil && ctx.Err() != nil:
		r = plan.Fail(fmt.Errorf("interrupted while waiting for %s", what))
	case err != nil:
		r = plan.Fail(err)
	default:
		env.Logf("%s is ready", what)
		return nil
	}
	return &r
}

// short is a probe's error as a ready condition says it: an HTTP status
// alone.
func short(err error) string {
	var se *plugin.StatusError
	if errors.As(err, &se) {
		return se.Status
	}
	return err.Error()
}
