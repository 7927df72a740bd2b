package helm

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plugin/kubernetes"
)

// config is an entry's config:
//
//	plugins:
//	- helm:
//	    key: web
//	    config:
//	      chart: ./chart           # a folder, a .tgz, or a chart name with repo
//	      repo: https://charts.example.com
//	      version: 1.2.3
//	      release: web
//	      namespace: web
//	      values: [values.yaml]    # files of the component folder, in order
//	      set: {replicaCount: ${replicas}}
//
// Every field may be left out: the chart is then the component folder's
// when it has a Chart.yaml, else the component's HELM_CHART (with HELM_REPO
// and HELM_CHART_VERSION), as the Hub's helm extension reads them; the
// release is COMPONENT_NAME (the component's name); the namespace the
// component's namespace parameter or NAMESPACE; the values files the
// component folder's values.yaml and values-*.yaml.
type config struct {
	Chart, Repo, Version string
	Release, Namespace   string
	// Values are values files relative to the component folder, applied
	// in order over the chart's defaults; nil means the defaults (see
	// valuesFiles).
	Values []string
	// Set are values applied last, with parameter references.
	Set map[string]any
	// Kubeconfig and Context choose the cluster.
	Kubeconfig, Context string
	Timeout             time.Duration
}

var configFields = []string{"chart", "repo", "version", "release", "namespace", "values", "set", "kubeconfig", "context", "timeout"}

// parseConfig reads an entry's config as the YAML decoder gave it; all
// problems are reported together.
func parseConfig(v any) (config, error) {
	c := config{Timeout: kubernetes.DefaultTimeout}
	if v == nil {
		return c, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return c, fmt.Errorf("config must be a mapping with %s; got %T", strings.Join(configFields, ", "), v)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf("config "+format, args...)) }
	for _, k := range keys {
		x := m[k]
		switch k {
		case "chart", "repo", "version", "release", "namespace", "kubeconfig", "context":
			s, ok := scalar(x)
			if !ok {
				fail("%s: must be a string; got %s", k, describe(x))
				continue
			}
			*map[string]*string{"chart": &c.Chart, "repo": &c.Repo, "version": &c.Version, "release": &c.Release,
				"namespace": &c.Namespace, "kubeconfig": &c.Kubeconfig, "context": &c.Context}[k] = s
		case "values":
			list, err := stringList(x)
			if err != nil {
				fail("values: %v", err)
				continue
			}
			for i, p := range list {
				if err := localPath(p); err != nil {
					fail("values[%d]: %v", i, err)
					continue
				}
				c.Values = append(c.Values, filepath.ToSlash(filepath.Clean(p)))
			}
			if c.Values == nil {
				c.Values = []string{}
			}
		case "set":
			sm, ok := x.(map[string]any)
			if !ok {
				fail("set: must be a mapping of values; got %s", describe(x))
				continue
			}
			c.Set = sm
		case "timeout":
			if s, ok := x.(string); ok && hasRef(s) {
				continue
			}
			d, err := kubernetes.ParseTimeout(x)
			if err != nil {
				fail("timeout: %v", err)
				continue
			}
			c.Timeout = d
		default:
			msg := fmt.Sprintf("unknown config field %q", k)
			if s := manifest.Suggest(k, configFields); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			errs = append(errs, fmt.Errorf("%s; expected %s", msg, strings.Join(configFields, ", ")))
		}
	}
	if c.Chart != "" && !hasRef(c.Chart) && !isReference(c) {
		if err := localPath(c.Chart); err != nil {
			fail("chart: %v", err)
		}
	}
	return c, errors.Join(errs...)
}

// isReference reports a chart named in a repository rather than a path:
// a repo is given, or the chart is written repo/name with no such file.
func isReference(c config) bool { return c.Repo != "" }

// scalar reads a string, or a number or boolean written plain (version:
// 1.2 is a number to YAML).
func scalar(x any) (string, bool) {
	switch v := x.(type) {
	case string:
		return v, true
	case int, int64, uint64, float64, bool:
		return fmt.Sprint(v), true
	}
	return "", false
}

func hasRef(s string) bool { return strings.Contains(s, "${") || strings.Contains(s, "#{") }

// stringList reads a list of strings; one string is a list of one.
func stringList(x any) ([]string, error) {
	switch l := x.(type) {
	case string:
		return []string{l}, nil
	case []any:
		out := make([]string, 0, len(l))
		for i, e := range l {
			s, ok := e.(string)
			if !ok || s == "" {
				return nil, fmt.Errorf("item %d must be a file; got %s", i, describe(e))
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("must be a list of files; got %s", describe(x))
}

// localPath checks that p names something inside the component folder: a
// component is a folder that can be moved and reviewed as a whole.
func localPath(p string) error {
	switch {
	case p == "":
		return errors.New("the path is empty")
	case hasRef(p):
		return fmt.Errorf("%q holds a parameter reference; paths are read when the plan is built, so they must be written out", p)
	case filepath.IsAbs(p):
		return fmt.Errorf("%q is absolute; give a path relative to the component folder", p)
	case !filepath.IsLocal(filepath.FromSlash(p)):
		return fmt.Errorf("%q leaves the component folder; give a path inside it", p)
	}
	return nil
}

func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing (null)"
	case string:
		return fmt.Sprintf("the string %q", x)
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("the %T %v", v, v)
}
