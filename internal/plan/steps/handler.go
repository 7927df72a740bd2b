package steps

import (
	"context"
	"fmt"
	"time"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/plan"
)

// handler calls the stack's installation handler (seed 002, sow's
// meta.installationHandler) with "prepare <config>" before anything else of
// the command and "finalize <config>" after all of it. finalize runs even
// when the run was interrupted: it is not cancelled with the run.
func (rt *Runtime) handler(ctx context.Context, env plan.Env, s plan.Handler) plan.Result {
	if s.Action == "finalize" {
		ctx = context.WithoutCancel(ctx)
	}
	// The spec shows the config masked; the handler gets it as the stack
	// says it.
	h := rt.Res.Stack.Meta.InstallationHandler
	if h == nil {
		return plan.Fail(fmt.Errorf("internal error: the stack has no installation handler"))
	}
	config, err := h.ConfigJSON()
	if err != nil {
		return plan.Fail(fmt.Errorf("installation handler config: %w", err))
	}
	err = component.Run(ctx, component.Process{
		Args: []string{s.Path, s.Action, config}, Dir: s.Dir,
		Env: rt.OSEnv, Stdout: env.Stream(), Stderr: env.Stream(), Grace: 10 * time.Second,
	})
	if err != nil {
		return failure(ctx, fmt.Errorf("installation handler %s %s: %w", s.Name, s.Action, err))
	}
	return plan.Ok()
}
