package kubernetes

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// defaultTimeout is how long one object may take to become ready when
// neither the config nor the object's gantry.dev/timeout annotation says.
const defaultTimeout = 5 * time.Minute

// defaultCRDs is the CRDs folder used when the config names none and the
// component folder has one, as a Helm chart's crds/ folder is.
const defaultCRDs = "crds"

// config is the entry's config:
//
//	plugins:
//	- kubernetes: {key: app, config: {manifests: [deploy], namespace: web}}
//
// Paths are relative to the component folder and stay inside it, so that a
// component is a folder that can be moved and reviewed as a whole.
type config struct {
	// Manifests are files or folders; a folder contributes its *.yaml,
	// *.yml and *.json files sorted by name, not its sub-folders (which
	// often hold things that are not manifests: charts, CRDs, kustomize
	// bases).
	Manifests []string
	// Kustomize is a folder holding a kustomization (kustomization.yaml,
	// kustomization.yml or Kustomization) whose build output is deployed.
	Kustomize string
	// CRDs is a folder of CustomResourceDefinitions deployed before
	// everything else. "" means "crds" when the component folder has it
	// (see crdsFolder).
	CRDs string
	// Namespace is the release namespace: where objects that name none go.
	// "" lets the runner decide.
	Namespace string
	// Kubeconfig and Context choose the cluster; "" means the usual
	// defaults (KUBECONFIG, ~/.kube/config, the current context).
	Kubeconfig, Context string
	// Timeout bounds how long each object may take to become ready.
	Timeout time.Duration
}

// configFields are the config's fields as the manifest spells them.
var configFields = []string{"manifests", "kustomize", "crds", "namespace", "kubeconfig", "context", "timeout"}

// parseConfig reads an entry's config as the YAML decoder gave it. The
// plan parses the config before parameters are expanded, so a value that
// still holds a reference (${...} or #{...}) is not checked where only its
// expanded value could be: the namespace, kubeconfig, context and timeout
// (left at its default). Paths are read at plan time to list the stages and
// so cannot hold references. All problems are reported together.
func parseConfig(v any) (config, error) {
	c := config{Timeout: defaultTimeout}
	if v == nil {
		return c, errors.New("config: give manifests (files or folders), kustomize (a folder) or crds (a folder of CRDs)")
	}
	m, ok := v.(map[string]any)
	if !ok {
		return c, fmt.Errorf("config must be a mapping with %s; got %s", strings.Join(configFields, ", "), Describe(v))
	}
	keys := slices.Sorted(maps.Keys(m))
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf("config "+format, args...)) }
	for _, k := range keys {
		x := m[k]
		switch k {
		case "manifests":
			list, err := StringList(x)
			if err != nil {
				fail("manifests: %v", err)
				continue
			}
			if len(list) == 0 {
				fail("manifests: the list is empty; give files or folders, or leave manifests out")
			}
			for i, p := range list {
				p, err := LocalPath(p)
				if err != nil {
					fail("manifests[%d]: %v", i, err)
					continue
				}
				c.Manifests = append(c.Manifests, p)
			}
		case "kustomize", "crds":
			s, ok := x.(string)
			if !ok || s == "" {
				fail("%s: must be a folder relative to the component folder; got %s", k, Describe(x))
				continue
			}
			p, err := LocalPath(s)
			if err != nil {
				fail("%s: %v", k, err)
				continue
			}
			if k == "kustomize" {
				c.Kustomize = p
			} else {
				c.CRDs = p
			}
		case "namespace":
			s, ok := x.(string)
			if !ok {
				fail("namespace: must be a string; got %s", Describe(x))
				continue
			}
			if s != "" && !HasRef(s) {
				if msgs := validation.IsDNS1123Label(s); len(msgs) > 0 {
					fail("namespace: %q is not a valid namespace name: %s", s, strings.Join(msgs, "; "))
					continue
				}
			}
			c.Namespace = s
		case "kubeconfig", "context":
			s, ok := x.(string)
			if !ok {
				fail("%s: must be a string; got %s", k, Describe(x))
				continue
			}
			if k == "kubeconfig" {
				c.Kubeconfig = s
			} else {
				c.Context = s
			}
		case "timeout":
			if s, ok := x.(string); ok && HasRef(s) {
				continue
			}
			d, err := parseTimeout(x)
			if err != nil {
				fail("timeout: %v", err)
				continue
			}
			c.Timeout = d
		default:
			errs = append(errs, UnknownField(k, configFields))
		}
	}
	if len(errs) == 0 && len(c.Manifests) == 0 && c.Kustomize == "" && c.CRDs == "" {
		fail("needs manifests (files or folders), kustomize (a folder) or crds (a folder of CRDs)")
	}
	return c, errors.Join(errs...)
}

