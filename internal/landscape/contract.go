package landscape

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gantry-dev/gantry/internal/component"
)

// runner runs entries of one component's plugin lists by sow's plugin
// contract (sow's exec_plugin): one entry at a time, each a step of the
// plan.
type runner struct {
	l      *Landscape
	c      *Component
	action string
	// docVar names the document the entries come from (DEPLOYMENTJSON, or
	// COMPONENTJSON for component.plugins); doc is that document, docRaw
	// its JSON and docFile the file holding it (DEPLOYMEMT).
	docVar  string
	doc     any
	docRaw  []byte
	docFile string
	env     []string // the process environment, before sow's variables
	vars    []string // sow's variables of the component
	stdout  io.Writer
	stderr  io.Writer
	// scripts are the action scripts (the crop's lib/action, the
	// component's action); funcs the shell functions they define.
	scripts []string
	funcs   map[string]bool
	// record keeps an external instance a deploy ran or a delete removed
	// in sow's records (plugins.json).
	record func(action, key string, spec map[string]any) error
}

// one runs one entry that is no control plugin: a built-in of an action
// script, echo or fail, a shell function of an action script, or an
// external plugin.
func (r *runner) one(ctx context.Context, c *call) error {
	if r.funcs["BUILTIN_"+c.Name] {
		r.header(c, "builtin")
		spec, _ := json.Marshal(c.Spec)
		return r.shell(ctx, r.stdout, r.stderr, nil, "BUILTIN_"+c.Name, r.action, string(spec), r.docVar)
	}
	switch c.Name {
	case "echo":
		r.header(c, "builtin")
		fmt.Fprintln(r.stdout, strings.Join(c.Args, " "))
		return nil
	case "fail":
		r.header(c, "builtin")
		msg := strings.Join(c.Args, " ")
		fmt.Fprintln(r.stderr, "Error: "+msg)
		return fmt.Errorf("plugin fail: %s", msg)
	case "pinned", "unpinned", "parallel":
		return fmt.Errorf("%s is a step of the plan's structure, not an entry to run", c.Name)
	}
	c.resolveKey()
	if err := checkKey(c.Key); err != nil {
		return fmt.Errorf("plugin %s: %w", c.Name, err)
	}
	if c.Config == nil && c.Path != "" {
		v, ok := valueAt(r.doc, c.Path)
		if !ok {
			return fmt.Errorf("configuration path '%s' not found for plugin %s{%s}", c.Path, c.Name, c.Key)
		}
		c.Config = v
	}
	if r.funcs[c.Name] {
		r.header(c, c.Name)
		cfg := "{}"
		if c.Config != nil {
			b, _ := json.Marshal(c.Config)
			cfg = string(b)
		}
		extra, err := r.instanceVars(c)
		if err != nil {
			return err
		}
		return r.shell(ctx, r.stdout, r.stderr, append(extra, "PLUGINCONFIGJSON="+cfg), c.Name, append([]string{r.action}, c.Args...)...)
	}
	return r.external(ctx, c)
}

// external runs an executable plugin for an instance whose key and config
// are resolved, and records it in sow's records.
func (r *runner) external(ctx context.Context, c *call) error {
	// Keys of vanished instances come from plugins.json, which sow may
	// have written.
	if err := checkKey(c.Key); err != nil {
		return fmt.Errorf("plugin %s: %w", c.Name, err)
	}
	exe := r.lookupPlugin(c.Name)
	if exe == "" && r.c.Gone != "" {
		return fmt.Errorf("no action function or plugin with name '%s' found (looked for plugins/%s/plugin in the greenhouses, the landscape and gantry's sow tool root; the component's own folder %s is gone): instance %s of component %s cannot be deleted without it; restore the plugin (or the component's folder, when it was the component's own) and run the undeploy again", c.Name, c.Name, relTo(r.l.Root, r.c.Gone), c.Key, r.c.Name)
	}
	if exe == "" {
		return fmt.Errorf("no action function or plugin with name '%s' found (looked for plugins/%s/plugin in the greenhouses, the component, the landscape and gantry's sow tool root)", c.Name, c.Name)
	}
	r.header(c, exe)
	if err := makeDirs(filepath.Join(r.l.GenDir(r.c.Name), c.Key), 0o755); err != nil {
		return fmt.Errorf("create the instance's folder: %w", err)
	}
	spec := map[string]any{"name": c.Name, "key": c.Key, "path": c.Path, "config": c.Config, "args": c.Args}
	// sow records an instance before it deploys it and forgets it after
	// it deleted it: a failed deploy is deleted later like a vanished one.
	if r.action == "deploy" {
		if err := r.record(r.action, c.Key, spec); err != nil {
			return fmt.Errorf("record instance %s: %w", c.Key, err)
		}
	}
	inst, err := r.instanceVars(c)
	if err != nil {
		return err
	}
	env := component.Environ(r.env, true, r.vars, inst)
	err = component.Run(ctx, component.Process{Args: append([]string{exe, r.action}, c.Args...), Dir: r.c.Dir, Env: env, Stdout: r.stdout, Stderr: r.stderr})
	if err != nil {
		return fmt.Errorf("plugin %s{%s} %s: %w", c.Name, c.Key, r.action, err)
	}
	if r.action == "delete" {
		if err := r.record(r.action, c.Key, spec); err != nil {
			return fmt.Errorf("forget instance %s: %w", c.Key, err)
		}
	}
	return nil
}

