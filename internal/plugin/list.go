package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// Actions of a plugin list (sow's plugin contract).
const (
	ActionDeploy  = "deploy"
	ActionDelete  = "delete"
	ActionPrepare = "prepare"
	ActionCleanup = "cleanup"
)

// Spec is one entry of a component's plugin list, resolved: what to run and
// its instance key (the name of its state folder; "" for keyless built-ins).
type Spec struct {
	Name     string   `json:"name"`
	Key      string   `json:"key,omitempty"`
	Path     string   `json:"path,omitempty"`
	Args     []string `json:"args,omitempty"`
	Config   any      `json:"config,omitempty"`
	Hidden   bool     `json:"-"`
	Children []*Spec  `json:"children,omitempty"`
}

// Specs converts manifest entries.
func Specs(entries []manifest.PluginEntry) []*Spec {
	out := make([]*Spec, len(entries))
	for i := range entries {
		e := &entries[i]
		key, path := e.Instance()
		out[i] = &Spec{Name: e.Name, Key: key, Path: path, Args: append([]string(nil), e.Args...), Config: e.Config, Hidden: e.Hidden, Children: Specs(e.Children)}
	}
	return out
}

// Keyed returns every spec with an instance key, depth first in list order.
func Keyed(specs []*Spec) []*Spec {
	var out []*Spec
	for _, s := range specs {
		if manifest.IsControlPlugin(s.Name) {
			out = append(out, Keyed(s.Children)...)
		} else if s.Key != "" {
			out = append(out, s)
		}
	}
	return out
}

func (s *Spec) title() string {
	t := s.Name
	if len(s.Args) > 0 {
		t += " " + strings.Join(s.Args, " ")
	}
	if s.Key != "" && s.Key != s.Name {
		t += " (" + s.Key + ")"
	}
	return t
}

// Asker is what gates need from the run: --yes, and a terminal to ask on.
type Asker interface {
	Yes() bool
	Interactive() bool
	Pause(fn func() error) error
	Input() (string, error)
	Logf(format string, args ...any)
}

// Env is what a component's plugin list runs with.
type Env struct {
	Component string
	Dir       string // the component's folder: CURRENT and the working directory
	RootDir   string // the stack's folder (ROOTDIR)
	// SearchDirs are searched, in order, for plugins/<name>/plugin: the
	// component, the stack, nested sources; then each of PluginPath for
	// <name>/plugin.
	SearchDirs      []string
	PluginPath      []string
	GenDir          string // .gantry/gen/<component>
	StateRoot       string // .gantry/state/<component>; an instance's STATEDIR is StateRoot/<key>
	ExportDir       string
	ProductDir      string
	SpecVersion     string
	DeployedVersion string
	Templates       []string // the template chain, component first (TEMPLATES)
	// Deployment is the component's deployment file: its parameters and
	// plugin list as JSON (DEPLOYMENT, and sow's DEPLOYMEMT).
	Deployment string
	ProcessEnv []string
	// Params are the component's parameters, for config paths.
	Params map[string]string
	// Stream returns where a plugin's output goes (the display and the
	// Outputs: parser); prefix names a child of parallel, "" otherwise.
	Stream func(prefix string) io.Writer
	// Outputs receives outputs a plugin reports itself (terraform output).
	Outputs func(values map[string]string, secret []string)
	Ask     Asker
}

// Migration reports whether the product's spec version moved since the
// component was deployed.
func (e *Env) Migration() bool {
	return e.SpecVersion != "" && e.DeployedVersion != "" && e.SpecVersion != e.DeployedVersion
}

// RunList runs a plugin list for an action: deploy and prepare run it in
// order, delete and cleanup in reverse; pinned keeps its order both ways,
// unpinned follows the action (wherever it is nested), parallel runs its
// children at once.
func RunList(ctx context.Context, specs []*Spec, action string, env *Env) error {
	return runSeq(ctx, specs, action, env, reverses(action), "")
}

// reverses reports whether an action runs lists backwards.
func reverses(action string) bool { return action == ActionDelete || action == ActionCleanup }

func runSeq(ctx context.Context, specs []*Spec, action string, env *Env, reverse bool, prefix string) error {
	order := specs
	if reverse {
		order = make([]*Spec, len(specs))
		for i, s := range specs {
			order[len(specs)-1-i] = s
		}
	}
	for _, s := range order {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := runOne(ctx, s, action, env, prefix); err != nil {
			return err
		}
	}
	return nil
}

func runOne(ctx context.Context, s *Spec, action string, env *Env, prefix string) error {
	switch s.Name {
	case "pinned":
		return runSeq(ctx, s.Children, action, env, false, prefix)
	case "unpinned":
		return runSeq(ctx, s.Children, action, env, reverses(action), prefix)
	case "parallel":
		return runParallel(ctx, s.Children, action, env, prefix)
	}
	out := env.Stream(prefix)
	if !s.Hidden {
		fmt.Fprintf(out, "==> %s %s\n", action, s.title())
	}
	var err error
	if p, ok := listPlugins[s.Name]; ok && !hasExecutable(env, s.Name) {
		err = p.Run(ctx, action, s, env, out)
	} else {
		err = runExecutable(ctx, s, action, env, out)
	}
	if err != nil {
		return fmt.Errorf("plugin %s: %w", s.title(), err)
	}
	return nil
}

// runParallel runs children at once, each child's output apart under its own
// prefix; it waits for all and returns every error.
func runParallel(ctx context.Context, children []*Spec, action string, env *Env, prefix string) error {
	var wg sync.WaitGroup
	errs := make([]error, len(children))
	names := childNames(children)
	for i, c := range children {
		wg.Add(1)
		go func(i int, c *Spec) {
			defer wg.Done()
			p := names[i]
			if prefix != "" {
				p = prefix + "/" + p
			}
			errs[i] = runOne(ctx, c, action, env, p)
		}(i, c)
	}
	wg.Wait()
	return errors.Join(errs...)
}

// childNames are the output prefixes of parallel children: the instance key,
// else the plugin name; numbered (from 1) where siblings would share one.
func childNames(children []*Spec) []string {
	names := make([]string, len(children))
	count := map[string]int{}
	for i, c := range children {
		names[i] = c.Key
		if names[i] == "" || manifest.IsControlPlugin(c.Name) {
			names[i] = c.Name
		}
		count[names[i]]++
	}
	seen := map[string]int{}
	for i, n := range names {
		if count[n] > 1 {
			seen[n]++
			names[i] = fmt.Sprintf("%s-%d", n, seen[n])
		}
	}
	return names
}

// ListPlugin is a plugin built into gantry for plugin lists.
type ListPlugin interface {
	Run(ctx context.Context, action string, s *Spec, env *Env, out io.Writer) error
}

var listPlugins = map[string]ListPlugin{}

// RegisterList adds a built-in plugin for plugin lists (the terraform plugin
// registers itself from its own package).
func RegisterList(name string, p ListPlugin) { listPlugins[name] = p }

// IsBuiltin reports whether name is a built-in list plugin (or a control one).
func IsBuiltin(name string) bool {
	_, ok := listPlugins[name]
	return ok || manifest.IsControlPlugin(name)
}
