// Package plugin holds gantry's plugins: one registry of the built-in ones —
// those call and probe steps name (http, tcp, exec, dns) and those of
// components' plugin lists (echo, fail, exec, make, and terraform from its own
// package) — and the contract of executable plugins (sow). A plugin carries
// out one action; the order of a list's entries, and the gates, delays and
// waits in it, are steps of the plan.
package plugin

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"time"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/state"
)

// Actions of plugin list entries (sow's plugin contract).
const (
	ActionDeploy  = "deploy"
	ActionDelete  = "delete"
	ActionPrepare = "prepare"
	ActionCleanup = "cleanup"
)

// Call is one call of a plugin action: from a call or probe step (Args), or
// for an entry of a plugin list (Entry and Instance).
type Call struct {
	Action string
	// Args are the key-value arguments of call and probe steps.
	Args map[string]any
	// Entry is the plugin list entry, its arguments expanded; Instance its
	// folders and the component's. Both nil for call and probe steps.
	Entry    *Spec
	Instance *Instance
	// Dir is where commands run; Env their environment.
	Dir string
	Env []string
	// Stdout and Stderr receive what the plugin prints, each a stream of
	// its own.
	Stdout, Stderr io.Writer
	// Timeout bounds actions that wait (get_wait, connect_wait).
	Timeout time.Duration
	// Attempt is told of each failed attempt of a wait, for the display:
	// its number (the first is 1), the time since the wait began, its error.
	Attempt func(n int, elapsed time.Duration, err error)
	// Report receives outputs a plugin reports itself (terraform output).
	Report func(values map[string]string, secret []string)
	// Outside runs fn, a wait for a lock (another run's, or one of this
	// run's other steps), outside the run's --parallel slots: the slot goes
	// to the next ready step meanwhile and comes back before Outside
	// returns. Call it from Run itself, one call at a time; nil where the
	// caller has no slots to give back.
	Outside func(fn func() error) error
	// Expand expands ${...} and #{...} in what a plugin reads from its
	// inputs (the kubernetes plugin's manifests), over the component's
	// parameters and the outputs it sees; nil where there is nothing to
	// expand with.
	Expand func(s string) (string, error)
	// Recorded is what the state recorded of the instance before this run
	// (nil if it never ran); Keep records the resources the instance
	// created, durably, before the plugin goes on (staged plugins).
	Recorded *state.PluginInstance
	Keep     func(resources []state.Resource, cluster string) error
	// Others reads what the state records now of the stack's other plugin
	// instances: their resources by component (this component's other
	// instances under its own name). The kubernetes plugin leaves in place
	// an object another component still deploys. nil where there is no
	// state.
	Others func() map[string][]state.Resource
	// ForgetIfHeld asks, in one step under the state's lock, whether
	// another plugin instance of the stack records a resource match
	// selects: if so the instance forgets it (durably) and ForgetIfHeld
	// returns the components that hold it; if not, it returns none and
	// the instance, the last holder, deletes it (ForgetIfHeld in
	// records.go). Two instances that give up one object at once never
	// both leave it to the other. nil where there is no state.
	ForgetIfHeld func(match func(state.Resource) bool) ([]string, error)
	// Planned are, by component, the stages the run's plan deploys the
	// stack's other staged plugin instances with (this component's other
	// instances under its own name), their objects as the plan was built
	// (before parameters are expanded): the kubernetes plugin's prune, and
	// an orphan's teardown in a deploy (a component renamed), leave to them
	// an object they are about to apply, moved there from this instance's
	// manifests. nil where there is no plan.
	Planned map[string][]Stage
	// Staying are the components of the stack's manifest that stay after
	// the run: all of them but those the run undeploys. The helm plugin
	// takes a release over from another component of the stack only when
	// that component is not among them (renamed, or moved): two that stay
	// would take it from each other on every deploy. nil where there is
	// no plan.
	Staying func() []string
	// Stages are the ids of the stages the plan runs of the instance's
	// action, given to its first stage: prepare checks that what it read
	// fits into them (staged plugins).
	Stages []string
	// Outputs are the component outputs the StageOutputs stage reads from
	// the cluster, their references expanded.
	Outputs []ObjectOutput
}

// ObjectOutput is a component output read from an object in the cluster
// (an output's fromObject), its references expanded.
type ObjectOutput struct {
	// Name is the output's name: the plugin reports the value under it.
	Name string
	// Kind is the object's kind as kubectl takes it; Object its name;
	// Namespace its namespace, "" for the instance's.
	Kind, Object, Namespace string
	// Path is the value's path in the object (package objpath).
	Path string
}

