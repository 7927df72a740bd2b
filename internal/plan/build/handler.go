package build

import (
	"github.com/gantry-dev/gantry/internal/plan"
)

// Actions of the installation handler (seed 002).
const (
	HandlerPrepare  = "prepare"
	HandlerFinalize = "finalize"
)

// HandlerPlan is the plan of one call of the stack's installation handler:
// its prepare runs before anything else of a command — before the state is
// read and the command's plan built, so that it may fetch the state or put
// tools in place — and its finalize after all of it. The config, which may
// hold secrets, is shown masked; the step reads it from the stack.
func HandlerPlan(stack, verb string, h *plan.Handler, action string, mask func(string) string) *plan.Plan {
	p := plan.New(stack, verb)
	spec := *h
	spec.Action = action
	if mask != nil {
		spec.Config = mask(spec.Config)
	}
	p.Add(&plan.Node{ID: GroupHandler + "/" + action, Kind: plan.KindHandler, Group: GroupHandler, Critical: true,
		Always: action == HandlerFinalize, Label: action + " " + h.Name, Spec: spec})
	return p
}

// Shown is a run's plans as one, to show and to save: the handler's prepare,
// the stack's plan, the handler's finalize (a run executes them one after
// another). Without a handler it is the stack's plan.
func Shown(main, prepare, finalize *plan.Plan) *plan.Plan {
	if prepare == nil && finalize == nil {
		return main
	}
	p := plan.New(main.Stack, main.Verb)
	p.Created, p.Orphans, p.Components = main.Created, main.Orphans, main.Components
	add := func(from *plan.Plan) {
		if from == nil {
			return
		}
		for _, n := range from.Nodes {
			c := *n
			p.Add(&c)
		}
		for _, e := range from.Edges {
			_ = p.Connect(e.From, e.To, e.Kind)
		}
	}
	add(prepare)
	sources := main.Sources()
	add(main)
	if prepare != nil {
		for _, n := range sources {
			_ = p.Connect(prepare.Nodes[0].ID, n.ID, plan.OnSuccess)
		}
	}
	sinks := main.Sinks()
	add(finalize)
	if finalize != nil {
		for _, n := range sinks {
			_ = p.Connect(n.ID, finalize.Nodes[0].ID, plan.OnComplete)
		}
		if prepare != nil {
			_ = p.Connect(prepare.Nodes[0].ID, finalize.Nodes[0].ID, plan.OnSuccess)
		}
	}
	return p
}
