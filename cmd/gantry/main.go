// Command gantry deploys and tears down stacks of interdependent components.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"syscall"

	"github.com/gantry-dev/gantry/internal/cli"
	// The collector's pace, set before the SDKs' package initialisers run.
	_ "github.com/gantry-dev/gantry/internal/gcpace"
)

func main() { os.Exit(run()) }

// run is the whole command; its deferred profile writers run before main
// exits with its code.
func run() int {
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
	if os.Getenv("GANTRY_ALLOCPROFILE") != "" {
		// One sample per 4 KiB allocated instead of per 512 KiB: a run's
		// allocations are many and small.
		runtime.MemProfileRate = 4096
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

// writeRusage writes "user_us sys_us maxrss_kb minor_faults" of this process
// alone.
func writeRusage(path string) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return
	}
	line := fmt.Sprintf("%d %d %d %d\n", ru.Utime.Nano()/1000, ru.Stime.Nano()/1000, ru.Maxrss, ru.Minflt)
	_ = os.WriteFile(path, []byte(line), 0o600)
}
