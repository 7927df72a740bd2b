package gcpace

import (
	"os"
	"runtime/debug"
	"testing"
)

// TestPaceSetAtInit: the package's initialiser set the pace and the soft
// limit, unless GOGC and GOMEMLIMIT say otherwise.
func TestPaceSetAtInit(t *testing.T) {
	if os.Getenv("GOGC") == "" {
		if got := debug.SetGCPercent(percent); got != percent {
			t.Errorf("GC percent %d, want %d", got, percent)
		}
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		if got, want := debug.SetMemoryLimit(-1), softMemoryLimit(); got != want {
			t.Errorf("memory limit %d, want %d", got, want)
		}
	}
}
