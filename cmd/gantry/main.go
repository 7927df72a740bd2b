// Command gantry deploys and tears down stacks of interdependent components.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"runtime/pprof"

	"github.com/gantry-dev/gantry/internal/cli"
)

func main() {
	// A run's heap is small and short-lived; collecting it at the default
	// pace cost more CPU than the rest of the executor. A soft limit keeps
	// the stacks of thousands of components from growing to five times
	// their live heap. GOGC and GOMEMLIMIT still rule when set.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(256 << 20)
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
