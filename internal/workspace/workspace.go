// Package workspace names the folders gantry keeps next to a state file
// (DESIGN 2.5): run logs, generated files, plugin instances' state, exports,
// and the registry of a run's processes.
package workspace

import "path/filepath"

// Workspace is the .gantry folder next to a state file.
type Workspace struct {
	Root string
}

// For returns the workspace of a state file.
func For(statePath string) Workspace {
	return Workspace{Root: filepath.Join(filepath.Dir(statePath), ".gantry")}
}

// RunsDir holds the folders of runs.
func (w Workspace) RunsDir() string { return filepath.Join(w.Root, "runs") }

// RunDir holds a run's logs, plan and events.
func (w Workspace) RunDir(runID string) string { return filepath.Join(w.Root, "runs", runID) }

// GenDir holds a component's rendered files and plugin configs; deleting it is
// always safe.
func (w Workspace) GenDir(comp string) string { return filepath.Join(w.Root, "gen", comp) }

// StateRoot holds the persistent folders of a component's plugin instances.
func (w Workspace) StateRoot(comp string) string { return filepath.Join(w.Root, "state", comp) }

// ExportDir holds a component's exported files.
func (w Workspace) ExportDir(comp string) string { return filepath.Join(w.Root, "export", comp) }

// Registry is the file where a run notes the process groups it has running
// (component.Registry), named after a state file (the manifest's default one).
func (w Workspace) Registry(statePath string) string {
	return filepath.Join(w.Root, filepath.Base(statePath)+".running")
}

// ParseCache holds the parsed trees of the stack's large YAML files
// (manifest.SetParseCache); deleting it is always safe.
func (w Workspace) ParseCache() string { return filepath.Join(w.Root, "cache", "yaml") }
