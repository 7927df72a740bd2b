package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/manifest"
)

// findExecutable looks for an executable plugin: plugins/<name>/plugin in each
// search folder (component, stack, nested sources), then <name>/plugin in
// each folder of the plugin path.
func findExecutable(env *Env, name string) (string, []string) {
	var tried []string
	try := func(p string) string {
		tried = append(tried, p)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p
		}
		return ""
	}
	for _, d := range env.SearchDirs {
		if p := try(filepath.Join(d, "plugins", name, "plugin")); p != "" {
			return p, tried
		}
	}
	for _, d := range env.PluginPath {
		if p := try(filepath.Join(d, name, "plugin")); p != "" {
			return p, tried
		}
	}
	return "", tried
}

// hasExecutable reports whether an executable plugin of that name replaces a
// built-in one (sow: sources may provide their own plugins).
func hasExecutable(env *Env, name string) bool {
	p, _ := findExecutable(env, name)
	return p != ""
}

// Find reports where the plugin of a name comes from, "" and an error when
// nothing provides it: for checks before anything runs.
func Find(env *Env, name string) (string, error) {
	if p, _ := findExecutable(env, name); p != "" {
		return p, nil
	}
	if IsBuiltin(name) {
		return "built-in", nil
	}
	_, tried := findExecutable(env, name)
	return "", fmt.Errorf("no plugin %q: not built in, and none of %s exists", name, strings.Join(tried, ", "))
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
	var parsed any
	if err := yaml.Unmarshal([]byte(v), &parsed); err == nil && parsed != nil {
		return parsed, nil
	}
	return v, nil
}

// InstanceName is the instance's name for folders and PLUGININSTANCE.
func (s *Spec) InstanceName() string {
	if s.Key != "" {
		return s.Key
	}
	return s.Name
}

// StateDir is an instance's state folder (STATEDIR) under the component's.
// The name is checked again here, not only in the manifest: a recorded spec
// comes from a state file that may have been edited by hand, and removing
// the folder must never reach outside the component's.
func (e *Env) StateDir(s *Spec) (string, error) {
	name := s.InstanceName()
	if err := manifest.CheckInstanceKey(name); err != nil {
		return "", err
	}
	return filepath.Join(e.StateRoot, name), nil
}

// runExecutable runs an executable plugin by the sow contract: argv
// "action [args...]", its configuration in the file PLUGINCONFIG, and the
// folders and versions in the environment.
func runExecutable(ctx context.Context, s *Spec, action string, env *Env, out io.Writer) error {
	path, tried := findExecutable(env, s.Name)
	if path == "" {
		return fmt.Errorf("not found: not a built-in plugin, and none of %s exists", strings.Join(tried, ", "))
	}
	inst := s.InstanceName()
	config, err := InstanceConfig(s, env.Params)
	if err != nil {
		return err
	}
	stateDir, err := env.StateDir(s)
	if err != nil {
		return err
	}
	for _, d := range []string{env.GenDir, stateDir, env.ExportDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	configFile := filepath.Join(env.GenDir, inst+".config.json")
	data, err := json.MarshalIndent(config, "", "  ")
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if err := os.WriteFile(configFile, data, 0o600); err != nil {
		return err
	}
	migration := "false"
	if env.Migration() {
		migration = "true"
	}
	vars := []string{
		"CURRENT=" + env.Dir,
		"DEPLOYMENT=" + env.Deployment,
		"DEPLOYMEMT=" + env.Deployment,
		"PLUGINCONFIG=" + configFile,
		"PLUGININSTANCE=" + inst,
		"GENDIR=" + env.GenDir,
		"STATEDIR=" + stateDir,
		"EXPORTDIR=" + env.ExportDir,
		"COMPONENT=" + env.Component,
		"ROOTDIR=" + env.RootDir,
		"PRODUCTDIR=" + env.ProductDir,
		"SPECVERSION=" + env.SpecVersion,
		"DEPLOYEDVERSION=" + env.DeployedVersion,
		"MIGRATION=" + migration,
		"TEMPLATES=" + strings.Join(env.Templates, string(os.PathListSeparator)),
	}
	return component.Run(ctx, component.Process{
		Args:   append([]string{path, action}, s.Args...),
		Dir:    env.Dir,
		Env:    component.Environ(env.ProcessEnv, true, vars),
		Stdout: out,
		Stderr: out,
	})
}
