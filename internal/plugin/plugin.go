// Package plugin holds gantry's plugins: the built-in ones (probes, echo,
// fail, exec, make, delay, gate, …) and the contract of executable plugins.
package plugin

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"time"
)

// Call is one call of a plugin action.
type Call struct {
	Action string
	// Args are the key-value arguments of call and probe steps.
	Args map[string]any
	// Dir is where commands run; Env their environment.
	Dir string
	Env []string
	// Output receives what the plugin prints for people.
	Output io.Writer
	// Timeout bounds actions that wait (get_wait, connect_wait).
	Timeout time.Duration
}

// Plugin carries out actions.
type Plugin interface {
	// Actions lists the actions the plugin has, the first one its default.
	Actions() []string
	// Validate checks a call's arguments before anything runs.
	Validate(action string, args map[string]any) error
	// Run carries an action out.
	Run(ctx context.Context, c Call) error
}

var builtins = map[string]Plugin{}

func register(name string, p Plugin) { builtins[name] = p }

// Lookup returns the built-in plugin called name.
func Lookup(name string) (Plugin, bool) {
	p, ok := builtins[name]
	return p, ok
}

// Names lists the built-in plugins that call steps can use.
func Names() []string {
	out := make([]string, 0, len(builtins))
	for n := range builtins {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// ValidateCall checks that the plugin has the action and accepts the arguments.
func ValidateCall(name, action string, args map[string]any) error {
	p, ok := Lookup(name)
	if !ok {
		return fmt.Errorf("unknown plugin %q (built-in: %v)", name, Names())
	}
	if action == "" {
		action = p.Actions()[0]
	}
	known := false
	for _, a := range p.Actions() {
		known = known || a == action
	}
	if !known {
		return fmt.Errorf("plugin %s has no action %q (actions: %v)", name, action, p.Actions())
	}
	return p.Validate(action, args)
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

// durationArg returns an optional number of seconds.
func durationArg(args map[string]any, key string, def time.Duration) (time.Duration, error) {
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
	if f <= 0 {
		return 0, fmt.Errorf("argument %q must be positive", key)
	}
	return time.Duration(f * float64(time.Second)), nil
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

// waitLoop retries try every interval until it succeeds, the timeout passes
// or ctx ends; it returns the last error.
func waitLoop(ctx context.Context, timeout, interval time.Duration, try func(context.Context) error) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		attemptCtx, cancel := context.WithDeadline(ctx, deadline)
		last = try(attemptCtx)
		cancel()
		if last == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().Add(interval).After(deadline) {
			return fmt.Errorf("gave up after %s: %w", timeout, last)
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}