// header is sow's line before an entry runs; a name starting with - hides
// it.
func (r *runner) header(c *call, what string) {
	if c.Hidden {
		return
	}
	if c.Key == "" || c.Key == c.Name {
		fmt.Fprintf(r.stdout, "Plugin: %s[%s] (%s)\n", c.Name, r.action, what)
	} else {
		fmt.Fprintf(r.stdout, "Plugin: %s[%s]{%s} (%s)\n", c.Name, r.action, c.Key, what)
	}
}

// instanceVars are the variables of one instance: its key, its config and
// the document it was taken from. The config file is always there, empty
// when the instance has none, so that a plugin never reads a file named
// by an empty variable.
func (r *runner) instanceVars(c *call) ([]string, error) {
	gen := r.l.GenDir(r.c.Name)
	if err := makeDirs(gen, 0o755); err != nil {
		return nil, err
	}
	cfgFile := filepath.Join(gen, "pluginconfig-"+strings.ReplaceAll(c.Key, "/", "_")+".json")
	var data []byte
	if c.Config != nil {
		data, _ = json.Marshal(c.Config)
	}
	if err := os.WriteFile(cfgFile, data, 0o600); err != nil {
		return nil, fmt.Errorf("write the instance's config: %w", err)
	}
	return []string{"PLUGININSTANCE=" + c.Key, "PLUGINCONFIG=" + cfgFile, "DEPLOYMEMT=" + r.docFile, "DEPLOYMENT=" + r.docFile}, nil
}

// lookupPlugin finds plugins/<name>/plugin: in the component (a component
// may replace a plugin, seed 002), its greenhouse and those around it
// (nearest first), the landscape, and gantry's sow tool root.
func (r *runner) lookupPlugin(name string) string { return r.l.pluginPath(r.c, name) }

// pluginPath is lookupPlugin for a component: "" when no folder has it.
func (l *Landscape) pluginPath(c *Component, name string) string {
	if strings.ContainsAny(name, "/\\") || name == "." || name == ".." {
		return ""
	}
	own := c.Dir
	if c.Gone != "" {
		own = "" // its folder is gone: Dir is its GENDIR
	}
	for _, d := range append(append([]string{own}, productDirs(c)...), l.Root, sowRoot()) {
		if d == "" {
			continue
		}
		p := filepath.Join(d, "plugins", name, "plugin")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// loadScripts finds the action scripts and the shell functions they
// define.
func (r *runner) loadScripts(ctx context.Context) error {
	r.funcs = map[string]bool{}
	r.scripts = r.l.actionScripts(r.c)
	if len(r.scripts) == 0 {
		return nil
	}
	var out bytes.Buffer
	if err := r.runBash(ctx, "bash, reading the action scripts "+strings.Join(r.scripts, " "), &out, r.stderr, nil, "declare -F"); err != nil {
		return fmt.Errorf("read the action script: %w", err)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); len(f) == 3 {
			r.funcs[f[2]] = true
		}
	}
	return nil
}

// hasFunc reports whether the action scripts define a function.
func (r *runner) hasFunc(name string) bool { return r.funcs[name] }

// shell calls a function of the action scripts.
func (r *runner) shell(ctx context.Context, stdout, stderr io.Writer, extra []string, fn string, args ...string) error {
	// Not its arguments: a built-in's carry its whole configuration.
	name := fmt.Sprintf("action function %s (%s)", fn, r.action)
	return r.runBash(ctx, name, stdout, stderr, extra, `"$@"`, append([]string{fn}, args...)...)
}

// runBash runs bash with sow's library and the action scripts sourced,
// the document in its variable, then the command; name is how errors name
// it (the script's text would).
func (r *runner) runBash(ctx context.Context, name string, stdout, stderr io.Writer, extra []string, command string, args ...string) error {
	var b strings.Builder
	// The document is read from its file, not handed in the environment:
	// a large manifest would not fit there (the reason sow moved to files).
	fmt.Fprintf(&b, "set -e\nsource \"$SOWLIB/utils\"\n%s=\"$(cat \"$DEPLOYMEMT\")\"\n", r.docVar)
	for _, s := range r.scripts {
		fmt.Fprintf(&b, "source %q\n", s)
	}
	b.WriteString(command + "\n")
	bash, err := exec.LookPath("bash")
	if err != nil {
		return errors.New("action scripts need bash, which is not on PATH")
	}
	vars := []string{"DEPLOYMEMT=" + r.docFile, "DEPLOYMENT=" + r.docFile}
	env := component.Environ(r.env, true, r.vars, vars, extra)
	return component.Run(ctx, component.Process{Args: append([]string{bash, "-c", b.String(), "sow-action"}, args...), Name: name, Dir: r.c.Dir, Env: env, Stdout: stdout, Stderr: stderr})
}
