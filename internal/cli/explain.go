package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/secret"
	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/ui"
)

// explainJSON is the shape of gantry explain --output json (DESIGN section 9).
type explainJSON struct {
	Stack      string                   `json:"stack" yaml:"stack"`
	Status     string                   `json:"status" yaml:"status"`
	Parameters map[string]string        `json:"parameters" yaml:"parameters"`
	Outputs    map[string]string        `json:"outputs" yaml:"outputs"`
	Provides   map[string][]string      `json:"provides" yaml:"provides"`
	Components map[string]componentJSON `json:"components" yaml:"components"`
}

type componentJSON struct {
	Status     string            `json:"status" yaml:"status"`
	Outputs    map[string]string `json:"outputs" yaml:"outputs"`
	Parameters map[string]string `json:"parameters" yaml:"parameters"`
	Started    *string           `json:"started" yaml:"started"`
	Finished   *string           `json:"finished" yaml:"finished"`
	// reason is why the component last failed or was skipped, masked like
	// every value; the text output shows it (not part of the JSON shape).
	reason string
}

func newExplainCmd(a *app) *cobra.Command {
	var statePath, comp, output string
	var showSecrets, runs bool
	cmd := &cobra.Command{
		Use:   "explain",
		Short: "Show what the state records: status, parameters, outputs, provides, components",
		Long: `explain reads the state (hub.yaml.state in the current folder, acre.yaml.state
in a landscape's, or -s) and shows the stack's status, locked parameters,
outputs and provides, and for each component its status, parameters, outputs
and when it last ran. Secrets are masked unless --show-secrets.`,
		Example: `  gantry explain
  gantry explain -s stacks/dev/hub.yaml.state -c db
  gantry explain --output json | jq .outputs`,
		Args: argsRange(0, 0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch output {
			case "text", "json", "yaml":
			default:
				return usageError("--output %q: expected text, json or yaml", output)
			}
			if runs {
				if comp != "" {
					return usageError("-c %s: --runs lists the runs of the whole stack; gantry logs -c %s prints a component's log of a run", comp, comp)
				}
				r, err := a.runsOf(statePath)
				if err != nil {
					return err
				}
				if output != "text" {
					return writeRunsData(a.stdout, r, output)
				}
				return writeRuns(a.stdout, r, 20)
			}
			store, anchor, err := action.OpenState(stateOrEnv(statePath, defaultState()), "", "")
			if err != nil {
				return a.failure(err)
			}
			defer store.Close()
			files, err := store.Read(cmd.Context())
			if err != nil {
				return a.failure(unreadable(err))
			}
			st, err := files.Decode(store.String())
			if err != nil {
				return withCode(ExitInvalid, err)
			}
			if st == nil {
				return withCode(ExitInvalid, fmt.Errorf("no state at %s: deploy first, or point -s at the state%s", store, otherStatesHere(anchor)))
			}
			// A nested stack's name stands for its leaves (web: web.app, …).
			nested := comp != "" && st.Components[comp] == nil && hasLeaves(st, comp)
			if comp != "" && !nested {
				if _, ok := st.Components[comp]; !ok {
					names := make([]string, 0, len(st.Components))
					for n := range st.Components {
						names = append(names, n)
					}
					msg := fmt.Sprintf("no component %q in the state", comp)
					if s := manifest.Suggest(comp, names); s != "" {
						msg += fmt.Sprintf(" (did you mean %q?)", s)
					}
					return usageError("%s", msg)
				}
			}
			ex := explainState(st, selected(comp, nested), showSecrets)
			switch output {
			case "json":
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(ex)
			case "yaml":
				b, err := yaml.MarshalWithOptions(ex, yaml.IndentSequence(true))
				if err != nil {
					return err
				}
				_, err = a.stdout.Write(b)
				return err
			}
			writeExplainText(a.stdout, st, ex, comp != "")
			if note, _ := action.RunNote(cmd.Context(), store, st); note != "" {
				fmt.Fprintln(a.stdout, note)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&statePath, "state", "s", "", "state: a file, file://PATH or postgres://... (default: $GANTRY_STATE when it is a postgres:// URL, else hub.yaml.state)")
	cmd.Flags().StringVarP(&comp, "component", "c", "", "only this component")
	cmd.Flags().StringVar(&output, "output", "text", "text, json or yaml")
	cmd.Flags().BoolVar(&showSecrets, "show-secrets", false, "print secret values")
	cmd.Flags().BoolVar(&runs, "runs", false, "list the recent runs instead (gantry logs prints their logs)")
	_ = cmd.RegisterFlagCompletionFunc("component", stateComponents)
	_ = cmd.RegisterFlagCompletionFunc("output", fixed("text", "json", "yaml"))
	return cmd
}

// explainState builds the explain document, secrets masked unless shown:
// every value it holds (parameters, outputs, reasons) goes through a masker
// built from the state's secrets.
// hasLeaves reports whether the state holds leaves of a nested stack name.
func hasLeaves(st *state.State, name string) bool {
	for n := range st.Components {
		if strings.HasPrefix(n, name+".") {
			return true
		}
	}
	return false
}

// selected is which components explain -c shows: all without one, the one,
// or a nested stack's leaves.
func selected(comp string, nested bool) func(string) bool {
	switch {
	case comp == "":
		return func(string) bool { return true }
	case nested:
		return func(n string) bool { return strings.HasPrefix(n, comp+".") }
	}
	return func(n string) bool { return n == comp }
}

func explainState(st *state.State, shown func(name string) bool, showSecrets bool) explainJSON {
	masker := secret.NewMasker(action.StateSecrets(st)...)
	secretParams := map[string]bool{}
	for q := range st.Parameters {
		if name, _, _ := strings.Cut(q, "|"); manifest.LooksSecret(name) || contains(st.SecretParameters, q) {
			secretParams[q] = true
		}
	}
	show := func(v string, isSecret bool) string {
		if showSecrets {
			return v
		}
		return masker.Value(v, isSecret)
	}
	ex := explainJSON{
		Stack: st.Stack, Status: st.Status,
		Parameters: map[string]string{}, Outputs: map[string]string{},
		Provides: map[string][]string{}, Components: map[string]componentJSON{},
	}
	for q, v := range st.Parameters {
		ex.Parameters[q] = show(v, secretParams[q])
	}
	for k, v := range st.Outputs {
		ex.Outputs[k] = show(v, contains(st.SecretOutputs, k) || manifest.LooksSecret(k))
	}
	for k, v := range st.Provides {
		ex.Provides[k] = append([]string{}, v...)
	}
	for name, c := range st.Components {
		if !shown(name) {
			continue
		}
		cj := componentJSON{Status: c.Status, Outputs: map[string]string{}, Parameters: map[string]string{}, Started: rfc3339(c.Started), Finished: rfc3339(c.Finished),
			reason: show(c.Reason, false)}
		for k, v := range c.Outputs {
			cj.Outputs[k] = show(v, contains(c.SecretOutputs, k) || manifest.LooksSecret(k))
		}
		for _, p := range c.Parameters {
			cj.Parameters[p.Name] = show(p.Value, p.IsSecret())
		}
		ex.Components[name] = cj
	}
	return ex
}

func rfc3339(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339)
	return &s
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func writeExplainText(w io.Writer, st *state.State, ex explainJSON, some bool) {
	if !some {
		fmt.Fprintf(w, "stack %s: %s", ex.Stack, orDash(ex.Status))
		if st.LastRun != "" {
			fmt.Fprintf(w, " (last run %s)", st.LastRun)
		}
		fmt.Fprintln(w)
		section(w, "parameters", ex.Parameters)
		// A run records the stack's outputs when it ends: while one runs,
		// or after one was cut short, they are the last ended run's, and
		// the components' may be newer.
		if action.HasIncomplete(st) {
			section(w, "outputs (as the last run that ended left them; the components' may be newer)", ex.Outputs)
		} else {
			section(w, "outputs", ex.Outputs)
		}
		if len(ex.Provides) > 0 {
			fmt.Fprintln(w, "provides:")
			for _, k := range slices.Sorted(maps.Keys(ex.Provides)) {
				fmt.Fprintf(w, "  %s: %s\n", k, strings.Join(ex.Provides[k], ", "))
			}
		}
		fmt.Fprintln(w, "components:")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, name := range st.ComponentOrder() {
		cj, ok := ex.Components[name]
		if !ok {
			continue
		}
		c := st.Components[name]
		when := "-"
		if c.Started.IsZero() == false {
			when = c.Started.UTC().Format("2006-01-02 15:04:05Z")
			if !c.Finished.IsZero() && !c.Finished.Before(c.Started) {
				when += " (" + ui.FormatDuration(c.Finished.Sub(c.Started)) + ")"
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", name, cj.Status, when, ui.Sanitize(oneLine(cj.reason)))
	}
	tw.Flush()
	if !some {
		return
	}
	for _, name := range st.ComponentOrder() {
		cj, ok := ex.Components[name]
		if !ok {
			continue
		}
		if len(ex.Components) > 1 {
			fmt.Fprintf(w, "  %s:\n", name)
			section(w, "    parameters", cj.Parameters)
			section(w, "    outputs", cj.Outputs)
			continue
		}
		section(w, "  parameters", cj.Parameters)
		section(w, "  outputs", cj.Outputs)
	}
}

func section(w io.Writer, title string, m map[string]string) {
	if len(m) == 0 {
		return
	}
	indent := strings.Repeat(" ", len(title)-len(strings.TrimLeft(title, " ")))
	fmt.Fprintf(w, "%s:\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(tw, "%s  %s\t= %s\n", indent, k, ui.Sanitize(oneLine(m[k])))
	}
	tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
