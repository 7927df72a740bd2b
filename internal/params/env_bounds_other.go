//go:build !linux

package params

import "math"

// maxEnvEntry and maxEnvTotal are unbounded where gantry does not know the
// system's bounds.
func maxEnvEntry() int { return math.MaxInt }
func maxEnvTotal() int { return math.MaxInt }
