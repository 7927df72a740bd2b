// Command gen writes one benchmark case (see package casegen): a gantry
// stack and a Makefile with the same DAG, to run or profile by hand.
//
//	go run ./bench/gen -shape random -n 1000 -seed 1 -work noop -out bench/.work/case
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/gantry-dev/gantry/bench/casegen"
)

func main() {
	shape := flag.String("shape", "random", "chain, fanout, lattice or random")
	n := flag.Int("n", 100, "number of nodes")
	seed := flag.Int64("seed", 1, "random seed")
	work := flag.String("work", "noop", "noop (true) or sleep (50-200 ms per node)")
	out := flag.String("out", "", "folder to write the case into")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "usage: gen -shape S -n N [-seed S] [-work noop|sleep] -out DIR")
		os.Exit(2)
	}
	if _, err := casegen.Generate(*out, *shape, *n, *seed, *work); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
