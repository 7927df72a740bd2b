package build

import (
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plan"
)

// verbLimits are the timeout and retries of a component's verb: its
// lifecycle's (the stack entry's, else the component manifest's), else the
// stack lifecycle's defaults.
func (b *builder) verbLimits(lc *manifest.ComponentLifecycle) *plan.Limits {
	timeout, retries := lc.Timeout, lc.Retries
	sl := &b.res.Stack.Lifecycle
	if timeout == nil {
		timeout = sl.Timeout
	}
	if retries == nil {
		retries = sl.Retries
	}
	return limits(timeout, retries)
}

// StepLimits are an injected step's timeout and retries.
func StepLimits(st *manifest.Step) *plan.Limits { return limits(st.Timeout, st.Retries) }

func limits(timeout *manifest.Duration, retries *manifest.Retries) *plan.Limits {
	if timeout == nil && retries == nil {
		return nil
	}
	l := &plan.Limits{}
	if timeout != nil {
		l.Timeout = timeout.D.Seconds()
	}
	if retries != nil {
		l.Retries = &plan.Retries{Attempts: retries.Attempts, Backoff: retries.Backoff.Seconds(),
			ExitCodes: retries.When.ExitCodes, Patterns: retries.When.Patterns}
	}
	return l
}