// Plugin carries out actions.
type Plugin interface {
	// Actions lists the actions call and probe steps may name, the first
	// one the default; nil for a plugin of plugin lists only.
	Actions() []string
	// Validate checks a call's arguments before anything runs.
	Validate(action string, args map[string]any) error
	// Run carries an action out.
	Run(ctx context.Context, c *Call) error
}

// DataKeeper is a built-in plugin of lists whose instances keep data in
// their folder (Instance.StateDir: terraform's local state), as every
// executable plugin may: a run checks the component's plugin data folder
// before anything runs.
type DataKeeper interface {
	Plugin
	KeepsData()
}

// Role says where a built-in plugin can be used.
type Role uint8

// Roles of built-in plugins.
const (
	// ForSteps: call and probe steps name it.
	ForSteps Role = 1 << iota
	// ForLists: components' plugin lists name it.
	ForLists
)

type registered struct {
	p    Plugin
	role Role
}

var registry = map[string]registered{}

// Register adds a built-in plugin. Plugins with heavy dependencies register
// themselves from their own packages (terraform).
func Register(name string, p Plugin, role Role) { registry[name] = registered{p, role} }

// Lookup returns the built-in plugin called name.
func Lookup(name string) (Plugin, bool) {
	r, ok := registry[name]
	return r.p, ok
}

// stepKinds are the entries of plugin lists that run as steps of the plan's
// own kinds, not as plugins: gate, delay, and the waits http and tcp.
var stepKinds = map[string]bool{"gate": true, "delay": true, "http": true, "tcp": true}

// IsListBuiltin reports whether a plugin list can name name without an
// executable plugin: a built-in plugin for lists, a gate, delay or wait, or
// one of pinned, unpinned and parallel.
func IsListBuiltin(name string) bool {
	return registry[name].role&ForLists != 0 || stepKinds[name] || manifest.IsControlPlugin(name)
}

// Names lists the built-in plugins that call and probe steps can use.
func Names() []string {
	var out []string
	for n, r := range registry {
		if r.role&ForSteps != 0 {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// ValidateCall checks that a plugin for steps has the action and accepts the
// arguments.
func ValidateCall(name, action string, args map[string]any) error {
	r, ok := registry[name]
	if !ok || r.role&ForSteps == 0 {
		return fmt.Errorf("unknown plugin %q (built-in: %v)", name, Names())
	}
	if action == "" {
		action = r.p.Actions()[0]
	}
	known := false
	for _, a := range r.p.Actions() {
		known = known || a == action
	}
	if !known {
		return fmt.Errorf("plugin %s has no action %q (actions: %v)", name, action, r.p.Actions())
	}
	return r.p.Validate(action, args)
}

// stringArg returns a required string argument.
func stringArg(args map[string]any, key string) (string, error) {
	v, ok := args[key]
	if !ok {
		return "", fmt.Errorf("missing argument %q", key)
	}
	switch s := v.(type) {
	case string:
		if s == "" {
			return "", fmt.Errorf("argument %q is empty", key)
		}
		return s, nil
	case int64, float64, bool, int:
		return fmt.Sprint(s), nil
	}
	return "", fmt.Errorf("argument %q must be a string, got %T", key, v)
}

// minInterval is the shortest interval between a wait's attempts: a
// shorter one (1e-9 is accepted by the number's syntax) is a busy loop
// against what it probes, and fills the run's log and events.
const minInterval = 10 * time.Millisecond

// intervalArg returns an optional interval between attempts, in seconds.
func intervalArg(args map[string]any, key string, def time.Duration) (time.Duration, error) {
	v, ok := args[key]
	if !ok {
		return def, nil
	}
	var f float64
	switch x := v.(type) {
	case int64:
		f = float64(x)
	case int:
		f = float64(x)
	case float64:
		f = x
	case string:
		var err error
		if f, err = strconv.ParseFloat(x, 64); err != nil {
			return 0, fmt.Errorf("argument %q must be a number of seconds, got %q", key, x)
		}
	default:
		return 0, fmt.Errorf("argument %q must be a number of seconds, got %T", key, v)
	}
	// NaN and values past what a time.Duration holds would wrap round (a
	// negative interval is a busy loop).
	d, ok := manifest.Seconds(f)
	if !ok || d < minInterval {
		return 0, fmt.Errorf("argument %q must be a number of seconds from %v to %d, got %v", key, minInterval.Seconds(), int64(manifest.MaxSeconds), v)
	}
	return d, nil
}

// allowedArgs rejects arguments a plugin does not know.
func allowedArgs(args map[string]any, known ...string) error {
	for k := range args {
		ok := false
		for _, n := range known {
			ok = ok || k == n
		}
		if !ok {
			return fmt.Errorf("unknown argument %q (expected %v)", k, known)
		}
	}
	return nil
}
