package steps

import "testing"

// TestComputesWithValues: a label computes with the values it names when
// an expression or a template function gets them; plain substitutions
// and encodings, and templates of the special variables alone, do not.
func TestComputesWithValues(t *testing.T) {
	for label, want := range map[string]bool{
		"exec echo ${db.password}":                  false,
		"check ${api.token/base64}":                 false,
		"deploy {{.component}} with ${db.password}": false,
		"{{.component}}":                            false,
		"cut #{api.token.substring(0, 6)}":          true,
		`prefix {{ printf "%.6s" "${api.token}" }}`: true,
		`{{ printf "%x" "${a}" }} and {{.id}}`:      true,
		`{{.id}} then {{ upper "${a}" }}`:           true,
		"{{ unclosed ${a}":                          true,
		"":                                          false,
	} {
		if got := computesWithValues(label); got != want {
			t.Errorf("computesWithValues(%q) = %v, want %v", label, got, want)
		}
	}
}
