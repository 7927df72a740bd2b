// Package gcpace sets the pace of gantry's garbage collector before the
// packages it links initialise: the Kubernetes, Helm and Temporal SDKs
// allocate about 10 MB in their package initialisers, which at Go's
// default pace cost two collections before gantry's main began. Go
// initialises, among the packages whose imports are initialised, the one
// whose import path sorts first: this one, which imports only the
// standard library, comes before every SDK but those whose paths sort
// before "github.com/gantry-dev" (the standard library's own, and
// github.com/Masterminds/semver, which allocates 0.2 MB).
package gcpace

import (
	"os"
	"runtime/debug"
	"syscall"
)

// Percent is the collector's pace (GOGC) unless GOGC is set: a run's heap
// is small and short-lived, and collecting it at the default pace cost
// more CPU than the rest of the executor.
const Percent = 400

func init() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(Percent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(SoftMemoryLimit())
	}
}

// SoftMemoryLimit is the heap size past which the collector runs more
// often (GOMEMLIMIT unless set): it keeps the stacks of thousands of
// components from growing to five times their live heap. A quarter of the
// machine's memory, not less than 256 MiB: a limit below the live heap of
// a large input (a params file of 700,000 parameters holds a gigabyte)
// makes the collector run without pause, and loading it took 37 s instead
// of 13.
func SoftMemoryLimit() int64 {
	const floor = 256 << 20
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return floor
	}
	return max(floor, int64(si.Totalram)*int64(si.Unit)/4)
}
