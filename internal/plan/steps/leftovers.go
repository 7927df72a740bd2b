package steps

import (
	"context"
	"errors"
	"time"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/plan"
)

// leftoverPoll is how often the leftovers of a killed run are looked for:
// they are not this process's children, so there is nothing to wait on.
const leftoverPoll = 200 * time.Millisecond

// leftovers waits until the process groups a killed run left running have
// ended, so that the same work never runs twice at once. It names them, and
// says again whenever some end.
func leftovers(ctx context.Context, env plan.Env, s plan.Leftovers) plan.Result {
	left := make([]component.Leftover, len(s.Processes))
	for i, p := range s.Processes {
		left[i] = component.Leftover{PID: p.PID, Dir: p.Dir, Args: p.Command, Boot: p.Boot, Started: p.Started}
	}
	prev := "the previous run"
	if s.Run != "" {
		prev += " (" + s.Run + ")"
	}
	err := component.WaitGone(ctx, left, leftoverPoll, func(alive []component.Leftover) {
		env.Logf("%s was killed and left %d process group(s) running; waiting for them to end before going on (Ctrl-C stops waiting):", prev, len(alive))
		for _, l := range alive {
			env.Logf("  %s", l.String())
		}
	})
	if err != nil {
		return plan.Fail(errors.New("interrupted while waiting for the processes of the previous run"))
	}
	return plan.Ok()
}
