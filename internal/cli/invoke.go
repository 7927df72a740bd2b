package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/landscape"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/ui"
)

// insideFlags locate the stack from inside a component, where gantry sets
// GANTRY_ELABORATE and GANTRY_STATE.
type insideFlags struct {
	manifest  string
	statePath string
}

func (f *insideFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.manifest, "manifest", "m", "", "elaborated stack (default: $GANTRY_ELABORATE, else hub.yaml.elaborate)")
	cmd.Flags().StringVarP(&f.statePath, "state", "s", "", "state file (default: $GANTRY_STATE)")
}

func (f *insideFlags) resolve() error {
	if f.manifest == "" {
		f.manifest = os.Getenv("GANTRY_ELABORATE")
	}
	if f.statePath == "" {
		f.statePath = os.Getenv("GANTRY_STATE")
	}
	if f.manifest == "" {
		if _, err := os.Stat("hub.yaml" + elaborate.Suffix); err == nil {
			f.manifest = "hub.yaml" + elaborate.Suffix
		}
	}
	if f.manifest == "" {
		return usageError("no stack: pass -m hub.yaml.elaborate, or run from inside a component where GANTRY_ELABORATE is set")
	}
	if f.statePath == "" {
		f.statePath = action.DefaultStatePath(f.manifest)
	}
	return nil
}

