package manifest

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/goccy/go-yaml"
)

// Control plugins take a list of plugin entries instead of arguments.
var controlPlugins = map[string]bool{"pinned": true, "unpinned": true, "parallel": true}

// IsControlPlugin reports whether name is pinned, unpinned or parallel.
func IsControlPlugin(name string) bool { return controlPlugins[name] }

var pluginNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]*$`)

// PluginEntry is one entry of a component's plugins list, in any of the sow
// syntaxes: "name", "name: arg", "name: [args]", "name: {key, path, config,
// args}", and for pinned/unpinned/parallel "name: [entries]". A leading "-" on
// the name hides the header line printed before the plugin runs. The object
// form also takes gantry's label and on_fail (seed 001), since every entry
// is a step of the plan.
type PluginEntry struct {
	Pos      Pos
	Name     string
	Hidden   bool
	Args     []string
	Key      string
	Path     string
	Config   any
	Label    string
	OnFail   []string
	Children []PluginEntry
	// Object is true when the entry used the {key, path, config, args} form.
	Object bool
}

func (p *PluginEntry) decodeNode(d *decoder, n *Node, path string) {
	p.Pos = n.Pos
	switch n.Kind {
	case ScalarNode:
		p.setName(d, n.Value, n.Pos, path)
		return
	case MapNode:
	default:
		d.expect(n, path, "a plugin name or a mapping of one plugin name to its arguments")
		return
	}
	if len(n.Entries) != 1 {
		keys := make([]string, len(n.Entries))
		for i, e := range n.Entries {
			keys[i] = e.Key
		}
		d.errorf(n.Pos, path, "a plugin entry names exactly one plugin, got %s", quoteAll(keys))
		return
	}
	e := n.Entries[0]
	p.setName(d, e.Key, e.KeyPos, path)
	v, vp := e.Value, childPath(path, e.Key)
	if IsControlPlugin(p.Name) {
		if v.Kind != SeqNode {
			d.expect(v, vp, "a list of plugin entries")
			return
		}
		d.decode(v, reflectOf(&p.Children), vp)
		return
	}
	switch v.Kind {
	case NullNode:
	case ScalarNode:
		p.Args = []string{v.Value}
	case SeqNode:
		d.decode(v, reflectOf(&p.Args), vp)
	case MapNode:
		var f struct {
			Key    string     `yaml:"key"`
			Path   string     `yaml:"path"`
			Config *Node      `yaml:"config"`
			Args   []string   `yaml:"args"`
			Label  string     `yaml:"label"`
			OnFail onFailList `yaml:"on_fail"`
		}
		d.decode(v, reflectOf(&f), vp)
		p.Object, p.Key, p.Path, p.Args, p.Label, p.OnFail = true, f.Key, f.Path, f.Args, f.Label, f.OnFail
		if f.Config != nil {
			p.Config = f.Config.Interface()
		}
	}
}

func (p *PluginEntry) setName(d *decoder, name string, pos Pos, path string) {
	if strings.HasPrefix(name, "-") {
		p.Hidden, name = true, name[1:]
	}
	p.Name = name
	if !pluginNameRE.MatchString(name) {
		d.errorf(pos, path, "invalid plugin name %q", name)
	}
}

// MarshalYAML writes the entry back in the syntax it was read with.
func (p PluginEntry) MarshalYAML() (any, error) {
	name := p.Name
	if p.Hidden {
		name = "-" + name
	}
	switch {
	case IsControlPlugin(p.Name):
		return yaml.MapSlice{{Key: name, Value: p.Children}}, nil
	case p.Object:
		var body yaml.MapSlice
		if p.Key != "" {
			body = append(body, yaml.MapItem{Key: "key", Value: p.Key})
		}
		if p.Path != "" {
			body = append(body, yaml.MapItem{Key: "path", Value: p.Path})
		}
		if p.Config != nil {
			body = append(body, yaml.MapItem{Key: "config", Value: p.Config})
		}
		if len(p.Args) > 0 {
			body = append(body, yaml.MapItem{Key: "args", Value: p.Args})
		}
		if p.Label != "" {
			body = append(body, yaml.MapItem{Key: "label", Value: p.Label})
		}
		if len(p.OnFail) > 0 {
			body = append(body, yaml.MapItem{Key: "on_fail", Value: p.OnFail})
		}
		if body == nil {
			body = yaml.MapSlice{}
		}
		return yaml.MapSlice{{Key: name, Value: body}}, nil
	case len(p.Args) > 0:
		return yaml.MapSlice{{Key: name, Value: p.Args}}, nil
	}
	return name, nil
}

// String is a short description for messages.
func (p PluginEntry) String() string {
	if len(p.Args) == 0 {
		return p.Name
	}
	return fmt.Sprintf("%s %s", p.Name, strings.Join(p.Args, " "))
}

// keylessPlugins are the built-in plugins without instances: they keep no
// state, so they have no key (sow: built-in plugins don't use keys). exec and
// make have an instance only when given an explicit key.
var keylessPlugins = map[string]bool{
	"echo": true, "fail": true, "pinned": true, "unpinned": true, "parallel": true,
	"delay": true, "gate": true, "http": true, "tcp": true,
}

// RegisterKeyless makes a built-in plugin keyless: its entries have no
// instance of gantry's (a sow landscape's steps, whose instances sow's own
// records keep). Called from init functions only.
func RegisterKeyless(name string) { keylessPlugins[name] = true }

// Instance returns the entry's instance key and config path. An explicit key
// wins; otherwise the first argument reads key:path, in every form, object
// form included (an empty key part means the plugin's name); without
// arguments the key is the plugin's name (seed 002). Keyless built-ins (and
// exec and make without a key) return "".
func (p *PluginEntry) Instance() (key, path string) {
	if p.Key != "" {
		return p.Key, p.Path
	}
	if keylessPlugins[p.Name] || p.Name == "exec" || p.Name == "make" {
		return "", p.Path
	}
	if len(p.Args) > 0 {
		k, path, _ := strings.Cut(p.Args[0], ":")
		if k == "" {
			k = p.Name
		}
		if p.Path != "" {
			path = p.Path
		}
		return k, path
	}
	return p.Name, p.Path
}

// checkPluginKeys reports instance keys used twice in a component's plugin
// lists (keys name the instances' state folders).
func checkPluginKeys(entries []PluginEntry, field string, seen map[string]string, diags *Diagnostics) {
	for i := range entries {
		e := &entries[i]
		p := itemPath(field, i)
		if IsControlPlugin(e.Name) {
			checkPluginKeys(e.Children, childPath(p, e.Name), seen, diags)
			continue
		}
		key, _ := e.Instance()
		if key == "" {
			continue
		}
		if err := CheckInstanceKey(key); err != nil && key != e.Name { // a bad name is reported as such
			diags.Errorf(e.Pos, p, "%v", err)
			continue
		}
		if first, dup := seen[key]; dup {
			diags.Errorf(e.Pos, p, "plugin instance key %q is used twice (first at %s); give one of them another key", key, first)
			continue
		}
		seen[key] = p
	}
}

// CheckInstanceKey rejects instance keys that cannot name a folder of their
// own under the component's state folder: the key becomes a path segment, and
// "..", "." or a slash would put an instance's state (and its removal) outside
// its folder.
func CheckInstanceKey(key string) error {
	if key == "." || key == ".." {
		return fmt.Errorf("plugin instance key %q cannot be . or .. (it names the instance's state folder)", key)
	}
	if len(key) > maxNameLen {
		return fmt.Errorf("plugin instance key of %d characters; at most %d (it names the instance's state folder)", len(key), maxNameLen)
	}
	for _, r := range key {
		ok := r == '-' || r == '_' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if !ok {
			return fmt.Errorf("plugin instance key %q has %q: keys name the instance's state folder, so use letters, digits, '.', '_' and '-'", key, r)
		}
	}
	return nil
}
