package manifest

import (
	"fmt"
	"path/filepath"
)

// validateTemplateTarget checks a set of templates (templates:, or one of
// its extra targets, at field): its kind, and its files patterns and
// directories, which must name something inside the component: not an
// absolute path nor one that climbs out with "..". Templates are confined to
// their component; links that lead out are caught when the files are listed.
func validateTemplateTarget(pos Pos, kind string, files, dirs []string, field string, diags *Diagnostics) {
	switch kind {
	case "", "curly", "mustache", "go":
	default:
		diags.Errorf(pos, field+".kind", "expected \"curly\", \"mustache\" or \"go\", got %q", kind)
	}
	check := func(f string, list []string) {
		for i, p := range list {
			if !filepath.IsLocal(filepath.FromSlash(p)) {
				diags.Errorf(pos, fmt.Sprintf("%s[%d]", f, i), "expected a path inside the component folder (relative, not climbing out with ..), got %q", p)
			}
		}
	}
	check(field+".files", files)
	for i, p := range files {
		if _, err := filepath.Match(p, ""); err != nil {
			diags.Errorf(pos, fmt.Sprintf("%s.files[%d]", field, i), "malformed pattern %q: %v", p, err)
		}
	}
	check(field+".directories", dirs)
}
