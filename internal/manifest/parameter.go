package manifest

import (
	"strings"
	"unicode"
)

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

// IsSecret reports whether the parameter's name looks like it holds a secret.
func (p *Parameter) IsSecret() bool { return LooksSecret(p.Name) }

// secretWords are the words of a name that mark it as holding a secret.
var secretWords = map[string]bool{
	"password": true, "passwd": true, "pass": true, "pwd": true, "secret": true,
	"secrets": true, "token": true, "tokens": true, "key": true, "keys": true,
	"credential": true, "credentials": true, "private": true, "passphrase": true,
	"apikey": true, "auth": false,
}

// LooksSecret reports whether a parameter or output name looks like a secret: one
// of its words (split on . _ - / and camelCase) is password, secret, token, key,
// credential(s), private, passphrase or the like. Erring towards masking is
// intentional: a masked harmless value costs less than a leaked password.
func LooksSecret(name string) bool {
	for _, w := range splitWords(name) {
		if secretWords[w] {
			return true
		}
	}
	return false
}

func splitWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case r == '.' || r == '_' || r == '-' || r == '/' || r == '|' || r == ':' || unicode.IsSpace(r):
			flush()
		case unicode.IsDigit(r):
			// secret1, token2: digits end a word and are not one.
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1])):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return words
}

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
