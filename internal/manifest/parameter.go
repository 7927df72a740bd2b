package manifest

import "github.com/gantry-dev/gantry/internal/secret"

// Parameter kinds.
const (
	KindUser = "user"
	KindTech = "tech"
	KindLink = "link"
)

// EmptyAllow is the only accepted value of a parameter's empty field.
const EmptyAllow = "allow"

// Parameter is a named value of a stack, params file or component. Nested
// Parameters are flattened to dotted names by Flatten.
type Parameter struct {
	Pos         Pos         `yaml:"-"`
	Name        string      `yaml:"name,required"`
	Component   string      `yaml:"component,omitempty"`
	Kind        string      `yaml:"kind,omitempty"`
	Brief       string      `yaml:"brief,omitempty"`
	Description string      `yaml:"description,omitempty"`
	Value       Scalar      `yaml:"value,omitempty"`
	Default     Scalar      `yaml:"default,omitempty"`
	Empty       string      `yaml:"empty,omitempty"`
	FromEnv     string      `yaml:"fromEnv,omitempty"`
	FromFile    string      `yaml:"fromFile,omitempty"`
	Env         string      `yaml:"env,omitempty"`
	Parameters  []Parameter `yaml:"parameters,omitempty"`
	// Type is a note some Hub components write; the Hub CLI ignores it and
	// so does gantry (values are strings).
	Type string `yaml:"-" accept:"type"`

	// Secret declares the value secret (true) or not (false) whatever its
	// name says; nil leaves it to the name (LooksSecret).
	Secret *bool `yaml:"secret,omitempty"`

	// Origin is where the winning value, default or source was defined; merging
	// moves it to the later definition that overwrote them.
	Origin Pos `yaml:"-"`
}

// QName is the qualified name: name|component, or name when unqualified.
func (p *Parameter) QName() string {
	return QualifiedName(p.Name, p.Component)
}

// QualifiedName joins a parameter name and a component qualifier.
func QualifiedName(name, component string) string {
	if component == "" {
		return name
	}
	return name + "|" + component
}

// AllowsEmpty reports whether an empty value is acceptable.
func (p *Parameter) AllowsEmpty() bool { return p.Empty == EmptyAllow }

// IsSecret reports whether the parameter is secret by its declaration:
// secret: true or false when given, else its name (LooksSecret). A value
// computed from a secret is secret whatever its parameter says (package
// params).
func (p *Parameter) IsSecret() bool {
	if p.Secret != nil {
		return *p.Secret
	}
	return LooksSecret(p.Name)
}

// LooksSecret reports whether a parameter or output name marks its value as
// secret, by the Hub CLI's rule (secret.Named): db.password, tls.privateKey,
// API_TOKEN, but not cloud.sshKey.
func LooksSecret(name string) bool { return secret.Named(name) }

// Scalar is a parameter value: any YAML scalar, kept as the text written (so
// 5432 and "5432" are the same value). Lists and mappings are rejected.
type Scalar string

func (s *Scalar) decodeNode(d *decoder, n *Node, path string) {
	switch n.Kind {
	case NullNode:
		*s = ""
	case ScalarNode:
		*s = Scalar(n.Value)
	default:
		d.expect(n, path, "a string, number or boolean")
	}
}
