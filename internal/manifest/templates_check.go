package manifest

import (
	"fmt"
	"path/filepath"
)

// validateTemplatePaths refuses templates.files patterns and
// templates.directories that name something outside the component: an
// absolute path or one that climbs out with "..". Templates are confined to
// their component; links that lead out are caught when the files are listed.
func validateTemplatePaths(t *Templates, diags *Diagnostics) {
	check := func(field string, list []string) {
		for i, p := range list {
			if !filepath.IsLocal(filepath.FromSlash(p)) {
				diags.Errorf(t.Pos, fmt.Sprintf("%s[%d]", field, i), "expected a path inside the component folder (relative, not climbing out with ..), got %q", p)
			}
		}
	}
	check("templates.files", t.Files)
	for i, p := range t.Files {
		if _, err := filepath.Match(p, ""); err != nil {
			diags.Errorf(t.Pos, fmt.Sprintf("templates.files[%d]", i), "malformed pattern %q: %v", p, err)
		}
	}
	check("templates.directories", t.Directories)
}
