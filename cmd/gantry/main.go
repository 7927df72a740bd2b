// Command gantry deploys and tears down stacks of interdependent components.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"syscall"

	"github.com/gantry-dev/gantry/internal/cli"
)

func main() {
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
	// GANTRY_CPUPROFILE=file profiles a whole command (bench/README.md).
	if path := os.Getenv("GANTRY_CPUPROFILE"); path != "" {
		f, err := os.Create(path)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			code := cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
			pprof.StopCPUProfile()
			f.Close()
			os.Exit(code)
		}
		fmt.Fprintf(os.Stderr, "gantry: cannot profile to %s\n", path)
	}
	os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
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
