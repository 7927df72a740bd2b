package steps

import "github.com/gantry-dev/gantry/internal/params"

// ExpandedParameters are the parameters a component's begin step handed
// to its other steps (its Result.Data): expanded, with where each value
// came from. Nil when the step expanded none (it failed or was skipped
// first).
func ExpandedParameters(data any) []*params.Value {
	if b, ok := data.(*begun); ok && b.exp != nil {
		return b.exp.Values
	}
	return nil
}
