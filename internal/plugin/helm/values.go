package helm

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/gantry-dev/gantry/internal/inputfile"
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

// setValues expands the config's set values over the component's
// parameters (expand nil: at plan time, left as written). A value that is
// exactly one reference takes the type of what it expands to, as YAML
// reads it: replicaCount: ${replicas} is a number.
func setValues(v any, expand func(string) (string, error)) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			ev, err := setValues(e, expand)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			out[k] = ev
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			ev, err := setValues(e, expand)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			out[i] = ev
		}
		return out, nil
	case string:
		if expand == nil {
			return x, nil
		}
		s, err := expand(x)
		if err != nil {
			return nil, err
		}
		if singleRef(x) {
			if typed, ok := scalarOf(s); ok {
				return typed, nil
			}
		}
		return s, nil
	}
	return v, nil
}

// scalarOf types an expanded reference as YAML 1.2 reads a plain scalar:
// integers as int64 (not float64, which Helm prints as 1e+06), no octal,
// hex or yes/no booleans (010 and no stay text), and empty text stays text
// (null would remove the chart's default).
func scalarOf(s string) (any, bool) {
	t := strings.TrimSpace(s)
	switch t {
	case "true", "True", "TRUE":
		return true, true
	case "false", "False", "FALSE":
		return false, true
	case "null", "Null", "NULL", "~":
		return nil, true
	}
	if intText.MatchString(t) {
		if i, err := strconv.ParseInt(t, 10, 64); err == nil {
			return i, true
		}
	}
	if floatText.MatchString(t) {
		if f, err := strconv.ParseFloat(t, 64); err == nil {
			return f, true
		}
	}
	return nil, false
}

var (
	intText   = regexp.MustCompile(`^[-+]?(0|[1-9][0-9]*)$`)
	floatText = regexp.MustCompile(`^[-+]?([0-9]+\.[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$|^[-+]?[0-9]+[eE][-+]?[0-9]+$`)
)

// singleRef reports a string that is one reference and nothing else.
func singleRef(s string) bool {
	t := strings.TrimSpace(s)
	return (strings.HasPrefix(t, "${") || strings.HasPrefix(t, "#{")) && strings.HasSuffix(t, "}") &&
		strings.Count(t, "{") == 1 && strings.Count(t, "}") == 1
}
