package manifest

import "sort"

// ConfigSpec is the config interface of a stack used as a component of
// another (DESIGN 2.7, seed 003): the four sections a referencing component
// or a params file gives values for.
type ConfigSpec struct {
	Pos       Pos                     `yaml:"-"`
	Parameter map[string]*ConfigField `yaml:"parameter,omitempty"`
	// Resource fields reference resources registered for the target
	// environment; a default there is an error (found by elaborate, which
	// names the full path).
	Resource   map[string]*ConfigField `yaml:"resource,omitempty"`
	Scale      map[string]*RoleScale   `yaml:"scale,omitempty"`
	Resilience *Resilience             `yaml:"resilience,omitempty"`
}

// ConfigField is one typed field of a config section. A field without a
// default is required unless optional.
type ConfigField struct {
	Pos Pos `yaml:"-"`
	// Type is string, number, bool, list or map under parameter, and the
	// resource type (secret, volume, certificate, domain, …) under resource.
	Type     string `yaml:"type,required"`
	Default  *Node  `yaml:"default,omitempty"`
	Optional bool   `yaml:"optional,omitempty"`
	Brief    string `yaml:"brief,omitempty"`
}

// RoleScale is the scale of one role (component) of a stack: its instances
// and, for a nested stack, the scale of its own roles.
type RoleScale struct {
	Pos Pos `yaml:"-"`
	// By says who gave the hsize, for gantry params: "given at the top",
	// "given by NAME"; empty for a stack's own default.
	By     string                `yaml:"-"`
	HSize  *int                  `yaml:"hsize,omitempty"`
	Detail map[string]*RoleScale `yaml:"detail,omitempty"`
}

// Resilience is the stack's resilience default, a number passed down.
type Resilience struct {
	Pos     Pos  `yaml:"-"`
	Default *int `yaml:"default,omitempty"`
}

// ParameterTypes are the types a config parameter field may have.
var ParameterTypes = []string{"string", "number", "bool", "list", "map"}

// SortedKeys returns the keys of a config section in order, so that
// messages and the solution do not depend on map order.
func SortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Resource is a resource registered for the environment in a params file's
// resources: section.
type Resource struct {
	Pos   Pos    `yaml:"-"`
	Name  string `yaml:"name,required"`
	Type  string `yaml:"type,required"`
	Value string `yaml:"value,omitempty"`
	// Secret declares the value secret (true) or not (false) whatever the
	// type says; nil leaves it to the type (IsSecret).
	Secret *bool `yaml:"secret,omitempty"`
}

// secretResourceTypes are the resource types whose values are secret unless
// a registration says secret: false. A certificate is registered with its
// private key (as Kumori's are), so it is one of them.
var secretResourceTypes = map[string]bool{"secret": true, "certificate": true}

// IsSecret reports whether the resource's value must be masked wherever it
// could show: its secret: flag, else its type.
func (r *Resource) IsSecret() bool {
	if r.Secret != nil {
		return *r.Secret
	}
	return secretResourceTypes[r.Type]
}

// ParamsConfig is what a params file gives a stack besides parameters: the
// top stack's config values (as written, for positions) and the registered
// resources.
type ParamsConfig struct {
	Config    []*Node
	Resources []Resource
}

// DecodeParamsConfig reads the config: and resources: sections of a params
// file's documents.
func DecodeParamsConfig(docs []*Node, diags *Diagnostics) ParamsConfig {
	var out ParamsConfig
	d := decoder{diags: diags}
	for _, doc := range docs {
		if doc.Kind != MapNode {
			continue
		}
		if c := doc.Get("config"); c != nil && c.Kind != NullNode {
			if c.Kind != MapNode {
				d.expect(c, "config", "a mapping of parameter, resource, scale, resilience")
			} else {
				out.Config = append(out.Config, c)
			}
		}
		if r := doc.Get("resources"); r != nil {
			var rs []Resource
			d.decode(r, reflectOf(&rs), "resources")
			out.Resources = append(out.Resources, rs...)
		}
	}
	return out
}

// LoadParamsConfig reads the config: and resources: sections of a params
// file.
func LoadParamsConfig(path string) (ParamsConfig, Diagnostics) {
	docs, diags := ParseFile(path)
	if diags.HasErrors() {
		return ParamsConfig{}, diags
	}
	pc := DecodeParamsConfig(docs, &diags)
	return pc, diags
}

// DecodeInto decodes n into the value v points to with the strict rules of
// manifests (unknown fields, wrong types), reporting at path.
func DecodeInto(n *Node, v any, path string, diags *Diagnostics) {
	d := decoder{diags: diags}
	d.decode(n, reflectOf(v), path)
}
