// Package gcpace sets the pace of gantry's garbage collector from its
// package initialiser, before most of the packages gantry links initialise:
// the Kubernetes, Helm and Temporal SDKs allocate ≈ 7 MB in theirs
// (GODEBUG=inittrace=1), which at Go's default pace cost two collections
// before gantry's main began.
//
// Go initialises, among the packages whose imports are initialised, the
// one whose import path sorts first. This package waits for runtime/debug,
// which waits for the packages whose paths sort before "runtime/debug" and
// are ready (golang.org/x/text, go.temporal.io/api's enums, parts of
// k8s.io/apimachinery: ≈ 1.9 MB today); that is below the 4 MB at which
// the first collection starts, and the packages that allocate the most
// (santhosh-tekuri/jsonschema, client-go's scheme) come after.
// TestCollectorPaceSetBeforeTheSDKs, in cmd/gantry, fails when a
// collection runs before this package's initialiser.
package gcpace

import (
	"os"
	"runtime/debug"
	"syscall"
)

// percent is the collector's pace (GOGC) unless GOGC is set: a run's heap
// is small and short-lived, and collecting it at the default pace cost
// more CPU than the rest of the executor.
const percent = 400

func init() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(percent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softMemoryLimit())
	}
}

// softMemoryLimit is the heap size past which the collector runs more
// often (GOMEMLIMIT unless set): it keeps the stacks of thousands of
// components from growing to five times their live heap. A quarter of the
// machine's memory, not less than 256 MiB: a limit below the live heap of
// a large input (a params file of 700,000 parameters holds a gigabyte)
// makes the collector run without pause, and loading it took 37 s instead
// of 13.
func softMemoryLimit() int64 {
	const floor = 256 << 20
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return floor
	}
	return max(floor, int64(si.Totalram)*int64(si.Unit)/4)
}
