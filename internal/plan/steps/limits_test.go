package steps

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/plan"
)

// TestLimitedInterruptedDuringBackoff: a run stopped while a failed step
// waits for its next attempt ends the step at once, and its reason says
// so beside the failure it would have tried again.
func TestLimitedInterruptedDuringBackoff(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var tries int
	l := &plan.Limits{Retries: &plan.Retries{Attempts: 3, Backoff: 3600}}
	env := &interruptingEnv{fakeEnv: &fakeEnv{}, when: "trying again", cancel: cancel}
	res := limited(ctx, env, l, func(context.Context, plan.Env) plan.Result {
		tries++
		return plan.Fail(errors.New("connection refused"))
	})
	if tries != 1 {
		t.Errorf("%d attempts, want 1", tries)
	}
	if want := "connection refused (interrupted before attempt 2 of 3)"; res.Status != plan.Failed || res.Reason != want {
		t.Errorf("result %v %q, want failed %q", res.Status, res.Reason, want)
	}
}

// interruptingEnv cancels the run when the step logs a line holding when.
type interruptingEnv struct {
	*fakeEnv
	when   string
	cancel context.CancelFunc
}

func (e *interruptingEnv) Logf(format string, args ...any) {
	e.fakeEnv.Logf(format, args...)
	if strings.Contains(fmt.Sprintf(format, args...), e.when) {
		e.cancel()
	}
}
