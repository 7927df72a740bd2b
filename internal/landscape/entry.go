package landscape

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// call is one entry of a sow plugin list, resolved by sow's rules (seed
// 002 "deployment.yaml", and sow's exec_plugin): the plugin, its instance
// key, the config path, the config and the arguments it is called with.
type call struct {
	Name   string
	Hidden bool
	Key    string
	Path   string
	Config any
	Args   []string
	// Children are the entries of pinned, unpinned and parallel, as
	// written (a plugin list of their own).
	Children any
	// Spec is the entry as the execution spec sow hands built-ins: its
	// name and args, or the object's fields beside the name.
	Spec map[string]any
	// KeyUnknown says the key depends on a value a plan could not
	// evaluate (Unresolved).
	KeyUnknown bool
}

// errUnresolved says a plugin list depends on values that are not known
// yet: a plan cannot tell its entries.
var errUnresolved = errors.New("depends on values not known before the run")

// control plugins take a list of plugin entries.
func isControl(name string) bool { return name == "pinned" || name == "unpinned" || name == "parallel" }

// keyless are sow's built-in plugins: they have no instance.
func keyless(name string) bool { return name == "echo" || name == "fail" || isControl(name) }

// specs normalizes a plugin list as sow reads one (getPluginList): a list,
// or a single entry; each entry a name, a list [name, args...], a mapping
// with a name field (an execution spec), or a mapping of plugin names (in
// key order) to an argument, a list of arguments or an object of key,
// path, config and args. The result are execution specs: name and fields.
func specs(list any) ([]map[string]any, error) {
	var entries []any
	switch v := list.(type) {
	case nil:
		return nil, nil
	case []any:
		entries = v
	case string:
		if v == Unresolved {
			return nil, errUnresolved
		}
		entries = []any{v}
	default:
		entries = []any{v}
	}
	var out []map[string]any
	for i, e := range entries {
		switch x := e.(type) {
		case string:
			if x == Unresolved {
				return nil, errUnresolved
			}
			out = append(out, map[string]any{"name": x, "args": []any{}})
		case []any:
			if len(x) == 0 {
				return nil, fmt.Errorf("entry %d: an empty list is no plugin", i)
			}
			out = append(out, map[string]any{"name": x[0], "args": append([]any{}, x[1:]...)})
		case map[string]any:
			if _, ok := x["name"]; ok {
				out = append(out, x)
				continue
			}
			keys := sortedKeys(x)
			if len(keys) == 0 {
				return nil, fmt.Errorf("entry %d: an empty mapping is no plugin", i)
			}
			for _, k := range keys {
				switch v := x[k].(type) {
				case []any:
					out = append(out, map[string]any{"name": k, "args": v})
				case map[string]any:
					m := map[string]any{"name": k}
					for f, fv := range v {
						if f != "name" {
							m[f] = fv
						}
					}
					out = append(out, m)
				default:
					out = append(out, map[string]any{"name": k, "args": []any{v}})
				}
			}
		default:
			return nil, fmt.Errorf("entry %d: expected a plugin name, a list or a mapping, got %s", i, describe(e))
		}
	}
	return out, nil
}

// callOf reads an execution spec. A spec with Unresolved values reads as
// far as it can: a name that is not known is errUnresolved, a key that is
// not known sets KeyUnknown.
func callOf(spec map[string]any) (*call, error) {
	name, ok := spec["name"].(string)
	switch {
	case ok && name == Unresolved:
		return nil, errUnresolved
	case !ok:
		return nil, fmt.Errorf("expected a plugin name, got %s", describe(spec["name"]))
	}
	c := &call{Spec: spec}
	c.Name, c.Hidden = plainName(name)
	if c.Name == "" {
		return nil, errors.New("a plugin entry with an empty name")
	}
	var err error
	if c.Key, err = field(spec, "key"); err == errUnresolved {
		c.KeyUnknown = true
	} else if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", c.Name, err)
	}
	if c.Path, err = field(spec, "path"); err == errUnresolved {
		c.KeyUnknown = c.KeyUnknown || c.Key == ""
	} else if err != nil {
		return nil, fmt.Errorf("plugin %s: %w", c.Name, err)
	}
	c.Config = spec["config"]
	args := spec["args"]
	if isControl(c.Name) {
		c.Children = args
		return c, nil
	}
	switch a := args.(type) {
	case nil:
	case []any:
		for _, x := range a {
			s, err := scalar(x)
			if err != nil {
				return nil, fmt.Errorf("plugin %s: argument: %w", c.Name, err)
			}
			c.Args = append(c.Args, s)
		}
	default:
		s, err := scalar(a)
		if err != nil {
			return nil, fmt.Errorf("plugin %s: args: %w", c.Name, err)
		}
		c.Args = []string{s}
	}
	if c.Key == "" && c.Path == "" && !c.KeyUnknown && len(c.Args) > 0 && (c.Args[0] == Unresolved || args == Unresolved) {
		c.KeyUnknown = true
	}
	return c, nil
}

// plainName is the plugin a name in a list (or sow's records of an
// instance) stands for, and whether the instance is hidden: a leading -
// hides it.
func plainName(name string) (string, bool) {
	return strings.CutPrefix(name, "-")
}

