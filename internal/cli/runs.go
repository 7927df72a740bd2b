package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/ui"
	"github.com/gantry-dev/gantry/internal/workspace"
)

// defaultState is the state of the stack in the current folder, for the
// commands that take no manifest: hub.yaml.state, or acre.yaml.state for
// a landscape folder (an acre.yaml and no hub.yaml).
func defaultState() string {
	if !exists(hubManifest) && !exists(hubManifest+".state") && (exists(acreManifest) || exists(acreManifest+".state")) {
		return acreManifest + ".state"
	}
	return hubManifest + ".state"
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// stackRuns are the runs of one stack: the folder they are kept in (next
// to the state) and the stack's state file's base name, which tells its
// runs from those of another stack in the same folder ("" when it cannot:
// a database named without a manifest).
type stackRuns struct {
	dir   string
	state string
	// anchor is the state file, or where it would be.
	anchor string
}

// runsOf opens the runs of the stack whose state -s names (statePath),
// else GANTRY_STATE when it names a database, else the folder's default
// state.
func (a *app) runsOf(statePath string) (stackRuns, error) {
	location := stateOrEnv(statePath, defaultState())
	store, anchor, err := action.OpenState(location, "", "")
	if err != nil {
		return stackRuns{}, a.failure(err)
	}
	store.Close() // the runs are files next to the state, or to where it would be
	r := stackRuns{dir: workspace.For(anchor).RunsDir(), anchor: anchor, state: filepath.Base(anchor)}
	if state.IsDatabase(location) {
		r.state = ""
	}
	return r, nil
}

// list lists the stack's runs, newest first.
func (r stackRuns) list() ([]ui.RunInfo, error) {
	runs, err := ui.ListRuns(r.dir, r.state)
	if err != nil {
		return nil, fmt.Errorf("list the runs in %s: %w", relPath(r.dir), err)
	}
	return runs, nil
}

// none says that the stack has no run, and how to name another stack's
// state.
func (r stackRuns) none() string {
	what := "no runs recorded in " + relPath(r.dir)
	if r.state != "" {
		what = "no runs of " + r.state + " recorded in " + relPath(r.dir)
	}
	return what + otherStates(r.anchor)
}

// otherStates suggests -s with the other states next to anchor, or says
// what -s is for when there are none.
func otherStates(anchor string) string {
	if s := otherStatesHere(anchor); s != "" {
		return s
	}
	return " (-s names the state of a stack in another folder)"
}

// otherStatesHere suggests -s with the other states next to anchor; ""
// when there are none.
func otherStatesHere(anchor string) string {
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(anchor), "*.state"))
	var others []string
	for _, m := range matches {
		if m != anchor {
			others = append(others, relPath(m))
		}
	}
	switch len(others) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf(" (another stack's state is here: -s %s)", others[0])
	}
	return fmt.Sprintf(" (other stacks' states are here; name one with -s: %s)", strings.Join(others, ", "))
}

// writeRuns lists recent runs (explain --runs).
func writeRuns(w io.Writer, r stackRuns, limit int) error {
	runs, err := r.list()
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		fmt.Fprintln(w, r.none())
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tVERB\tSTARTED\tDURATION\tSTATUS\tCOMPONENTS")
	for _, run := range recentRuns(runs, limit) {
		started, dur := "-", "-"
		if !run.Started.IsZero() {
			started = run.Started.UTC().Format("2006-01-02 15:04:05Z")
		}
		if run.Duration > 0 {
			dur = ui.FormatDuration(run.Duration)
		}
		verb := orDash(run.Verb)
		if run.Tag.Parent != "" {
			verb += " (inside " + run.Tag.Parent + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", run.ID, verb, started, dur, run.Status, run.Counts())
	}
	return tw.Flush()
}

// recentRuns is the start of runs (the latest first) down to the limit-th
// run of its own (all of them when limit is 0), with the runs nested in
// those (gantry invoke from a component): nested runs do not count, or a
// deploy that invoked 20 verbs would be hidden by them.
func recentRuns(runs []ui.RunInfo, limit int) []ui.RunInfo {
	if limit <= 0 {
		return runs
	}
	own := 0
	for i, run := range runs {
		if run.Tag.Parent != "" {
			continue
		}
		if own++; own == limit {
			// A nested run listed after this one is older: it ran inside
			// a run that is not listed.
			return runs[:i+1]
		}
	}
	return runs
}

// runJSON is a run as explain --runs --output json|yaml gives it, every run
// of the stack, the latest first (docs/operating.md).
type runJSON struct {
	Run string `json:"run"`
	// Parent is the run this one ran inside (a gantry invoke from a
	// component); "" for a run of its own.
	Parent     string             `json:"parent,omitempty"`
	Dir        string             `json:"dir"`
	Verb       string             `json:"verb,omitempty"`
	Started    string             `json:"started,omitempty"`
	DurationMS int64              `json:"duration_ms"`
	Status     string             `json:"status"`
	Components []ui.ComponentJSON `json:"components"`
}

// writeRunsData writes every run of the stack as JSON or YAML.
func writeRunsData(w io.Writer, r stackRuns, format string) error {
	runs, err := r.list()
	if err != nil {
		return err
	}
	out := make([]runJSON, 0, len(runs))
	for _, run := range runs {
		j := runJSON{Run: run.ID, Parent: run.Tag.Parent, Dir: relPath(run.Dir), Verb: run.Verb, DurationMS: run.Duration.Milliseconds(),
			Status: run.Status, Components: run.Components}
		if !run.Started.IsZero() {
			j.Started = run.Started.UTC().Format(time.RFC3339Nano)
		}
		if j.Components == nil {
			j.Components = []ui.ComponentJSON{}
		}
		out = append(out, j)
	}
	if format == "yaml" {
		b, err := yaml.MarshalWithOptions(out, yaml.IndentSequence(true))
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// findRun finds the run args name (a run id or a prefix of one), or
// without it the latest run not nested in another (ui.Latest), among the
// runs of the stack whose state -s names (runsOf). No run, or a name that
// matches none or several, is bad usage.
func (a *app) findRun(statePath string, args []string) (ui.RunInfo, error) {
	r, err := a.runsOf(statePath)
	if err != nil {
		return ui.RunInfo{}, err
	}
	runs, err := r.list()
	if err != nil {
		return ui.RunInfo{}, err
	}
	if len(args) == 0 {
		// A nested run (gantry invoke from a component) is not "the
		// latest": following it would end before the run that called it.
		latest, ok := ui.Latest(runs)
		switch {
		case ok:
			return latest, nil
		case len(runs) == 0:
			return ui.RunInfo{}, usageError("%s", r.none())
		}
		return ui.RunInfo{}, usageError("only runs inside other runs (gantry invoke from a component) are recorded in %s: name one (gantry explain --runs lists them)", relPath(r.dir))
	}
	if len(runs) == 0 {
		return ui.RunInfo{}, usageError("%s", r.none())
	}
	var found []ui.RunInfo
	for _, run := range runs {
		if strings.HasPrefix(run.ID, args[0]) {
			found = append(found, run)
		}
	}
	switch len(found) {
	case 0:
		return ui.RunInfo{}, usageError("no run %q (gantry explain --runs lists them)", args[0])
	case 1:
		return found[0], nil
	}
	return ui.RunInfo{}, usageError("%q matches %d runs; give more of the id", args[0], len(found))
}
