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
	"sync"

	"github.com/gantry-dev/gantry/internal/component"
)

// runner runs plugin lists of one component by sow's plugin contract.
type runner struct {
	l      *Landscape
	c      *Component
	action string
	// docVar names the document the list comes from (DEPLOYMENTJSON, or
	// COMPONENTJSON for component.plugins); doc is that document.
	docVar string
	doc    any
	docRaw []byte
	env    []string // the process environment, before sow's variables
	vars   []string // sow's variables of the component
	stdout io.Writer
	stderr io.Writer
	// script is the component's action script (or the crop's lib/action),
	// "" without one; funcs are the shell functions it defines.
	scripts []string
	funcs   map[string]bool
	// ran are the external instances a deploy ran, for plugins.json.
	mu  sync.Mutex
	ran []ranInstance
}

type ranInstance struct {
	key  string
	spec map[string]any
}

// list runs a plugin list, backwards when reverse.
func (r *runner) list(ctx context.Context, entries []any, reverse bool) error {
	order := entries
	if reverse {
		order = make([]any, len(entries))
		for i, e := range entries {
			order[len(entries)-1-i] = e
		}
	}
	for _, e := range order {
		if err := r.one(ctx, e, r.stdout, r.stderr); err != nil {
			return err
		}
	}
	return nil
}

// one runs one entry.
func (r *runner) one(ctx context.Context, e any, stdout, stderr io.Writer) error {
	c, err := parseEntry(e)
	if err != nil {
		return err
	}
	if !c.Hidden {
		fmt.Fprintf(stdout, "Plugin: %s[%s]\n", c.Name, r.action)
	}
	if r.funcs["BUILTIN_"+c.Name] {
		spec, _ := json.Marshal(c.Spec)
		return r.shell(ctx, stdout, stderr, nil, "BUILTIN_"+c.Name, r.action, string(spec), r.docVar)
	}
	switch c.Name {
	case "echo":
		fmt.Fprintln(stdout, strings.Join(c.Args, " "))
		return nil
	case "fail":
		msg := strings.Join(c.Args, " ")
		fmt.Fprintln(stderr, msg)
		return fmt.Errorf("plugin fail: %s", msg)
	case "pinned":
		return r.sequence(ctx, c.Children, false, stdout, stderr)
	case "unpinned":
		return r.sequence(ctx, c.Children, r.action == "delete" || r.action == "cleanup", stdout, stderr)
	case "parallel":
		return r.parallel(ctx, c.Children, stdout, stderr)
	}
	c.resolveKey()
	if c.Config == nil && c.Path != "" {
		v, ok := valueAt(r.doc, c.Path)
		if !ok {
			return fmt.Errorf("configuration path '%s' not found for plugin %s{%s}", c.Path, c.Name, c.Key)
		}
		c.Config = v
	}
	if r.funcs[c.Name] {
		cfg := "{}"
		if c.Config != nil {
			b, _ := json.Marshal(c.Config)
			cfg = string(b)
		}
		extra := append(r.instanceVars(c), "PLUGINCONFIGJSON="+cfg)
		return r.shell(ctx, stdout, stderr, extra, c.Name, append([]string{r.action}, c.Args...)...)
	}
	exe := r.lookupPlugin(c.Name)
	if exe == "" {
		return fmt.Errorf("no action function or plugin with name '%s' found (looked for plugins/%s/plugin in the component, its greenhouses, the landscape and gantry's sow library)", c.Name, c.Name)
	}
	if err := os.MkdirAll(filepath.Join(r.l.GenDir(r.c.Name), c.Key), 0o755); err != nil {
		return fmt.Errorf("create the instance's folder: %w", err)
	}
	env := component.Environ(r.env, true, r.vars, r.instanceVars(c))
	err = component.Run(ctx, component.Process{Args: append([]string{exe, r.action}, c.Args...), Dir: r.c.Dir, Env: env, Stdout: stdout, Stderr: stderr})
	if err != nil {
		return fmt.Errorf("plugin %s{%s} %s: %w", c.Name, c.Key, r.action, err)
	}
	if r.action == "deploy" || r.action == "delete" {
		r.mu.Lock()
		r.ran = append(r.ran, ranInstance{key: c.Key, spec: map[string]any{"name": c.Name, "path": c.Path, "config": c.Config, "args": c.Args}})
		r.mu.Unlock()
	}
	return nil
}

