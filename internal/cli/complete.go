package cli

import (
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/ui"
)

// Shell completion (gantry completion bash|zsh|fish|powershell): the
// shells ask "gantry __complete ARGS… PARTIAL", and these functions answer
// with component names, output formats, verbs and run ids. They never
// print anything else, never prompt, and a stack that does not load
// completes nothing.

// completeWith answers with the values that begin with what was typed.
func completeWith(values []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for _, v := range values {
		if strings.HasPrefix(v, toComplete) {
			out = append(out, v)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// fixed completes a flag with a fixed list of values.
func fixed(values ...string) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		return completeWith(values, toComplete)
	}
}

// stackComponents are the components of the stack the arguments name (or
// the folder's hub.yaml or acre.yaml), in deploy order; nil when it does
// not load.
func stackComponents(cmd *cobra.Command, args []string) []string {
	args, err := stackArgs(args)
	if err != nil {
		return nil
	}
	statePath := ""
	if f := cmd.Flags().Lookup("state"); f != nil {
		statePath = f.Value.String()
	}
	st, err := action.Load(action.Source{Manifest: args[0], ParamsFiles: args[1:], StatePath: stateOrEnv(statePath, ""), GraphOnly: true}, "")
	if err != nil {
		return nil
	}
	defer st.Store.Close()
	return st.Graph.Order
}

// completeComponent completes one component name of the stack.
func completeComponent(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return completeWith(stackComponents(cmd, args), toComplete)
}

// completeComponents completes a comma-separated list of the stack's
// components (-c a,b): the last name, after those already given.
func completeComponents(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	given, last := "", toComplete
	if i := strings.LastIndexByte(toComplete, ','); i >= 0 {
		given, last = toComplete[:i+1], toComplete[i+1:]
	}
	taken := strings.Split(strings.TrimSuffix(given, ","), ",")
	var out []string
	for _, c := range stackComponents(cmd, args) {
		if strings.HasPrefix(c, last) && !slices.Contains(taken, c) {
			out = append(out, given+c)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// registerSelection completes the selection flags (-c, -o, -l) with the
// stack's components.
func registerSelection(cmd *cobra.Command) {
	_ = cmd.RegisterFlagCompletionFunc("components", completeComponents)
	_ = cmd.RegisterFlagCompletionFunc("offset", completeComponent)
	_ = cmd.RegisterFlagCompletionFunc("limit", completeComponent)
}

// stateComponents completes the components the state (-s, or the
// folder's) records, for explain -c.
func stateComponents(cmd *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	statePath, _ := cmd.Flags().GetString("state")
	st := stateIfAny(context.Background(), statePath)
	if st == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names := make([]string, 0, len(st.Components))
	for n := range st.Components {
		names = append(names, n)
	}
	sort.Strings(names)
	return completeWith(names, toComplete)
}

// runIDs completes the run ids of the stack whose state -s names, newest
// first, for logs and report.
func (a *app) runIDs(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	statePath, _ := cmd.Flags().GetString("state")
	r, err := a.quiet().runsOf(statePath)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	runs, err := r.list()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ids := make([]string, len(runs))
	for i, run := range runs {
		ids[i] = run.ID
	}
	out, dir := completeWith(ids, toComplete)
	return out, dir | cobra.ShellCompDirectiveKeepOrder
}

// runComponents completes the components with a log in the run logs
// names (the latest without one), for logs -c.
func (a *app) runComponents(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	statePath, _ := cmd.Flags().GetString("state")
	run, err := a.quiet().findRun(statePath, args)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names, _ := ui.Logs(run.Dir)
	return completeWith(names, toComplete)
}

// invokeArgs completes invoke's COMPONENT and VERB: the components of the
// elaborated stack (-m, GANTRY_ELABORATE, hub.yaml.elaborate), then the
// custom verbs the component or the stack declares.
func invokeArgs(f *insideFlags) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		if len(args) >= 2 || f.resolve() != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		st, err := action.Load(action.Source{Manifest: f.manifest, StatePath: f.statePath, GraphOnly: true}, "")
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		defer st.Store.Close()
		if len(args) == 0 {
			return completeWith(st.Graph.Order, toComplete)
		}
		c := st.Res.Component(args[0])
		if c == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var verbs []string
		for _, v := range append(slices.Clone(c.Lifecycle.Verbs), st.Res.Stack.Lifecycle.Verbs...) {
			if v != plan.VerbDeploy && v != plan.VerbUndeploy && !slices.Contains(verbs, v) {
				verbs = append(verbs, v)
			}
		}
		return completeWith(verbs, toComplete)
	}
}

// quiet is an app whose output and errors are dropped: a completion prints
// only the values it completes.
func (a *app) quiet() *app { return &app{stdin: a.stdin, stdout: discard{}, stderr: discard{}} }

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