// UnknownField is the error of a config field that is none of fields,
// with the one it was probably meant to be.
func UnknownField(k string, fields []string) error {
	msg := fmt.Sprintf("unknown config field %q", k)
	if s := manifest.Suggest(k, fields); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	return fmt.Errorf("%s; expected %s", msg, strings.Join(fields, ", "))
}

// crdsFolder returns the CRDs folder of an instance whose component folder
// is dir, relative to it, and whether it was named in the config: the
// configured one, else "crds" when dir has such a folder and no manifests
// entry names it already (it would be loaded twice). "" means none.
func (c config) crdsFolder(dir string) (path string, explicit bool) {
	if c.CRDs != "" {
		return c.CRDs, true
	}
	if slices.Contains(c.Manifests, defaultCRDs) {
		return "", false
	}
	if fi, err := os.Stat(filepath.Join(dir, defaultCRDs)); err != nil || !fi.IsDir() {
		return "", false
	}
	return defaultCRDs, false
}

// HasRef reports whether a config value still holds a parameter reference,
// which only the run expands.
func HasRef(s string) bool {
	return strings.Contains(s, "${") || strings.Contains(s, "#{")
}

// StringList reads a list of non-empty strings; a single string is a list of
// one, since "manifests: deploy.yaml" is what people write.
func StringList(x any) ([]string, error) {
	switch l := x.(type) {
	case string:
		return []string{l}, nil
	case []string:
		return l, nil
	case []any:
		out := make([]string, 0, len(l))
		for i, e := range l {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("item %d must be a path; got %s", i, Describe(e))
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, fmt.Errorf("must be a list of files or folders; got %s", Describe(x))
}

// LocalPath checks that p names something inside the component folder and
// returns it cleaned. A path outside would make the component depend on
// where it is checked out, and the plan could not say what it reads.
func LocalPath(p string) (string, error) {
	switch {
	case p == "":
		return "", errors.New("the path is empty")
	case HasRef(p):
		return "", fmt.Errorf("%q holds a parameter reference; paths are read when the plan is built, before parameters are expanded, so they must be written out", p)
	case filepath.IsAbs(p) || strings.HasPrefix(p, "/"):
		return "", fmt.Errorf("%q is absolute; give a path relative to the component folder", p)
	}
	native := filepath.FromSlash(p)
	if !filepath.IsLocal(native) {
		return "", fmt.Errorf("%q leaves the component folder; give a path inside it", p)
	}
	return filepath.ToSlash(filepath.Clean(native)), nil
}

// parseTimeout reads a timeout: seconds as a number (YAML gives int, int64,
// uint64 or float64) or a string of seconds, or a Go duration ("90s",
// "2m30s").
func parseTimeout(x any) (time.Duration, error) {
	var secs float64
	switch n := x.(type) {
	case int:
		secs = float64(n)
	case int64:
		secs = float64(n)
	case uint64:
		secs = float64(n)
	case float64:
		secs = n
	case string:
		d, err := parseDuration(n)
		if err != nil {
			return 0, err
		}
		return d, nil
	default:
		return 0, fmt.Errorf("must be seconds or a duration like \"90s\"; got %s", Describe(x))
	}
	return secondsDuration(secs, strconv.FormatFloat(secs, 'g', -1, 64))
}

// parseDuration reads seconds ("90", "1.5") or a Go duration ("90s"),
// positive: a zero or negative timeout would fail every object at once.
func parseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		return secondsDuration(f, s)
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("%q is neither seconds nor a duration like \"90s\" or \"2m30s\"", s)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration", s)
	}
	return d, nil
}

// secondsDuration turns a positive, finite number of seconds into a
// duration; text is how the value was written, for the message.
func secondsDuration(secs float64, text string) (time.Duration, error) {
	if math.IsNaN(secs) || secs <= 0 {
		return 0, fmt.Errorf("%s is not a positive number of seconds", text)
	}
	if secs > float64(math.MaxInt64)/float64(time.Second) {
		return 0, fmt.Errorf("%s seconds is too long", text)
	}
	d := time.Duration(secs * float64(time.Second))
	if d <= 0 {
		return 0, fmt.Errorf("%s is not a positive number of seconds", text)
	}
	return d, nil
}

// Describe names a YAML value's type and shows it, for messages.
func Describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "nothing (null)"
	case string:
		return fmt.Sprintf("the string %q", x)
	case bool:
		return fmt.Sprintf("the boolean %v", x)
	case int, int64, uint64, float64:
		return fmt.Sprintf("the number %v", x)
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("a %T", v)
}
