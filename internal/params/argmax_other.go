//go:build !linux

package params

import "math"

// maxEnvTotal is unbounded where gantry does not know the system's bound.
func maxEnvTotal() int { return math.MaxInt }
