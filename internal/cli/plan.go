package cli

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/report"
	"github.com/gantry-dev/gantry/internal/ui"
)

// componentsByDefault is the size of stack past which dot and mermaid draw
// one box per component unless --graph steps asks for every step: a step
// graph of more components is too big to read.
const componentsByDefault = 10

// The graphs of gantry plan --output dot|mermaid (--graph).
const (
	graphComponents = "components"
	graphSteps      = "steps"
)

func newPlanCmd(a *app) *cobra.Command {
	var f runFlags
	var verb string
	var graph string
	var detailed detailedExit
	cmd := &cobra.Command{
		Use:   "plan [STACK|ELABORATE] [PARAMS...]",
		Short: "Show the plan of a deploy or undeploy without running anything",
		Long: `plan builds the plan deploy (or with --verb undeploy, undeploy) would run — the
pre-flight group, each component's steps with their lifecycle injection points
and what will happen to it (deploy, redeploy, unchanged, skip, teardown
orphan), the post-flight group — and prints it: as an indented tree (text), as
nodes and edges (json, with the failure paths), as a graph (dot, mermaid), or
as a page to open in a browser (html: the component graph, what would run and
why, each component's steps and parameters with their sources).

dot and mermaid draw one box per component (its steps listed in it, a dashed
box when it is optional) with arrows labelled by why one runs after another
(depends, provides, output), leaving out the arrows longer paths imply —
with --graph components, the default for stacks of more than 10 components —
or every step of the plan with --graph steps (the default for smaller
stacks).
It takes no lock and changes nothing.`,
		Example: `  gantry plan hub.yaml
  gantry plan hub.yaml --verb undeploy
  gantry plan hub.yaml --output dot --graph components | dot -Tsvg > components.svg
  gantry plan hub.yaml --output mermaid --graph steps
  gantry plan hub.yaml --output html > plan.html
  gantry plan hub.yaml --resume -c api -a`,
		Args: minArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := stackArgs(args)
			if err != nil {
				return err
			}
			if verb != plan.VerbDeploy && verb != plan.VerbUndeploy {
				return usageError("--verb %q: expected deploy or undeploy", verb)
			}
			switch f.output {
			case "text", "json", "dot", "mermaid", "html":
			default:
				return usageError("--output %q: expected text, json, dot, mermaid or html", f.output)
			}
			switch graph {
			case "", graphComponents, graphSteps:
			default:
				return usageError("--graph %q: expected components or steps", graph)
			}
			if graph != "" && f.output != "dot" && f.output != "mermaid" {
				return usageError("--graph chooses the graph of --output dot or mermaid, not of %s", f.output)
			}
			src, err := f.source(args)
			if err != nil {
				return err
			}
			pa := &action.Plan{Source: src, Verb: verb, Selection: f.selection(), Resume: f.resume, Force: f.force, Terminal: a.terminal(), Warn: a.warn}
			if f.output == "html" {
				m, err := pa.Report(cmd.Context())
				if err != nil {
					return a.failure(err)
				}
				return report.Write(a.stdout, m)
			}
			p, err := pa.Run(cmd.Context())
			if err != nil {
				return a.failure(err)
			}
			detailed.record(p)
			byComponent := graph == graphComponents || graph == "" && len(p.Components) > componentsByDefault
			// Labels come from manifests, some of them someone else's
			// (gantry pull): no escape sequence of theirs reaches the
			// terminal, as in the run's display. JSON escapes them.
			var text strings.Builder
			switch {
			case f.output == "json":
				return p.WriteJSON(a.stdout)
			case f.output == "dot" && byComponent:
				err = p.ComponentGraph().WriteDOT(&text)
			case f.output == "dot":
				err = p.WriteDOT(&text)
			case f.output == "mermaid" && byComponent:
				err = p.ComponentGraph().WriteMermaid(&text)
			case f.output == "mermaid":
				err = p.WriteMermaid(&text)
			default:
				err = p.WriteText(&text, plan.RenderOptions{Stack: f.stackGiven(args)})
			}
			if err != nil {
				return err
			}
			// A carriage return inside a label would make the terminal
			// start the line again: a space, which keeps a graph's syntax.
			_, err = io.WriteString(a.stdout, ui.SanitizeLines(strings.ReplaceAll(text.String(), "\r", " ")))
			return err
		},
	}
	f.register(cmd, plan.VerbDeploy)
	detailed.register(cmd)
	cmd.Flags().StringVar(&verb, "verb", plan.VerbDeploy, "deploy or undeploy")
	cmd.Flags().Lookup("output").Usage = "text, json, dot, mermaid or html"
	_ = cmd.RegisterFlagCompletionFunc("output", fixed("text", "json", "dot", "mermaid", "html"))
	_ = cmd.RegisterFlagCompletionFunc("verb", fixed(plan.VerbDeploy, plan.VerbUndeploy))
	cmd.Flags().StringVar(&graph, "graph", "", "dot and mermaid: components (one box per component, the default past 10 components) or steps (every step)")
	_ = cmd.RegisterFlagCompletionFunc("graph", fixed(graphComponents, graphSteps))
	for _, name := range []string{"dry-run", "yes", "force", "parallel"} {
		_ = cmd.Flags().MarkHidden(name)
	}
	return cmd
}
