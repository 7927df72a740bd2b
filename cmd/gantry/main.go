// Command gantry deploys and tears down stacks of interdependent components.
package main

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/gantry-dev/gantry/internal/cli"
)

func main() {
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
