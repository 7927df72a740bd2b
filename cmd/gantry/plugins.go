package main

// The plugins and state backends with heavy dependencies register
// themselves here, in the binary, not in internal/cli: the core packages
// and their tests then build without client-go, the Helm SDK or pgx.
import (
	_ "github.com/gantry-dev/gantry/internal/plugin/helm"
	_ "github.com/gantry-dev/gantry/internal/plugin/kubernetes"
	_ "github.com/gantry-dev/gantry/internal/state/pgstate"
)