// field is a string field of a spec, "" when absent.
func field(spec map[string]any, name string) (string, error) {
	switch v := spec[name].(type) {
	case nil:
		return "", nil
	case string:
		if v == Unresolved {
			return "", errUnresolved
		}
		return v, nil
	default:
		s, err := scalar(v)
		if err != nil {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		return s, nil
	}
}

// resolveKey applies sow's key rules to an external plugin or shell
// function: an explicit key; else the path; else the first argument, which
// is taken off the arguments and read as key:path (an empty key means the
// plugin's name; without a colon the key is also the path); without
// arguments the plugin's name, which is then also the path. A path is only
// taken when no config is given.
func (c *call) resolveKey() {
	if c.Key == "" {
		c.Key = c.Path
	}
	if c.Key != "" {
		return
	}
	noConfig := c.Config == nil
	if len(c.Args) == 0 {
		c.Key = c.Name
		if c.Path == "" && noConfig {
			c.Path = c.Key
		}
		return
	}
	first := c.Args[0]
	c.Args = c.Args[1:]
	if first == "" {
		first = c.Name + ":"
	}
	if i := strings.Index(first, ":"); i >= 0 {
		if c.Path == "" && noConfig {
			c.Path = first[i+1:]
		}
		c.Key = first[:strings.LastIndex(first, ":")]
	} else {
		c.Key = first
		if c.Path == "" && noConfig {
			c.Path = first
		}
	}
	if c.Key == "" {
		c.Key = c.Name
	}
}

// checkKey refuses an instance key that leads out of the component's
// folders: gantry creates $GENDIR/<key>, and plugins keep their files
// below $GENDIR/$PLUGININSTANCE and $STATEDIR/$PLUGININSTANCE (sow's
// pluginutils), so a key climbing out with .. would have them written
// outside the landscape.
func checkKey(key string) error {
	if !filepath.IsLocal(key) {
		return fmt.Errorf("instance key %q: expected a relative path that stays inside the component's folders (no .., not absolute)", key)
	}
	return nil
}

// shape is an entry of a plugin list as a plan knows it: the plugin, its
// instance key (where it has one and it is known), and for pinned,
// unpinned and parallel the entries they hold.
type shape struct {
	Name       string   `json:"name"`
	Hidden     bool     `json:"hidden,omitempty"`
	Key        string   `json:"key,omitempty"`
	KeyUnknown bool     `json:"keyUnknown,omitempty"`
	Children   []*shape `json:"children,omitempty"`
}

// shapeOf is the shape of a plugin list. It is errUnresolved (wrapped
// with where) when the entries themselves are not known.
func shapeOf(list any) ([]*shape, error) {
	ss, err := specs(list)
	if err != nil {
		return nil, err
	}
	out := make([]*shape, 0, len(ss))
	for i, s := range ss {
		c, err := callOf(s)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		sh := &shape{Name: c.Name, Hidden: c.Hidden}
		switch {
		case isControl(c.Name):
			if sh.Children, err = shapeOf(c.Children); err != nil {
				return nil, fmt.Errorf("entry %d (%s): %w", i, c.Name, err)
			}
		case keyless(c.Name):
		case c.KeyUnknown:
			sh.KeyUnknown = true
		default:
			c.resolveKey()
			if err := checkKey(c.Key); err != nil {
				return nil, fmt.Errorf("entry %d: plugin %s: %w", i, c.Name, err)
			}
			sh.Key = c.Key
		}
		out = append(out, sh)
	}
	return out, nil
}

// fits checks that a list evaluated now has the shape a plan was built
// from: the same plugins in the same places, with the keys the plan knew.
func fits(planned, now []*shape, where string) error {
	if len(planned) != len(now) {
		return fmt.Errorf("%s: the plan has %d entries, the manifest now %d", orTop(where), len(planned), len(now))
	}
	for i, p := range planned {
		n := now[i]
		at := where + "[" + strconv.Itoa(i) + "]"
		switch {
		case p.Name != n.Name:
			return fmt.Errorf("%s: the plan runs %s there, the manifest now %s", at, p.title(), n.title())
		case !p.KeyUnknown && p.Key != n.Key:
			return fmt.Errorf("%s: the plan runs instance %s, the manifest now %s", at, p.title(), n.title())
		}
		if err := fits(p.Children, n.Children, at+"."+p.Name); err != nil {
			return err
		}
	}
	return nil
}

func orTop(where string) string {
	if where == "" {
		return "plugins"
	}
	return where
}

// title is the entry as plans name it: the plugin, and its instance key
// when that says more.
func (s *shape) title() string {
	if s.Key != "" && s.Key != s.Name {
		return s.Name + "{" + s.Key + "}"
	}
	return s.Name
}

// keys are the instance keys a list's shape names.
func keysOf(list []*shape, into map[string]bool) (unknown bool) {
	for _, s := range list {
		if s.KeyUnknown {
			unknown = true
		}
		if s.Key != "" {
			into[s.Key] = true
		}
		if keysOf(s.Children, into) {
			unknown = true
		}
	}
	return unknown
}

// callAt is the entry at a position of a plugin list: each index descends
// into the entries of a control plugin.
func callAt(list any, at []int) (*call, error) {
	var c *call
	for depth, i := range at {
		ss, err := specs(list)
		if err != nil {
			return nil, err
		}
		if i < 0 || i >= len(ss) {
			return nil, fmt.Errorf("the list has no entry %v", at[:depth+1])
		}
		if c, err = callOf(ss[i]); err != nil {
			return nil, err
		}
		list = c.Children
	}
	if c == nil {
		return nil, errors.New("no position given")
	}
	return c, nil
}

// scalar is an argument as the plugin gets it: text.
func scalar(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case int:
		return strconv.Itoa(x), nil
	case nil:
		return "", nil
	}
	return "", fmt.Errorf("expected a string, got %s", describe(v))
}

func describe(v any) string {
	switch v.(type) {
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int64, int:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// valueAt returns the node at a dotted path ("a.b", "list.[0]") of doc.
func valueAt(doc any, path string) (any, bool) {
	cur := doc
	for _, step := range strings.Split(path, ".") {
		if step == "" {
			continue
		}
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[step]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(strings.Trim(step, "[]"))
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}