// instanceVars are the variables of one instance: its key and config. The
// config file is always there, empty when the instance has none, so that
// a plugin never reads a file named by an empty variable.
func (r *runner) instanceVars(c *call) []string {
	gen := r.l.GenDir(r.c.Name)
	cfgFile := filepath.Join(gen, "pluginconfig-"+c.Key+".json")
	var data []byte
	if c.Config != nil {
		data, _ = json.Marshal(c.Config)
	}
	_ = os.MkdirAll(gen, 0o755)
	_ = os.WriteFile(cfgFile, data, 0o600)
	dep := filepath.Join(gen, "deployment.json")
	_ = os.WriteFile(dep, r.docRaw, 0o600)
	return []string{"PLUGININSTANCE=" + c.Key, "PLUGINCONFIG=" + cfgFile, "DEPLOYMEMT=" + dep, "DEPLOYMENT=" + dep}
}

func (r *runner) sequence(ctx context.Context, entries []any, reverse bool, stdout, stderr io.Writer) error {
	order := entries
	if reverse {
		order = make([]any, len(entries))
		for i, e := range entries {
			order[len(entries)-1-i] = e
		}
	}
	for _, e := range order {
		if err := r.one(ctx, e, stdout, stderr); err != nil {
			return err
		}
	}
	return nil
}

// parallel runs the entries at once; each one's output is shown when it
// ends, whole, as sow shows it.
func (r *runner) parallel(ctx context.Context, entries []any, stdout, stderr io.Writer) error {
	type done struct {
		out, errb bytes.Buffer
		err       error
	}
	res := make([]*done, len(entries))
	var wg sync.WaitGroup
	for i, e := range entries {
		res[i] = &done{}
		wg.Add(1)
		go func(d *done, e any) {
			defer wg.Done()
			d.err = r.one(ctx, e, &d.out, &d.errb)
		}(res[i], e)
	}
	wg.Wait()
	var errs []error
	for _, d := range res {
		stdout.Write(d.out.Bytes())
		stderr.Write(d.errb.Bytes())
		if d.err != nil {
			errs = append(errs, d.err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d parallel task(s) failed: %w", len(errs), errors.Join(errs...))
	}
	return nil
}

// lookupPlugin finds plugins/<name>/plugin: in the component, its
// greenhouse and those around it (nearest first), the landscape, and
// gantry's sow tool root.
func (r *runner) lookupPlugin(name string) string {
	if strings.ContainsAny(name, "/\\") || name == "." || name == ".." {
		return ""
	}
	for _, d := range append(append([]string{r.c.Dir}, productDirs(r.c)...), r.l.Root, sowRoot()) {
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

// loadScripts finds the action scripts (the crop's lib/action, then the
// component's action) and the shell functions they define.
func (r *runner) loadScripts(ctx context.Context) error {
	r.funcs = map[string]bool{}
	for _, p := range []string{filepath.Join(r.l.RootProductDir(), "lib", "action"), filepath.Join(r.c.Dir, "action")} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			r.scripts = append(r.scripts, p)
		}
	}
	if len(r.scripts) == 0 {
		return nil
	}
	var out bytes.Buffer
	if err := r.runBash(ctx, &out, r.stderr, nil, "declare -F"); err != nil {
		return fmt.Errorf("read the action script: %w", err)
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if f := strings.Fields(line); len(f) == 3 {
			r.funcs[f[2]] = true
		}
	}
	return nil
}

// hasFunc reports whether the action script defines a function.
func (r *runner) hasFunc(name string) bool { return r.funcs[name] }

// shell calls a function of the action script.
func (r *runner) shell(ctx context.Context, stdout, stderr io.Writer, extra []string, fn string, args ...string) error {
	script := `"$@"`
	if err := r.runBash(ctx, stdout, stderr, extra, script, append([]string{fn}, args...)...); err != nil {
		return fmt.Errorf("%s %s: %w", fn, r.action, err)
	}
	return nil
}

// runBash runs bash with sow's library and the action scripts sourced,
// the document in its variable, then the command.
func (r *runner) runBash(ctx context.Context, stdout, stderr io.Writer, extra []string, command string, args ...string) error {
	var b strings.Builder
	b.WriteString("set -e\nsource \"$SOWLIB/utils\"\n")
	for _, s := range r.scripts {
		fmt.Fprintf(&b, "source %q\n", s)
	}
	b.WriteString(command + "\n")
	bash, err := exec.LookPath("bash")
	if err != nil {
		return errors.New("action scripts need bash, which is not on PATH")
	}
	env := component.Environ(r.env, true, r.vars, []string{r.docVar + "=" + string(r.docRaw)}, extra)
	return component.Run(ctx, component.Process{Args: append([]string{bash, "-c", b.String(), "sow-action"}, args...), Dir: r.c.Dir, Env: env, Stdout: stdout, Stderr: stderr})
}
