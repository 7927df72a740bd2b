package helm

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"helm.sh/helm/v4/pkg/chart/v2/loader"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/inputfile"
	"github.com/gantry-dev/gantry/internal/manifest"
)

// templateSuffixes are the suffixes of a values file's template (the Hub's
// values.yaml.template and values.yaml.gotemplate), which gantry renders
// next to it before the instance runs when the component declares it.
var templateSuffixes = []string{component.TemplateSuffix, component.GoTemplateSuffix}

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

// planView is what the plan knows of a component's values files: the
// templates the component declares (templates:), by the file each renders
// before the instance runs.
type planView struct {
	templates map[string]component.Template
}

// newPlanView reads the templates a component declares. Those it cannot
// list are left out: the plan reports them (component.CheckTemplates).
func newPlanView(dir string, t *manifest.Templates) *planView {
	declared, _ := component.Declared(dir, t)
	v := &planView{templates: map[string]component.Template{}}
	for _, tpl := range declared {
		if out, err := component.OutputName(tpl.Path); err == nil {
			v.templates[out] = tpl
		}
	}
	return v
}

// valuesRead is what readValues read.
type valuesRead struct {
	// values are the files' values merged.
	values map[string]any
	// unknown are the paths of the values the plan does not know yet.
	unknown []valuePath
	// skipped are warnings, one for each file left out.
	skipped []string
}

// readValues merges values files in order (later ones win, as helm -f
// does). At run time (plan nil) each file is read as it is: the
// component's templates were rendered next to themselves. At plan time a
// file whose template the component declares is read from its template,
// and unknown are the values it leaves unknown until it is rendered: those
// holding a mustache or Go template's tags, or all values when a template
// is no YAML before rendering (a curly template's references are found in
// the merged values). A file that is missing while a template of it is
// there that nothing renders is an error that says how to declare it —
// but in the Hub's list (hub: the config names no values files), which
// lists a values-*.yaml for each template, it is left out with a warning,
// as the Hub's helm extension skips a values file that is not there.
func readValues(dir string, files []string, hub bool, plan *planView) (valuesRead, error) {
	out := valuesRead{values: map[string]any{}}
	var errs []string
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f))
		src, kind := p, ""
		if plan != nil {
			if t, ok := plan.templates[p]; ok {
				src, kind = t.Path, t.Kind
			}
		}
		data, err := inputfile.Read(src, inputfile.MaxManifest)
		tpl := ""
		if errors.Is(err, fs.ErrNotExist) {
			tpl = undeclaredTemplate(p)
		}
		switch {
		case tpl != "" && hub:
			out.skipped = append(out.skipped, fmt.Sprintf("values file %s skipped: %s%s is not rendered: declare it in templates: to use it", f, f, tpl))
			continue
		case tpl != "":
			errs = append(errs, fmt.Sprintf("values file %s: %s; %s", f, inputfile.Problem(err), howToDeclare(f, tpl)))
			continue
		case err != nil:
			errs = append(errs, fmt.Sprintf("values file %s: %s", f, inputfile.Problem(err)))
			continue
		}
		m, err := loader.LoadValues(strings.NewReader(string(data)))
		switch {
		case err != nil && kind != "":
			out.unknown = append(out.unknown, valuePath{})
		case err != nil:
			errs = append(errs, fmt.Sprintf("values file %s: %v", f, err))
		default:
			if kind == component.TemplateMustache || kind == component.TemplateGo {
				out.unknown = append(out.unknown, pathsHolding(m, holdsTag)...)
			}
			out.values = loader.MergeMaps(out.values, m)
		}
	}
	if len(errs) > 0 {
		return valuesRead{}, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return out, nil
}

// undeclaredTemplate is the suffix of the template of a values file that
// is not there (p): nothing rendered it, so the component's templates:
// does not declare it (the Hub renders only the templates a component
// declares). "" when there is no such template.
func undeclaredTemplate(p string) string {
	for _, s := range templateSuffixes {
		if fi, err := os.Stat(p + s); err == nil && fi.Mode().IsRegular() {
			return s
		}
	}
	return ""
}

// howToDeclare says why a values file's template (suffix s) did not make
// it, and how to declare it.
func howToDeclare(f, s string) string {
	kind := ""
	if s == component.TemplateSuffix {
		kind = ", with kind: mustache for a mustache template"
	}
	return fmt.Sprintf("%s%s is not rendered, since the component's templates: does not declare it: declare it in the component's manifest, as templates: {files: [%s%s]}%s", f, s, f, s, kind)
}

// holdsTag reports whether a mustache or Go template's text holds a tag.
func holdsTag(s string) bool { return strings.Contains(s, "{{") }

// pathsHolding are the paths of the values whose text holds (a parameter
// reference, a template's tag): unknown until the run. A key that holds
// one makes its mapping unknown.
func pathsHolding(v any, holds func(string) bool) []valuePath {
	var out []valuePath
	var walk func(at valuePath, v any)
	walk = func(at valuePath, v any) {
		switch x := v.(type) {
		case string:
			if holds(x) {
				out = append(out, slices.Clone(at))
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				if holds(k) {
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
