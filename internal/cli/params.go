package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/secret"
	"github.com/gantry-dev/gantry/internal/ui"
)

// paramRow is one line of gantry params: the JSON shape of DESIGN section 9.
type paramRow struct {
	Name      string `json:"name"`
	Component string `json:"component"`
	Value     string `json:"value"`
	Source    string `json:"source"`
}

func newParamsCmd(a *app) *cobra.Command {
	var sf stackFlags
	var comp, output string
	var showSecrets bool
	cmd := &cobra.Command{
		Use:   "params [STACK] [PARAMS...]",
		Short: "Show every parameter's value and where it came from",
		Long: `params locks the stack's parameters as deploy would — environment, params files,
state, defaults — and prints each value with its source: the file:line of the
winning definition, env:VAR, file:PATH, default, prompt, state or
output:COMPONENT; for a leaf of a nested stack whose value reads config, the
level whose value or default won (hub.yaml:12 (default of shop)). With -c it shows one component's expanded parameters; outputs
of components that have not run yet show as pending. Secrets are masked unless
--show-secrets.`,
		Example: `  gantry params hub.yaml
  gantry params hub.yaml params.yaml -c api
  gantry params hub.yaml --output json`,
		Args: minArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := stackArgs(args)
			if err != nil {
				return err
			}
			if output != "text" && output != "json" {
				return usageError("--output %q: expected text or json", output)
			}
			st, err := a.loadStack(args, &sf)
			if err != nil {
				return err
			}
			if err := a.lockParams(st, sf.said()); err != nil {
				return err
			}
			masker := secret.NewMasker()
			for _, v := range st.Locked.Values() {
				if v.Secret {
					masker.Add(v.Value)
				}
			}
			var values []*params.Value
			if comp == "" {
				values = st.Locked.Values()
			} else {
				exp, err := a.expandForDisplay(st, comp)
				if err != nil {
					return err
				}
				values = exp.Values
				for _, v := range values {
					if v.Secret {
						masker.Add(v.Value)
					}
				}
			}
			rows := make([]paramRow, 0, len(values))
			for _, v := range values {
				r := paramRow{Name: v.Name, Component: v.Component, Source: v.Source}
				if comp != "" {
					r.Component = comp
				}
				// A leaf of a nested stack: say which level's config won.
				if s, ok := st.Res.SpreadSource(manifest.QualifiedName(v.Name, r.Component), v.Source); ok {
					r.Source = s
				}
				switch {
				case v.Pending != "":
					r.Value = "(pending output of " + v.Pending + ")"
				case showSecrets:
					r.Value = v.Value
				default:
					r.Value = masker.Value(v.Value, v.Secret)
				}
				rows = append(rows, r)
			}
			if output == "json" {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tCOMPONENT\tVALUE\tSOURCE")
			for _, r := range rows {
				// Values come from params files, the environment, files
				// and the state: no escape sequence of theirs reaches the
				// terminal (a clipboard write, a screen clear), as in
				// explain.
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", ui.Sanitize(r.Name), ui.Sanitize(r.Component), ui.Sanitize(oneLine(r.Value)), ui.Sanitize(r.Source))
			}
			return tw.Flush()
		},
	}
	sf.register(cmd)
	cmd.Flags().StringVarP(&comp, "component", "c", "", "show the expanded parameters of this component")
	cmd.Flags().StringVar(&output, "output", "text", "text or json")
	cmd.Flags().BoolVar(&showSecrets, "show-secrets", false, "print secret values")
	_ = cmd.RegisterFlagCompletionFunc("component", completeComponent)
	_ = cmd.RegisterFlagCompletionFunc("output", fixed("text", "json"))
	return cmd
}

// oneLine keeps table rows on one line.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\n\t") {
		return s
	}
	return strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(s)
}

// expandForDisplay expands one component's parameters with the outputs known
// from the state; outputs not known yet come back pending.
func (a *app) expandForDisplay(st *action.Stack, comp string) (*params.Expanded, error) {
	c := st.Res.Component(comp)
	if c == nil {
		names := make([]string, len(st.Res.Components))
		for i, c := range st.Res.Components {
			names[i] = c.Meta.Name
		}
		msg := fmt.Sprintf("no component %q in the stack", comp)
		if s := manifest.Suggest(comp, names); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		return nil, usageError("%s", msg)
	}
	exp, diags := params.ExpandComponent(params.ComponentInput{
		Locked:    st.Locked,
		Component: c,
		Depends:   componentRef(st.Res.Stack, comp).Depends,
		Outputs:   build.NewOutputIndex(st.Res, st.Graph, st.State),
		Provides:  build.StaticProvides(st.Res, st.Graph, st.State, st.Locked, comp),
	})
	if err := reportDiags(a.stderr, diags, "nothing was run"); err != nil {
		return nil, err
	}
	return exp, nil
}
