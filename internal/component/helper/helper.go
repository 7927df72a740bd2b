// Package helper makes this process one of gantry's own helper processes
// (the output keeper, a Temporal worker's reaper) when gantry started it as
// one (component.HelperCommand). It imports only fmt and os: a helper
// starts from an initialiser, and Go initialises a package only once every
// package it imports was, the first by import path among those ready
// first; an import such as os/exec or crypto/rand (which sort, or wait for
// packages that sort, after most of gantry's dependencies) would have the
// heavy ones (Kubernetes' schemes, Helm's JSON schemas, Temporal's
// protocol buffers) initialised first, which a helper needs none of.
package helper

import (
	"fmt"
	"os"
)

// RunAs makes this process the helper name when component.HelperCommand started it as
// that: env set, its arguments name and env's token, and ready true (what
// the helper was handed is there). It then runs run and exits with its
// status. env set otherwise is a mistake of whoever ran gantry: said, exit
// status 2, nothing run. Unset, it returns.
func RunAs(name, env string, ready func() bool, run func() int) {
	token := os.Getenv(env)
	if token == "" {
		return
	}
	if len(os.Args) == 3 && os.Args[1] == name && os.Args[2] == token && ready() {
		os.Exit(run())
	}
	fmt.Fprintf(os.Stderr, "gantry: %s is set in the environment: it is internal to gantry (it marks gantry's %s, which gantry starts itself); unset it\n", env, name)
	os.Exit(2)
}
