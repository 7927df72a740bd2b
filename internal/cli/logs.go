package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/secret"
	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/ui"
)

func newLogsCmd(a *app) *cobra.Command {
	var statePath, comp string
	var follow bool
	cmd := &cobra.Command{
		Use:   "logs [RUN]",
		Short: "Print the logs of a run (the latest unless named); -f follows a run as it goes",
		Long: `logs prints the logs a run kept in .gantry/runs/<run>/ next to the state: every
component's log in the order the run met them, or with -c just one. RUN is a
run id from 'gantry explain --runs', or a prefix of one; without it, the latest
run of the stack (two stacks in one folder keep their runs apart: -s names the
other's state); with -c and no RUN, the latest run that kept that component's
log (the latest run may have left it out), said on stderr when it is not the
latest.

With -f, logs follows the run from its start as it goes on, as another terminal
would see it without the live display: its steps, their output lines and how
they end, each line named by its component, until the run ends. It exits 0
when the run ended ok, 1 when it failed or was interrupted, or its gantry is
gone without ending it.`,
		Example: `  gantry logs
  gantry logs -f                  # follow the run going on
  gantry logs -c db
  gantry logs 20261121T1914 -c api
  gantry logs -s dev.yaml.state`,
		Args: argsRange(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			run, err := a.findRun(statePath, args)
			if err != nil {
				return err
			}
			names, paths := ui.Logs(run.Dir)
			if comp != "" {
				if _, ok := paths[comp]; !ok && !(follow && run.Status == "unfinished") {
					// Without a run named, the component's latest log
					// is what was asked for: the latest run may have
					// left it out (-c, or it failed before it).
					earlier, found := a.lastRunWithLog(statePath, comp)
					if len(args) > 0 || !found {
						return usageError("run %s has no log of %q (logs: %s)", run.ID, comp, strings.Join(names, ", "))
					}
					fmt.Fprintf(a.stderr, "gantry: %s has no log in the latest run %s; its latest is of run %s\n", comp, run.ID, earlier.ID)
					run = earlier
					names, paths = ui.Logs(run.Dir)
				}
			}
			// A line the run wrote before it knew a value was secret (a token
			// printed before the Outputs: block that declares it) is masked
			// with the secrets the state knows now.
			mask := stateMasker(cmd.Context(), statePath).Text
			if follow {
				return a.follow(cmd.Context(), run, comp, mask)
			}
			if comp != "" {
				return copyMasked(a.stdout, paths[comp], mask)
			}
			for i, n := range names {
				if i > 0 {
					fmt.Fprintln(a.stdout)
				}
				fmt.Fprintf(a.stdout, "== %s (%s)\n", n, relPath(paths[n]))
				if err := copyMasked(a.stdout, paths[n], mask); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&statePath, "state", "s", "", "the stack's state (default hub.yaml.state, or acre.yaml.state in a landscape's folder); its runs are in .gantry/runs next to it")
	cmd.Flags().StringVarP(&comp, "component", "c", "", "only this component's log")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "follow the run as it goes on, until it ends")
	cmd.ValidArgsFunction = a.runIDs
	_ = cmd.RegisterFlagCompletionFunc("component", a.runComponents)
	return cmd
}

// copyMasked copies a log to w a line at a time, each through mask.
func copyMasked(w io.Writer, path string, mask func(string) string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	rd := bufio.NewReaderSize(f, 64<<10)
	out := bufio.NewWriter(w)
	for {
		line, err := rd.ReadString('\n')
		if line != "" {
			text, end := strings.CutSuffix(line, "\n")
			out.WriteString(mask(text))
			if end {
				out.WriteByte('\n')
			}
		}
		if err == io.EOF {
			return out.Flush()
		}
		if err != nil {
			out.Flush()
			return err
		}
	}
}

// stateMasker is a masker of the secrets the state at statePath knows
// (action.StateSecrets), for what is printed from a run's folder; an empty
// one when the state cannot be read (the run's own masking stands).
func stateMasker(ctx context.Context, statePath string) *secret.Masker {
	st := stateIfAny(ctx, statePath)
	if st == nil {
		return secret.NewMasker()
	}
	return secret.NewMasker(action.StateSecrets(st)...)
}

// stateIfAny reads the state at statePath (-s, else the folder's), for
// what only helps when there is one (completions, masking); nil when
// there is none or it cannot be read.
func stateIfAny(ctx context.Context, statePath string) *state.State {
	store, _, err := action.OpenState(stateOrEnv(statePath, defaultState()), "", "")
	if err != nil {
		return nil
	}
	defer store.Close()
	files, err := store.Read(ctx)
	if err != nil {
		return nil
	}
	st, err := files.Decode(store.String())
	if err != nil {
		return nil
	}
	return st
}

// followPoll is how often a followed run's events are read again once
// everything written so far was printed.
const followPoll = 200 * time.Millisecond

// follow prints a run's events as lines, from its start, as the run writes
// them, until its run_finished event; or, when the gantry process running
// it is gone without one (killed), what it wrote. A run of another host is
// followed until its end or an interrupt.
func (a *app) follow(ctx context.Context, run ui.RunInfo, comp string, mask func(string) string) error {
	f, err := os.Open(filepath.Join(run.Dir, "events.jsonl"))
	if err != nil {
		return fmt.Errorf("follow run %s: %w", run.ID, err)
	}
	defer f.Close()
	rd := bufio.NewReaderSize(f, 64<<10)
	var partial []byte
	gone := false
	out := bufio.NewWriter(a.stdout)
	defer out.Flush()
	failed := map[string]string{}
	for {
		line, err := rd.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			if len(partial) > 0 {
				line = append(partial, line...)
				partial = nil
			}
			var ev ui.Event
			if json.Unmarshal(line, &ev) != nil {
				continue
			}
			if ev.Event == "run_finished" {
				fmt.Fprintf(out, "run %s ended: %s in %s\n", run.ID, ev.Status, ui.FormatDuration(time.Duration(derefMS(ev.DurationMS))*time.Millisecond))
				if ev.Status != "ok" {
					// "gantry logs -f && next" waits for a run to succeed.
					return silentExit(ExitFailed)
				}
				return nil
			}
			followLine(out, &ev, comp, mask, failed)
			continue
		}
		partial = append(partial, line...) // a line the run is still writing
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("follow run %s: %w", run.ID, err)
		}
		if gone {
			fmt.Fprintf(out, "run %s did not finish: the gantry that ran it is gone (the state records what was done)\n", run.ID)
			return silentExit(ExitFailed)
		}
		out.Flush()
		if !run.Tag.Running() {
			// What it wrote before it went is read once more.
			gone = true
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(followPoll):
		}
	}
}

