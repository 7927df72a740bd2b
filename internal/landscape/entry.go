package landscape

import (
	"fmt"
	"sort"
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
	// Children are the entries of pinned, unpinned and parallel.
	Children []any
	// Spec is the entry as the execution spec sow hands built-ins: name
	// and args, or the object's fields beside the name.
	Spec map[string]any
}

// control plugins take a list of plugin entries.
func isControl(name string) bool { return name == "pinned" || name == "unpinned" || name == "parallel" }

// parseEntry reads one entry of a plugin list: "name", "name: arg",
// "name: [args]" or "name: {key, path, config, args}".
func parseEntry(e any) (*call, error) {
	var name string
	var val any
	switch x := e.(type) {
	case string:
		name = x
	case map[string]any:
		if len(x) != 1 {
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			return nil, fmt.Errorf("a plugin entry names exactly one plugin, got %s", strings.Join(keys, ", "))
		}
		for k, v := range x {
			name, val = k, v
		}
	default:
		return nil, fmt.Errorf("expected a plugin name or a mapping of one plugin name to its arguments, got %s", describe(e))
	}
	c := &call{Name: name, Spec: map[string]any{"name": name}}
	if strings.HasPrefix(name, "-") {
		c.Hidden, c.Name = true, name[1:]
	}
	if c.Name == "" {
		return nil, fmt.Errorf("a plugin entry with an empty name")
	}
	switch v := val.(type) {
	case nil:
	case []any:
		if isControl(c.Name) {
			c.Children = v
		} else {
			for _, a := range v {
				s, err := scalar(a)
				if err != nil {
					return nil, fmt.Errorf("plugin %s: argument: %w", c.Name, err)
				}
				c.Args = append(c.Args, s)
			}
		}
		c.Spec["args"] = v
	case map[string]any:
		for k, f := range v {
			c.Spec[k] = f
		}
		c.Key, _ = v["key"].(string)
		c.Path, _ = v["path"].(string)
		c.Config = v["config"]
		switch a := v["args"].(type) {
		case nil:
		case []any:
			if isControl(c.Name) {
				c.Children = a
				break
			}
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
	default:
		s, err := scalar(v)
		if err != nil {
			return nil, fmt.Errorf("plugin %s: %w", c.Name, err)
		}
		c.Args = []string{s}
		c.Spec["args"] = []any{s}
	}
	if isControl(c.Name) && val != nil && c.Children == nil {
		return nil, fmt.Errorf("plugin %s takes a list of plugin entries", c.Name)
	}
	return c, nil
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
