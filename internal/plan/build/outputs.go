package build

import (
	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/state"
)

// NewOutputIndex returns the outputs index of a stack: every component's
// declared outputs, the values recorded in the state, plain names visible
// only from a producer's descendants in the graph, and each component's kind
// (a component does not see the outputs of its kind).
func NewOutputIndex(res *elaborate.Result, g *Graph, st *state.State) *params.OutputIndex {
	x := params.NewOutputIndex(g.Order)
	x.SetVisibility(g.IsAncestor)
	for _, c := range res.Components {
		names := make([]string, 0, len(c.Outputs))
		for _, o := range c.Outputs {
			names = append(names, o.Name)
		}
		x.Declare(c.Meta.Name, names)
		x.SetKind(c.Meta.Name, c.Meta.Kind)
	}
	if st != nil {
		for name, c := range st.Components {
			if c.Outputs != nil {
				x.Set(name, c.Outputs, c.SecretOutputs)
			}
		}
	}
	return x
}

// OutputsOutside is the outputs index of a run (NewOutputIndex) that knows
// only the recorded outputs of the components it does not deploy: those of
// the components it deploys (inRun) are not known before they run, whatever
// the state says.
func OutputsOutside(res *elaborate.Result, g *Graph, st *state.State, inRun func(string) bool) *params.OutputIndex {
	if st != nil {
		// A shallow copy with fewer components: the index only reads the
		// records (a deep clone of the state cost 19 ms at 10,000
		// components).
		cp := *st
		cp.Components = make(map[string]*state.Component, len(st.Components))
		for name, c := range st.Components {
			if !inRun(name) {
				cp.Components[name] = c
			}
		}
		st = &cp
	}
	return NewOutputIndex(res, g, st)
}

// StaticProvides is hub.provides of comp in a deploy of the whole stack
// (HubProvides), without the environment's capabilities, which only a run
// looks for: what gantry params and invoke show. A component before it
// whose tuning condition is surely not true in locked provides nothing,
// as the run skips it. As in the plan of a whole deploy, a condition that
// is a link to an output of the stack is the run's to tell (every
// component runs, so none of theirs is known before), and counts as met;
// one skipped for an optional requirement is not known here either (the
// environment may meet it).
func StaticProvides(res *elaborate.Result, g *Graph, st *state.State, locked *params.Locked, comp string) string {
	all := func(string) bool { return true }
	h := NewHubProvides(res, g.Order, st, InitialProvides(res, nil, nil), false, all)
	tuning := TuningIndex(res.Stack)
	if locked == nil || len(tuning) == 0 {
		return h.For(comp)
	}
	depends := make(map[string][]string, len(res.Stack.Components))
	for _, ref := range res.Stack.Components {
		depends[ref.Name] = ref.Depends
	}
	// A whole deploy runs every component of the stack first: only the
	// outputs of those it no longer lists are known.
	outputs := OutputsOutside(res, g, st, func(name string) bool { return res.Component(name) != nil })
	for _, name := range g.Order {
		if name == comp {
			break
		}
		c := res.Component(name)
		if c == nil || len(tuning[name]) == 0 {
			continue
		}
		if why, pending := UnmetCondition(tuning[name], locked, outputs, c, depends[name]); why != "" && pending == "" {
			h.Provided(name, nil)
		}
	}
	return h.For(comp)
}

// DeclaredProvides are the capabilities a stack declares itself (a base
// stack's provides), without those its components provide when they deploy.
func DeclaredProvides(res *elaborate.Result) []string {
	fromComponents := map[string]bool{}
	for _, c := range res.Components {
		for _, p := range c.Provides {
			fromComponents[p] = true
		}
	}
	var out []string
	for _, p := range res.Stack.Provides {
		if !fromComponents[p] {
			out = append(out, p)
		}
	}
	return out
}

// InitialProvides are the capabilities known when a run starts, which
// HUB_PROVIDES tells the components: those that satisfy requirements then
// (SatisfiedAtStart), and what the stack's platform provides of the
// environment's capabilities. Components add theirs when they deploy,
// never before.
func InitialProvides(res *elaborate.Result, before *state.State, env []string) []string {
	out := SatisfiedAtStart(res, before, env)
	if res.Stack.Platform != nil {
		for _, c := range res.Stack.Platform.Provides {
			if IsEnvironmentCapability(c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// SatisfiedAtStart are the capabilities that satisfy a requirement when a
// run starts: the environment's (env), what the stack itself declares it
// provides, what its platform provides (platform.provides: the stack is
// deployed onto another, gantry elaborate -s fills it, as the Hub CLI
// merges it at deploy), and what deployed components recorded. Of the
// platform's, not the environment's capabilities (kubernetes, aws, …): as
// the Hub CLI does, their tools are checked on every deploy, whatever the
// platform says.
func SatisfiedAtStart(res *elaborate.Result, before *state.State, env []string) []string {
	out := append(append([]string(nil), env...), DeclaredProvides(res)...)
	if res.Stack.Platform != nil {
		for _, c := range res.Stack.Platform.Provides {
			if !IsEnvironmentCapability(c) {
				out = append(out, c)
			}
		}
	}
	if before != nil {
		for _, name := range before.ComponentOrder() {
			if c := before.Components[name]; c.Status == state.StatusDeployed {
				out = append(out, c.Provides...)
			}
		}
	}
	return out
}

// environmentTools are the well-known requirements the environment satisfies
// when their tool is on PATH (seed 000: these cannot be tuned).
var environmentTools = map[string][]string{
	"aws":        {"aws"},
	"azure":      {"az"},
	"gcp":        {"gcloud"},
	"kubectl":    {"kubectl"},
	"kubernetes": {"kubectl"},
	"helm":       {"helm"},
	"terraform":  {"terraform"},
	"vault":      {"vault"},
}

// IsEnvironmentCapability reports whether a requirement is one the
// environment provides.
func IsEnvironmentCapability(name string) bool {
	_, ok := environmentTools[name]
	return ok
}

// EnvironmentTools are the tools that must be on PATH for the environment to
// provide a capability (nil for other capabilities).
func EnvironmentTools(capability string) []string { return environmentTools[capability] }

// RequiredEnvironment lists the environment capabilities the stack's
// components require, each once, in the order they are first required.
func RequiredEnvironment(res *elaborate.Result) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range res.Components {
		for _, r := range c.Requires {
			if IsEnvironmentCapability(r) && !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	return out
}
