package cli

import (
	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/plan"
)

func newPlanCmd(a *app) *cobra.Command {
	var f runFlags
	var verb string
	cmd := &cobra.Command{
		Use:   "plan STACK|ELABORATE [PARAMS...]",
		Short: "Show the plan of a deploy or undeploy without running anything",
		Long: `plan builds the plan deploy (or with --verb undeploy, undeploy) would run — the
pre-flight group, each component's steps with their lifecycle injection points
and what will happen to it (deploy, redeploy, unchanged, skip, teardown
orphan), the post-flight group — and prints it: as an indented tree (text), as
nodes and edges (json, with the failure paths), or as a graph (dot, mermaid).
It takes no lock and changes nothing.`,
		Example: `  gantry plan hub.yaml
  gantry plan hub.yaml --verb undeploy
  gantry plan hub.yaml --output dot | dot -Tsvg > plan.svg
  gantry plan hub.yaml --resume -c api -a`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if verb != plan.VerbDeploy && verb != plan.VerbUndeploy {
				return usageError("--verb %q: expected deploy or undeploy", verb)
			}
			switch f.output {
			case "text", "json", "dot", "mermaid":
			default:
				return usageError("--output %q: expected text, json, dot or mermaid", f.output)
			}
			src, err := f.source(args)
			if err != nil {
				return err
			}
			p, err := (&action.Plan{Source: src, Verb: verb, Selection: f.selection(), Resume: f.resume, Force: f.force, Terminal: a.terminal(), Warn: a.warn}).Run(cmd.Context())
			if err != nil {
				return a.failure(err)
			}
			switch f.output {
			case "json":
				return p.WriteJSON(a.stdout)
			case "dot":
				return p.WriteDOT(a.stdout)
			case "mermaid":
				return p.WriteMermaid(a.stdout)
			}
			return p.WriteText(a.stdout, plan.RenderOptions{Manifest: args[0]})
		},
	}
	f.register(cmd, plan.VerbDeploy)
	cmd.Flags().StringVar(&verb, "verb", plan.VerbDeploy, "deploy or undeploy")
	cmd.Flags().Lookup("output").Usage = "text, json, dot or mermaid"
	for _, name := range []string{"dry-run", "yes", "force", "parallel"} {
		_ = cmd.Flags().MarkHidden(name)
	}
	return cmd
}
