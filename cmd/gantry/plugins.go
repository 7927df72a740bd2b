package main

// The plugins, state backends and engines with heavy dependencies register
// themselves here, in the binary, not in internal/cli: the core packages
// and their tests then build without client-go, the Helm SDK, pgx or the
// Temporal SDK.
import (
	_ "github.com/gantry-dev/gantry/internal/engine/temporal"
	_ "github.com/gantry-dev/gantry/internal/plugin/helm"
	_ "github.com/gantry-dev/gantry/internal/plugin/kubernetes"
	_ "github.com/gantry-dev/gantry/internal/state/pgstate"
)
