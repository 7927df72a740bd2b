package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/manifest"
)

// Instance is what a plugin list entry runs with: the component's folders
// and versions, and the folders of the instance (sow's plugin contract).
type Instance struct {
	Component string
	Dir       string // the component's folder: CURRENT and the working directory
	RootDir   string // the stack's folder (ROOTDIR)
	GenDir    string // .gantry/gen/<component>
	// StateRoot is the folder of the component's plugin data: an
	// instance's STATEDIR is StateRoot/<key>. Root, when set, works it
	// out instead, the first time an instance needs it (the folder
	// belongs to one deployment: workspace.PluginRoot).
	StateRoot string
	Root      func() (string, error)
	ExportDir string
	// ProductDir holds the stack's SPEC-VERSION; SpecVersion is its value,
	// DeployedVersion the one the component was deployed with.
	ProductDir      string
	SpecVersion     string
	DeployedVersion string
	Templates       []string // the template chain, component first (TEMPLATES)
	// Deployment is the component's deployment file: its parameters and
	// plugin lists as JSON (DEPLOYMENT, and sow's DEPLOYMEMT).
	Deployment string
	// Params are the component's parameters, for config paths.
	Params map[string]string
}

// Migration reports whether the product's spec version moved since the
// component was deployed.
func (in *Instance) Migration() bool {
	return in.SpecVersion != "" && in.DeployedVersion != "" && in.SpecVersion != in.DeployedVersion
}

// StateDir is an instance's state folder (STATEDIR) under the component's.
// The name is checked again here, not only in the manifest: a recorded spec
// comes from a state file that may have been edited by hand, and removing
// the folder must never reach outside the component's.
func (in *Instance) StateDir(s *Spec) (string, error) {
	name := s.InstanceName()
	if err := manifest.CheckInstanceKey(name); err != nil {
		return "", err
	}
	root := in.StateRoot
	if in.Root != nil {
		var err error
		if root, err = in.Root(); err != nil {
			return "", err
		}
	}
	return filepath.Join(root, name), nil
}

// Find looks for an executable plugin called name: plugins/<name>/plugin in
// each search folder (component, stack, nested sources), then <name>/plugin
// in each folder of the plugin path. An executable replaces a built-in plugin
// of the same name (sow: sources may bring their own plugins). It returns the
// path, or "" and the places it looked.
func Find(searchDirs, pluginPath []string, name string) (string, []string) {
	var tried []string
	try := func(p string) string {
		tried = append(tried, p)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p
		}
		return ""
	}
	for _, d := range searchDirs {
		if p := try(filepath.Join(d, "plugins", name, "plugin")); p != "" {
			return p, tried
		}
	}
	for _, d := range pluginPath {
		if p := try(filepath.Join(d, name, "plugin")); p != "" {
			return p, tried
		}
	}
	return "", tried
}

// InstanceConfig is the config of an instance: its own config, else the value
// of the parameter its path names (read as YAML when it parses).
func InstanceConfig(s *Spec, params map[string]string) (any, error) {
	if s.Config != nil || s.Path == "" {
		return s.Config, nil
	}
	v, ok := params[s.Path]
	if !ok {
		return nil, fmt.Errorf("config path %q: the component has no parameter of that name", s.Path)
	}
	if parsed := parseYAML(v); parsed != nil {
		return parsed, nil
	}
	return v, nil
}

// parseYAML reads a value as YAML, or gives nil when it is not: the YAML
// decoder fails on some input with a panic of its own, and a parameter's
// value is whatever the stack or an earlier component made it.
func parseYAML(v string) (parsed any) {
	defer func() {
		if recover() != nil {
			parsed = nil
		}
	}()
	if err := yaml.Unmarshal([]byte(v), &parsed); err != nil {
		return nil
	}
	return parsed
}

// Executable is a plugin that is a program of its own, run by the sow
// contract: argv "action [args...]", its configuration in the file
// PLUGINCONFIG, and the folders and versions in the environment.
type Executable struct {
	Path string
}

// Actions is nil: executables serve plugin lists only.
func (Executable) Actions() []string { return nil }

// Validate refuses call and probe steps.
func (Executable) Validate(string, map[string]any) error {
	return fmt.Errorf("executable plugins serve plugin lists only")
}

// Run runs the executable for the entry.
func (x Executable) Run(ctx context.Context, c *Call) error {
	s, in := c.Entry, c.Instance
	if s == nil || in == nil {
		return fmt.Errorf("executable plugins serve plugin lists only")
	}
	inst := s.InstanceName()
	config, err := InstanceConfig(s, in.Params)
	if err != nil {
		return err
	}
	stateDir, err := in.StateDir(s)
	if err != nil {
		return err
	}
	for _, d := range []string{in.GenDir, stateDir, in.ExportDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	configFile := filepath.Join(in.GenDir, inst+".config.json")
	data, err := json.MarshalIndent(config, "", "  ")
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := os.WriteFile(configFile, data, 0o600); err != nil {
		return err
	}
	migration := "false"
	if in.Migration() {
		migration = "true"
	}
	vars := []string{
		"CURRENT=" + in.Dir,
		"DEPLOYMENT=" + in.Deployment,
		"DEPLOYMEMT=" + in.Deployment,
		"PLUGINCONFIG=" + configFile,
		"PLUGININSTANCE=" + inst,
		"GENDIR=" + in.GenDir,
		"STATEDIR=" + stateDir,
		"EXPORTDIR=" + in.ExportDir,
		"COMPONENT=" + in.Component,
		"ROOTDIR=" + in.RootDir,
		"PRODUCTDIR=" + in.ProductDir,
		"SPECVERSION=" + in.SpecVersion,
		"DEPLOYEDVERSION=" + in.DeployedVersion,
		"MIGRATION=" + migration,
		"TEMPLATES=" + strings.Join(in.Templates, string(os.PathListSeparator)),
	}
	return component.Run(ctx, component.Process{
		Args:   append([]string{x.Path, c.Action}, s.Args...),
		Dir:    in.Dir,
		Env:    component.Environ(c.Env, true, vars),
		Stdout: c.Stdout,
		Stderr: c.Stderr,
	})
}
