// Command gantry deploys and tears down stacks of interdependent components.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"syscall"

	"github.com/gantry-dev/gantry/internal/cli"
)

func main() { os.Exit(run()) }

// run is the whole command; its deferred profile writers run before main
// exits with its code.
func run() int {
	// A run's heap is small and short-lived; collecting it at the default
	// pace cost more CPU than the rest of the executor. A soft limit keeps
	// the stacks of thousands of components from growing to five times
	// their live heap — a quarter of the machine's memory, not less than
	// 256 MiB: a limit below the live heap of a large input (a params file
	// of 700,000 parameters holds a gigabyte) makes the collector run
	// without pause, and loading it took 37 s instead of 13. GOGC and
	// GOMEMLIMIT still rule when set.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(softMemoryLimit())
	}
	// GANTRY_CPUPROFILE=file profiles a whole command's CPU and
	// GANTRY_ALLOCPROFILE=file its allocations (bench/README.md).
	if path := os.Getenv("GANTRY_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil || pprof.StartCPUProfile(f) != nil {
			fmt.Fprintf(os.Stderr, "gantry: cannot profile to %s\n", path)
			return 2
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	code := cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	// GANTRY_RUSAGE=file writes the command's own CPU time and peak
	// memory, without its children's (which the shell's time adds in):
	// bench/runner reports what gantry itself spent.
	if path := os.Getenv("GANTRY_RUSAGE"); path != "" {
		writeRusage(path)
	}
	if path := os.Getenv("GANTRY_ALLOCPROFILE"); path != "" {
		if f, err := os.Create(path); err == nil {
			runtime.GC() // the profile counts allocations up to the last collection
			pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
	}
	return code
}

// writeRusage writes "user_us sys_us maxrss_kb" of this process alone.
func writeRusage(path string) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return
	}
	line := fmt.Sprintf("%d %d %d\n", ru.Utime.Nano()/1000, ru.Stime.Nano()/1000, ru.Maxrss)
	_ = os.WriteFile(path, []byte(line), 0o600)
}

// softMemoryLimit is a quarter of the machine's memory, at least 256 MiB.
func softMemoryLimit() int64 {
	const floor = 256 << 20
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return floor
	}
	return max(floor, int64(si.Totalram)*int64(si.Unit)/4)
}
