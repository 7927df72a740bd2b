// Package landscape runs sow landscapes (seed 002, DESIGN 2.6): a folder with
// an acre.yaml and a crop/ of components and nested greenhouses is a stack.
// It finds the components, evaluates their spiff++ control files
// (component.yaml, deployment.yaml, export.yaml) with mandelsoft/spiff as a
// library, and turns the landscape into the elaborated stack the rest of
// gantry plans and executes. Each component's plan runs three built-in
// plugin-list entries registered here: sow.deployment (the deployment
// manifest and its &state), sow.plugins (the manifest's plugin list, by
// sow's plugin contract) and sow.export (the contract for importing
// components); its component.yaml's own plugins run as sow.setup.
//
// spiff is only ever imported here: the core packages stay free of it.
// Every evaluation runs in a child process (this program, re-executed),
// bounded in time and memory, because spiff templates can loop or recurse
// without end and a Go stack overflow cannot be recovered in process.
package landscape
