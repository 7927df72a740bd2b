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
	"runtime"
	"runtime/debug"
	"syscall"
)

// percent is the collector's pace (GOGC) unless GOGC is set: a run's heap
// is small and short-lived, and collecting it at the default pace cost
// more CPU than the rest of the executor.
const percent = 400

// firstCollection is the memory the runtime may hold before its first
// collection, when neither GOGC nor GOMEMLIMIT is set. Go starts collecting
// at a 4 MiB heap (16 MiB at percent): a deploy of 1,000 no-op components
// allocates 64 MiB in all and collected twice; without those collections
// its own CPU fell 5–6 % and its time 2–2.5 % (10,000 components: two
// collections instead of four, and within this VM's noise; bench/README.md,
// "Runs 7 and 8").
// Below this the heap is not collected; from the first collection on, the
// pace is percent.
const firstCollection = 128 << 20

func init() {
	gogc, limit := os.Getenv("GOGC") == "", os.Getenv("GOMEMLIMIT") == ""
	if gogc && limit {
		lateFirstCollection()
		return
	}
	if gogc {
		debug.SetGCPercent(percent)
	}
	if limit {
		debug.SetMemoryLimit(softMemoryLimit())
	}
}

// lateFirstCollection turns the collector off until the runtime holds
// firstCollection (heap, garbage included, stacks and the runtime's own):
// the memory limit starts the first collection, and once that has run, a
// finalizer sets the pace and the soft limit. Go has no setting for the
// heap its collections start at; this is one. Until then Go's collection
// every two minutes does not run either: a long-lived command that
// allocates little (gantry worker) keeps up to firstCollection.
//
// Code that sets its own memory limit before the first collection must
// set a pace too, or take its limit as GOMEMLIMIT (as internal/landscape's
// spiff child does): with the collector off, its limit alone would say
// when the first collection comes.
func lateFirstCollection() {
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(firstCollection)
	// Not a tiny allocation (which may share its block and never be
	// found unreachable): a pointer and more than 16 bytes.
	sentinel := &struct {
		_ *byte
		_ [24]byte
	}{}
	runtime.SetFinalizer(sentinel, func(any) { paced() })
}

// paced sets the pace and the soft limit that hold from the first
// collection on, leaving a pace or a limit that code set meanwhile.
func paced() {
	if old := debug.SetGCPercent(percent); old != -1 {
		debug.SetGCPercent(old)
	}
	if debug.SetMemoryLimit(-1) == firstCollection {
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
