package elaborate

import (
	"os"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// HoldsSecret reports whether the elaborated manifest holds the value of a
// secret: a secret parameter (declared so, or by its name) with a value or
// a default, or a nested stack's secret resource. Its file is then kept to
// its owner (0600): a value from a params file or -e that the user keeps
// private must not become readable by all through the elaborated file.
func (r *Result) HoldsSecret() bool {
	if len(r.secretResources) > 0 {
		return true
	}
	if r.Stack != nil && holdsSecret(r.Stack.Parameters) {
		return true
	}
	for _, c := range r.Components {
		if c != nil && holdsSecret(c.Parameters) {
			return true
		}
	}
	return false
}

func holdsSecret(ps []manifest.Parameter) bool {
	for i := range ps {
		p := &ps[i]
		if (p.Value != "" || p.Default != "") && p.IsSecret() {
			return true
		}
	}
	return false
}

// FileMode is the mode of the elaborated file: 0600 when it holds a secret
// (HoldsSecret), else 0644.
func (r *Result) FileMode() os.FileMode {
	if r.HoldsSecret() {
		return 0o600
	}
	return 0o644
}
