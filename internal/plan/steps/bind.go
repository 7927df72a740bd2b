package steps

import (
	"context"
	"fmt"

	"github.com/gantry-dev/gantry/internal/plan"
)

// Runner gives the runner of a step, by its spec: the executor's Binder.
func (rt *Runtime) Runner(n *plan.Node) (plan.Runner, error) {
	var run func(ctx context.Context, env plan.Env) plan.Result
	switch s := n.Spec.(type) {
	case plan.Begin:
		run = func(ctx context.Context, env plan.Env) plan.Result { return rt.begin(env, s) }
	case plan.Verb:
		run = func(ctx context.Context, env plan.Env) plan.Result {
			return limited(ctx, env, s.Limits, func(ctx context.Context, env plan.Env) plan.Result { return rt.verb(ctx, env, n, s) })
		}
	case plan.Unchanged:
		run = func(ctx context.Context, env plan.Env) plan.Result { return rt.unchanged(s) }
	case plan.Entry:
		run = func(ctx context.Context, env plan.Env) plan.Result { return rt.entry(ctx, env, n, s) }
	case plan.Record:
		run = func(ctx context.Context, env plan.Env) plan.Result { return rt.record(ctx, env, n, s) }
	case plan.End:
		run = func(ctx context.Context, env plan.Env) plan.Result { return rt.end(env, n, s) }
	case plan.Injected:
		run = func(ctx context.Context, env plan.Env) plan.Result { return rt.injected(ctx, env, n, s) }
	case plan.Ready:
		run = func(ctx context.Context, env plan.Env) plan.Result { return rt.ready(ctx, env, n, s) }
	case plan.Tools:
		run = func(ctx context.Context, env plan.Env) plan.Result { return tools(s) }
	case plan.Clean:
		run = func(ctx context.Context, env plan.Env) plan.Result { return rt.clean(s) }
	case plan.Handler:
		run = func(ctx context.Context, env plan.Env) plan.Result { return rt.handler(ctx, env, s) }
	case plan.Leftovers:
		run = func(ctx context.Context, env plan.Env) plan.Result { return leftovers(ctx, env, s) }
	case plan.Setup:
		run = func(ctx context.Context, env plan.Env) plan.Result { return rt.setup(s) }
	case plan.Clone:
		run = func(ctx context.Context, env plan.Env) plan.Result { return clone(ctx, env, s) }
	case plan.Place:
		run = func(ctx context.Context, env plan.Env) plan.Result { return place(ctx, env, s) }
	case plan.Finalize:
		run = func(ctx context.Context, env plan.Env) plan.Result { return rt.finalize(env, n) }
	default:
		return nil, fmt.Errorf("no runner for steps of kind %s (%T)", n.Kind, n.Spec)
	}
	return plan.RunnerFunc(run), nil
}