// lastRunWithLog is the newest run (not one inside another) that kept a
// log of comp.
func (a *app) lastRunWithLog(statePath, comp string) (ui.RunInfo, bool) {
	r, err := a.runsOf(statePath)
	if err != nil {
		return ui.RunInfo{}, false
	}
	runs, err := r.list()
	if err != nil {
		return ui.RunInfo{}, false
	}
	for _, run := range runs { // newest first
		if run.Tag.Parent != "" {
			continue
		}
		if _, paths := ui.Logs(run.Dir); paths[comp] != "" {
			return run, true
		}
	}
	return ui.RunInfo{}, false
}

func derefMS(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// hiddenKinds are the kinds of bookkeeping steps, which a followed run does
// not announce.
var hiddenKinds = map[string]bool{"begin": true, "end": true, "record": true, "setup": true, "finalize": true}

// followLine prints one event of a followed run, as the plain display
// prints it: "[db] ==> deploy db", "[db] a line", "[db] <== deploy db: ok
// (1.2s)", and how each component ended; only comp's with -c. failed keeps
// why each component's first failed step failed: its end step reports
// "skipped: db failed" (what its dependents read), and the line says failed.
func followLine(w io.Writer, ev *ui.Event, comp string, mask func(string) string, failed map[string]string) {
	group := ev.Component
	if group == "" {
		group, _, _ = strings.Cut(ev.Step, "/")
	}
	if comp != "" && ev.Component != comp {
		return
	}
	say := func(text string) { fmt.Fprintf(w, "[%s] %s\n", ui.Sanitize(group), mask(text)) }
	switch ev.Event {
	case "log":
		if ev.Line != nil {
			say(ui.Sanitize(*ev.Line))
		}
	case "step_started":
		if !hiddenKinds[ev.Kind] {
			say("==> " + ui.Sanitize(ev.Label))
		}
	case "step_finished":
		if _, seen := failed[group]; ev.Status == "failed" && ev.Kind != "end" && !seen {
			failed[group] = ev.Reason
		}
		switch {
		case ev.Kind == "end":
			text := ev.Status
			reason := ev.Reason
			if why, ok := failed[group]; ok {
				text, reason = "failed", why
			}
			if text == "ok" {
				text = "done"
			}
			if reason != "" {
				text += ": " + reason
			}
			say("== " + ui.Sanitize(text))
		case !hiddenKinds[ev.Kind] || ev.Status == "failed":
			text := ui.StepEndLine(ev.Label, ev.Status, time.Duration(derefMS(ev.DurationMS))*time.Millisecond, ev.Reason, ev.Warning, ev.Info)
			say(ui.SanitizeLines(text))
		}
	}
}