func newInvokeCmd(a *app) *cobra.Command {
	var f insideFlags
	output := "text"
	var lockTimeout time.Duration
	cmd := &cobra.Command{
		Use:   "invoke COMPONENT VERB",
		Short: "Run a custom verb (backup, rotate, …) of a deployed component",
		Long: `invoke runs a verb that a component declares in lifecycle.verbs, with the
parameters the component was deployed with, and leaves the state unchanged. It
works from inside a component's implementation (gantry sets GANTRY_ELABORATE
and GANTRY_STATE) or with -m and -s. Deploy and undeploy go through gantry
deploy and undeploy -c COMPONENT.`,
		Example: `  gantry invoke db backup
  gantry invoke db backup -m hub.yaml.elaborate -s hub.yaml.state
  gantry invoke db backup --lock-timeout 10m   # wait for a deploy going on
  gantry invoke db backup --output json`,
		Args: argsRange(2, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			comp, verb := args[0], args[1]
			if verb == plan.VerbDeploy || verb == plan.VerbUndeploy {
				return usageError("invoke runs custom verbs; use gantry %s -c %s", verb, comp)
			}
			if output != "text" && output != "json" {
				return usageError("--output %q: expected text or json", output)
			}
			lock, err := a.lockOptions(lockTimeout)
			if err != nil {
				return err
			}
			if err := refuseLandscape(f.manifest, comp); err != nil {
				return err
			}
			if err := f.resolve(); err != nil {
				return err
			}
			out, err := (&action.Invoke{
				Source:    action.Source{Manifest: f.manifest, StatePath: f.statePath, Lock: lock},
				Component: comp, Verb: verb,
				Terminal: a.terminal(), Warn: a.warn, Display: a.display(output, ui.TTYOptions{}), Interrupted: a.interrupted,
			}).Run(cmd.Context())
			return a.runEnd(out, err)
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&output, "output", "text", "text, or json for one event per line")
	registerLockTimeout(cmd.Flags(), &lockTimeout)
	_ = cmd.RegisterFlagCompletionFunc("output", fixed("text", "json"))
	cmd.ValidArgsFunction = invokeArgs(&f)
	return cmd
}

func newRenderCmd(a *app) *cobra.Command {
	var f insideFlags
	var comp, kind string
	cmd := &cobra.Command{
		Use:   "render TEMPLATE...",
		Short: "Render template files with a component's parameters",
		Long: `render renders the given templates (*.template, *.gotemplate) next to
themselves, with the parameters of a component: the ones the state recorded
for it, else expanded from the stack. From inside a component gantry sets
COMPONENT_NAME, GANTRY_ELABORATE and GANTRY_STATE; elsewhere pass -c, -m, -s.`,
		Example: `  gantry render values.yaml.template
  gantry render -c api -m hub.yaml.elaborate config.json.gotemplate`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if comp == "" {
				comp = os.Getenv("COMPONENT_NAME")
			}
			if comp == "" {
				return usageError("no component: pass -c, or run from inside a component where COMPONENT_NAME is set")
			}
			if err := f.resolve(); err != nil {
				return err
			}
			st, err := a.loadStack([]string{f.manifest}, &stackFlags{statePath: f.statePath, consequence: "nothing was rendered"})
			if err != nil {
				return err
			}
			exp, c, err := a.componentParams(st, comp)
			if err != nil {
				return err
			}
			declared := kind
			if declared == "" && c.Templates != nil {
				declared = c.Templates.Kind
			}
			var errs []error
			for _, t := range args {
				r, err := component.RenderFile(t, component.KindOf(t, declared), exp, templateChain(st, comp, c))
				if err != nil {
					errs = append(errs, err)
					continue
				}
				fmt.Fprintln(a.stdout, relPath(r.Output))
			}
			if err := errors.Join(errs...); err != nil {
				return withCode(ExitFailed, err)
			}
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().StringVarP(&comp, "component", "c", "", "the component whose parameters to use (default: $COMPONENT_NAME)")
	cmd.Flags().StringVar(&kind, "kind", "", "curly, mustache or go (default: the component's templates.kind)")
	return cmd
}

// componentParams returns a component's parameters: as the state recorded
// them when it has run, else expanded from the stack with the outputs known.
func (a *app) componentParams(st *action.Stack, comp string) (*params.Expanded, *manifest.Component, error) {
	c := st.Res.Component(comp)
	if c == nil {
		return nil, nil, usageError("no component %q in %s", comp, filepath.Base(st.Res.Stack.File))
	}
	outputs := build.NewOutputIndex(st.Res, st.Graph, st.State)
	if st.State != nil {
		if rec, ok := st.State.Components[comp]; ok && len(rec.Parameters) > 0 {
			values := make([]*params.Value, len(rec.Parameters))
			for i, p := range rec.Parameters {
				values[i] = &params.Value{Name: p.Name, Value: p.Value, Env: p.Env, Secret: p.IsSecret()}
			}
			locked := params.FromState(st.Res.Stack.Meta.Name, st.State.DeploymentID, st.State.Parameters)
			exp := params.Recorded(comp, values, outputs, locked)
			exp.SetProvides(build.StaticProvides(st.Res, st.Graph, st.State, locked, comp))
			return exp, c, nil
		}
	}
	if err := a.lockParams(st, "nothing was rendered"); err != nil {
		return nil, nil, err
	}
	exp, diags := params.ExpandComponent(params.ComponentInput{
		Locked: st.Locked, Component: c, Depends: componentRef(st.Res.Stack, comp).Depends,
		Outputs: outputs, Provides: build.StaticProvides(st.Res, st.Graph, st.State, st.Locked, comp),
	})
	if err := reportDiags(a.stderr, diags, "nothing was rendered"); err != nil {
		return nil, nil, err
	}
	return exp, c, nil
}

// templateChain is a component's folder and its template chain.
func templateChain(st *action.Stack, comp string, c *manifest.Component) []string {
	if dirs := st.Res.TemplateDirs[comp]; len(dirs) > 0 {
		return dirs
	}
	return []string{c.Dir}
}

// refuseLandscape says that a sow landscape's components have no custom
// verbs when manifest (-m, else $GANTRY_ELABORATE, else the current
// folder) is one: invoke would look for a hub.yaml.elaborate, or a state
// named after the folder, and point the wrong way.
func refuseLandscape(manifest, comp string) error {
	if manifest == "" {
		manifest = os.Getenv("GANTRY_ELABORATE")
	}
	root, ok := "", false
	switch {
	case manifest == "":
		if _, err := os.Stat("hub.yaml" + elaborate.Suffix); err != nil {
			root, ok = landscape.IsLandscape(".")
		}
	case filepath.Base(manifest) == landscape.AcreFile+elaborate.Suffix:
		root, ok = landscape.IsLandscape(filepath.Dir(manifest))
	default:
		root, ok = landscape.IsLandscape(manifest)
	}
	if !ok {
		return nil
	}
	dir := plan.ShellWord(relPath(root))
	return usageError("%s is a sow landscape: its components have no custom verbs (sow deploys and deletes them): use gantry deploy %s -c %s, or gantry undeploy %s -c %s", dir, dir, plan.ShellWord(comp), dir, plan.ShellWord(comp))
}
