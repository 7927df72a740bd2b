package elaborate

import (
	"github.com/gantry-dev/gantry/internal/manifest"
)

// StackChain loads the stack at path and its base stacks (meta.fromStack),
// base-most first, without their components or params files: what gantry
// pull needs before the components' folders exist.
func StackChain(path string) ([]*manifest.Stack, manifest.Diagnostics) {
	var chain []*manifest.Stack
	var diags manifest.Diagnostics
	seen := map[string]bool{}
	for path != "" && !seen[path] {
		seen[path] = true
		s, ds := manifest.LoadStack(path)
		diags = append(diags, ds...)
		if s == nil {
			break
		}
		chain = append([]*manifest.Stack{s}, chain...)
		if s.Meta.FromStack == "" {
			break
		}
		path, _ = resolveFromStack(s, &diags)
	}
	return chain, diags
}
