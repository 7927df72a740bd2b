package helm

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
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

// refsIn are the paths of the values that still hold a parameter
// reference (the plan's values: set unexpanded, templates unrendered),
// which are unknown until the run; a key that holds one makes its mapping
// unknown.
func refsIn(v any) []valuePath {
	var out []valuePath
	var walk func(at valuePath, v any)
	walk = func(at valuePath, v any) {
		switch x := v.(type) {
		case string:
			if kubernetes.HasRef(x) {
				out = append(out, slices.Clone(at))
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				if kubernetes.HasRef(k) {
					out = append(out, slices.Clone(at))
					return
				}
			}
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(append(at, k), x[k])
			}
		case []any:
			for i, e := range x {
				walk(append(at, strconv.Itoa(i)), e)
			}
		}
	}
	walk(valuePath{}, v)
	return out
}
