package helm

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

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
		return c, fmt.Errorf("config must be a mapping with %s; got %s", strings.Join(configFields, ", "), kubernetes.Describe(v))
	}
	keys := slices.Sorted(maps.Keys(m))
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf("config "+format, args...)) }
	for _, k := range keys {
		x := m[k]
		switch k {
		case "chart", "repo", "version", "release", "namespace", "kubeconfig", "context":
			s, ok := scalar(x)
			if !ok {
				fail("%s: must be a string; got %s", k, kubernetes.Describe(x))
				continue
			}
			*map[string]*string{"chart": &c.Chart, "repo": &c.Repo, "version": &c.Version, "release": &c.Release,
				"namespace": &c.Namespace, "kubeconfig": &c.Kubeconfig, "context": &c.Context}[k] = s
		case "values":
			list, err := kubernetes.StringList(x)
			if err != nil {
				fail("values: %v", err)
				continue
			}
			for i, p := range list {
				p, err := kubernetes.LocalPath(p)
				if err != nil {
					fail("values[%d]: %v", i, err)
					continue
				}
				c.Values = append(c.Values, p)
			}
			if c.Values == nil {
				c.Values = []string{}
			}
		case "set":
			sm, ok := x.(map[string]any)
			if !ok {
				fail("set: must be a mapping of values; got %s", kubernetes.Describe(x))
				continue
			}
			c.Set = sm
		case "timeout":
			if s, ok := x.(string); ok && kubernetes.HasRef(s) {
				continue
			}
			d, err := kubernetes.ParseTimeout(x)
			if err != nil {
				fail("timeout: %v", err)
				continue
			}
			c.Timeout = d
		default:
			errs = append(errs, kubernetes.UnknownField(k, configFields))
		}
	}
	// A chart named in a repository is no path.
	if c.Chart != "" && !kubernetes.HasRef(c.Chart) && c.Repo == "" {
		if _, err := kubernetes.LocalPath(c.Chart); err != nil {
			fail("chart: %v", err)
		}
	}
	return c, errors.Join(errs...)
}

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
