// Command gantry deploys and tears down stacks of interdependent components.
package main

import (
	"context"
	"os"

	"github.com/gantry-dev/gantry/internal/cli"
)

func main() {
	os.Exit(cli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
