package helm

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/gantry-dev/gantry/internal/inputfile"
	"github.com/gantry-dev/gantry/internal/plugin/kubernetes"
)

// templateSuffixes are the suffixes of a values file's template, which
// gantry renders next to it before the instance runs (the Hub's
// values.yaml.template and values.yaml.gotemplate).
var templateSuffixes = []string{".template", ".gotemplate"}

// valuesFiles are the values files an instance applies, relative to the
// component folder: the config's, else the Hub helm extension's —
// values.yaml (unless it is the chart's own, in the component folder) and
// values-*.yaml, or their templates.
func valuesFiles(dir string, cfg config, chartHere bool) []string {
	if cfg.Values != nil {
		return cfg.Values
	}
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		name := e.Name()
		for _, s := range templateSuffixes {
			name = strings.TrimSuffix(name, s)
		}
		if e.IsDir() || slices.Contains(out, name) {
			continue
		}
		if name == "values.yaml" && !chartHere || valuesPattern.MatchString(name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	// values.yaml first, as the Hub passes it.
	slices.SortStableFunc(out, func(a, b string) int {
		return boolRank(a != "values.yaml") - boolRank(b != "values.yaml")
	})
	return out
}

var valuesPattern = regexp.MustCompile(`^values-[^/]+\.ya?ml$`)

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// readValues merges values files in order (later ones win, as helm -f
// does). At plan time (plan set) a file's template is read instead of the
// file, which is rendered only when the instance runs: its references are
// read as text, and a template that is not YAML before rendering adds
// nothing to the plan's values.
func readValues(dir string, files []string, plan bool) (map[string]any, error) {
	out := map[string]any{}
	var errs []string
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if plan {
			found := false
			for _, s := range templateSuffixes {
				if data, err := inputfile.Read(p+s, inputfile.MaxManifest); err == nil {
					found = true
					if m, err := loader.LoadValues(strings.NewReader(string(data))); err == nil {
						out = loader.MergeMaps(out, m)
					}
					break
				}
			}
			if found {
				continue
			}
		}
		data, err := inputfile.Read(p, inputfile.MaxManifest)
		if err != nil {
			errs = append(errs, fmt.Sprintf("values file %s: %s", f, inputfile.Problem(err)))
			continue
		}
		m, err := loader.LoadValues(strings.NewReader(string(data)))
		if err != nil {
			errs = append(errs, fmt.Sprintf("values file %s: %v", f, err))
			continue
		}
		out = loader.MergeMaps(out, m)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return out, nil
}

// holdsRef reports whether values still hold a parameter reference (the
// plan's values: templates unrendered, set unexpanded).
func holdsRef(v any) bool {
	switch x := v.(type) {
	case string:
		return kubernetes.HasRef(x)
	case map[string]any:
		for _, e := range x {
			if holdsRef(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if holdsRef(e) {
				return true
			}
		}
	}
	return false
}
