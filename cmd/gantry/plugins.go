package main

// The plugins with heavy dependencies register themselves here, in the
// binary, not in internal/cli: the core packages and their tests then
// build without client-go or the Helm SDK.
import (
	_ "github.com/gantry-dev/gantry/internal/plugin/helm"
	_ "github.com/gantry-dev/gantry/internal/plugin/kubernetes"
)
