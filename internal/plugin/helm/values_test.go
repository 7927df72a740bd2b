package helm

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plugin/kubernetes"
)

func TestValuesFiles(t *testing.T) {
	tests := []struct {
		name      string
		files     map[string]string
		cfg       config
		chartHere bool
		want      []string
	}{
		{name: "nothing", files: map[string]string{"main.tf": ""}, want: nil},
		{name: "values.yaml alone", files: map[string]string{"values.yaml": ""}, want: []string{"values.yaml"}},
		{
			name: "values.yaml first, then values-*.yaml sorted",
			files: map[string]string{
				"values-prod.yaml": "", "values-dev.yaml": "", "values.yaml": "", "values-a.yml": "",
				// not values files
				"values.yml": "", "other.yaml": "", "values-.yaml": "", "myvalues-x.yaml": "", "values-x.json": "",
				"values-x.yaml.bak": "", "Chart.lock": "",
			},
			want: []string{"values.yaml", "values-a.yml", "values-dev.yaml", "values-prod.yaml"},
		},
		{
			name:  "values-*.yaml without values.yaml",
			files: map[string]string{"values-b.yaml": "", "values-a.yaml": ""},
			want:  []string{"values-a.yaml", "values-b.yaml"},
		},
		{
			name: "templates counted by their rendered name",
			files: map[string]string{
				"values.yaml.template": "", "values-prod.yaml.gotemplate": "", "values-dev.yaml.template": "",
				// a template rendered before: counted once
				"values-dev.yaml": "",
			},
			want: []string{"values.yaml", "values-dev.yaml", "values-prod.yaml"},
		},
		{
			name:  "both templates of one file counted once",
			files: map[string]string{"values.yaml.template": "", "values.yaml.gotemplate": ""},
			want:  []string{"values.yaml"},
		},
		{
			name:  "folders are not values files",
			files: map[string]string{"values-x.yaml/a.yaml": "", "values.yaml/b.yaml": "", "values-y.yaml": ""},
			want:  []string{"values-y.yaml"},
		},
		{
			name:      "chart in the component folder: its values.yaml left out",
			files:     map[string]string{"Chart.yaml": "", "values.yaml": "", "values-prod.yaml": ""},
			chartHere: true,
			want:      []string{"values-prod.yaml"},
		},
		{
			name:      "chart in the component folder: values.yaml's template left out too",
			files:     map[string]string{"Chart.yaml": "", "values.yaml.template": ""},
			chartHere: true,
			want:      nil,
		},
		{
			name:  "config list kept as given",
			files: map[string]string{"values.yaml": "", "values-prod.yaml": ""},
			cfg:   config{Values: []string{"values-prod.yaml", "extra/more.yaml", "values.yaml"}},
			want:  []string{"values-prod.yaml", "extra/more.yaml", "values.yaml"},
		},
		{
			name:  "config empty list: no files",
			files: map[string]string{"values.yaml": ""},
			cfg:   config{Values: []string{}},
			want:  []string{},
		},
		{
			name:      "config list with the chart here",
			files:     map[string]string{"Chart.yaml": "", "values.yaml": ""},
			cfg:       config{Values: []string{"values.yaml"}},
			chartHere: true,
			want:      []string{"values.yaml"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, t.TempDir(), tt.files)
			got := valuesFiles(dir, tt.cfg, tt.chartHere)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("valuesFiles (-want +got):\n%s", d)
			}
		})
	}
	if got := valuesFiles(filepath.Join(t.TempDir(), "absent"), config{}, false); got != nil {
		t.Errorf("valuesFiles of a missing folder = %q; want none", got)
	}
}

func TestReadValues(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		list  []string
		// hub: the list is the Hub's (the config names no values files).
		hub  bool
		plan bool
		// templates the component declares (plan).
		templates *manifest.Templates
		want      map[string]any
		// unknown are the paths the plan does not know yet.
		unknown []valuePath
		// skipped are the warnings of the files left out.
		skipped []string
		// errs, when given, are substrings of the error wanted instead.
		errs []string
	}{
		{name: "no files", list: nil, want: map[string]any{}},
		{
			name:  "one file",
			files: map[string]string{"values.yaml": "replicas: 2\nimage: {tag: v1}\n"},
			list:  []string{"values.yaml"},
			want:  map[string]any{"replicas": float64(2), "image": map[string]any{"tag": "v1"}},
		},
		{
			name: "later files win, maps merged",
			files: map[string]string{
				"values.yaml":      "replicas: 1\nname: web\nimage: {repo: nginx, tag: v1}\nlist: [a, b]\n",
				"values-prod.yaml": "replicas: 3\nimage: {tag: v2}\nlist: [c]\n",
				"env/extra.yaml":   "name: web-prod\n",
			},
			list: []string{"values.yaml", "values-prod.yaml", "env/extra.yaml"},
			want: map[string]any{
				"replicas": float64(3), "name": "web-prod",
				"image": map[string]any{"repo": "nginx", "tag": "v2"}, "list": []any{"c"},
			},
		},
		{
			name:  "several YAML documents in a file",
			files: map[string]string{"values.yaml": "a: 1\n---\nb: 2\n"},
			list:  []string{"values.yaml"},
			want:  map[string]any{"a": float64(1), "b": float64(2)},
		},
		{
			name:  "empty file",
			files: map[string]string{"values.yaml": ""},
			list:  []string{"values.yaml"},
			want:  map[string]any{},
		},
		{
			name: "plan reads the template raw",
			files: map[string]string{
				"values.yaml.template": "replicas: ${replicas}\nname: web\nliteral: \"{{ not a tag }}\"\n",
				// rendered by an earlier run: the plan reads the template
				"values.yaml": "replicas: 5\nname: old\n",
			},
			list:      []string{"values.yaml"},
			plan:      true,
			templates: &manifest.Templates{Files: []string{"*.template"}},
			// Its references are found in the merged values; {{ is text
			// to a curly template.
			want: map[string]any{"replicas": "${replicas}", "name": "web", "literal": "{{ not a tag }}"},
		},
		{
			name:      "plan reads a .gotemplate raw: its tags are unknown",
			files:     map[string]string{"values-prod.yaml.gotemplate": "host: \"{{ .host }}\"\nname: web\nlist: [a, \"{{ .b }}\"]\n"},
			list:      []string{"values-prod.yaml"},
			plan:      true,
			templates: &manifest.Templates{Files: []string{"*.gotemplate"}},
			want:      map[string]any{"host": "{{ .host }}", "name": "web", "list": []any{"a", "{{ .b }}"}},
			unknown:   []valuePath{{"host"}, {"list", "1"}},
		},
		{
			name:      "plan: a mustache template's tags are unknown",
			files:     map[string]string{"values.yaml.template": "environment: \"{{env}}\"\n\"{{key}}\": {a: 1}\nname: web\n"},
			list:      []string{"values.yaml"},
			plan:      true,
			templates: &manifest.Templates{Kind: "mustache", Files: []string{"values.yaml.template"}},
			want:      map[string]any{"environment": "{{env}}", "{{key}}": map[string]any{"a": float64(1)}, "name": "web"},
			unknown:   []valuePath{{}},
		},
		{
			name:  "plan: a mustache template of an extra target",
			files: map[string]string{"values.yaml.template": "environment: \"{{env}}\"\n", "other.template": ""},
			list:  []string{"values.yaml"},
			plan:  true,
			templates: &manifest.Templates{Files: []string{"other.template"},
				Extra: []manifest.TemplateTarget{{Kind: "mustache", Files: []string{"values*.template"}}}},
			want:    map[string]any{"environment": "{{env}}"},
			unknown: []valuePath{{"environment"}},
		},
		{
			name: "plan: a template that is not YAML makes all values unknown",
			files: map[string]string{
				"values.yaml":               "name: web\n",
				"values-prod.yaml.template": "{{#hosts}}\n- {{.}}\n{{/hosts}}\n: : [\n",
			},
			list:      []string{"values.yaml", "values-prod.yaml"},
			plan:      true,
			templates: &manifest.Templates{Kind: "mustache", Files: []string{"*.template"}},
			want:      map[string]any{"name": "web"},
			unknown:   []valuePath{{}},
		},
		{
			name:  "plan: a template not declared, beside its file: the file is read",
			files: map[string]string{"values.yaml.template": "replicas: ${replicas}\n", "values.yaml": "replicas: 2\n"},
			list:  []string{"values.yaml"},
			plan:  true,
			want:  map[string]any{"replicas": float64(2)},
		},
		{
			name:  "plan: a template not declared, and no file",
			files: map[string]string{"values.yaml.template": "replicas: ${replicas}\n"},
			list:  []string{"values.yaml"},
			plan:  true,
			errs: []string{"values file values.yaml: not found; values.yaml.template is not rendered, since the component's templates: does not declare it",
				"templates: {files: [values.yaml.template]}, with kind: mustache for a mustache template"},
		},
		{
			name: "plan: the Hub's list skips a file whose template is not declared",
			files: map[string]string{"values.yaml.template": "replicas: ${replicas}\n", "values-extra.yaml.template": "a: 1\n",
				"values-prod.yaml.gotemplate": "b: 2\n"},
			list:      []string{"values.yaml", "values-extra.yaml", "values-prod.yaml"},
			hub:       true,
			plan:      true,
			templates: &manifest.Templates{Files: []string{"values.yaml.template"}},
			want:      map[string]any{"replicas": "${replicas}"},
			skipped: []string{
				"values file values-extra.yaml skipped: values-extra.yaml.template is not rendered: declare it in templates: to use it",
				"values file values-prod.yaml skipped: values-prod.yaml.gotemplate is not rendered: declare it in templates: to use it",
			},
		},
		{
			name:  "run: the Hub's list skips a file whose template was not rendered",
			files: map[string]string{"values.yaml": "replicas: 2\n", "values-extra.yaml.template": "a: 1\n"},
			list:  []string{"values.yaml", "values-extra.yaml"},
			hub:   true,
			want:  map[string]any{"replicas": float64(2)},
			skipped: []string{
				"values file values-extra.yaml skipped: values-extra.yaml.template is not rendered: declare it in templates: to use it",
			},
		},
		{
			name:  "the Hub's list: a missing file with no template is an error",
			files: map[string]string{"values.yaml": "a: 1\n"},
			list:  []string{"values.yaml", "values-gone.yaml"},
			hub:   true,
			errs:  []string{"values file values-gone.yaml: not found"},
		},
		{
			name:      "plan: a .gotemplate not declared (another one is)",
			files:     map[string]string{"values-prod.yaml.gotemplate": "a: 1\n", "x.template": ""},
			list:      []string{"values-prod.yaml"},
			plan:      true,
			templates: &manifest.Templates{Files: []string{"x.template"}},
			errs:      []string{"values-prod.yaml.gotemplate is not rendered", "templates: {files: [values-prod.yaml.gotemplate]}"},
		},
		{
			name:  "plan reads a file with no template",
			files: map[string]string{"values.yaml": "name: web\n"},
			list:  []string{"values.yaml"},
			plan:  true,
			want:  map[string]any{"name": "web"},
		},
		{
			name: "run reads the rendered file",
			files: map[string]string{
				"values.yaml.template": "replicas: ${replicas}\n",
				"values.yaml":          "replicas: 3\n",
			},
			list: []string{"values.yaml"},
			want: map[string]any{"replicas": float64(3)},
		},
		{
			name:  "run: a template not rendered",
			files: map[string]string{"values.yaml.template": "replicas: ${replicas}\n"},
			list:  []string{"values.yaml"},
			errs:  []string{"values file values.yaml: not found; values.yaml.template is not rendered, since the component's templates: does not declare it"},
		},
		{
			name:  "missing configured file",
			files: map[string]string{"values.yaml": "a: 1\n"},
			list:  []string{"values.yaml", "env/missing.yaml"},
			errs:  []string{"values file env/missing.yaml:"},
		},
		{
			name:  "missing in plan too",
			files: map[string]string{"values.yaml": "a: 1\n"},
			list:  []string{"missing.yaml"},
			plan:  true,
			errs:  []string{"values file missing.yaml:"},
		},
		{
			name:  "every problem named",
			files: map[string]string{"bad.yaml": "a: [\n"},
			list:  []string{"one.yaml", "bad.yaml", "two.yaml"},
			errs:  []string{"values file one.yaml:", "values file bad.yaml:", "values file two.yaml:"},
		},
		{
			name:  "not YAML at run time",
			files: map[string]string{"values.yaml": "a: [\n"},
			list:  []string{"values.yaml"},
			errs:  []string{"values file values.yaml:"},
		},
		{
			name:  "a list, not a mapping",
			files: map[string]string{"values.yaml": "- a\n- b\n"},
			list:  []string{"values.yaml"},
			errs:  []string{"values file values.yaml:"},
		},
		{
			name:  "a folder",
			files: map[string]string{"values.yaml/x": ""},
			list:  []string{"values.yaml"},
			errs:  []string{"values file values.yaml:"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeFiles(t, t.TempDir(), tt.files)
			var plan *planView
			if tt.plan {
				plan = newPlanView(dir, tt.templates)
			}
			got, err := readValues(dir, tt.list, tt.hub, plan)
			if len(tt.errs) > 0 {
				if err == nil {
					t.Fatalf("readValues = %v; want an error", got.values)
				}
				for _, s := range tt.errs {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not hold %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("readValues: %v", err)
			}
			if d := cmp.Diff(tt.want, got.values); d != "" {
				t.Errorf("readValues (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.unknown, got.unknown); d != "" {
				t.Errorf("unknown (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tt.skipped, got.skipped); d != "" {
				t.Errorf("skipped (-want +got):\n%s", d)
			}
		})
	}
}

func TestMergeValues(t *testing.T) {
	base := map[string]any{
		"replicas": float64(1),
		"image":    map[string]any{"repo": "nginx", "tag": "v1"},
		"list":     []any{"a"},
		"scalar":   "s",
		"gone":     "x",
	}
	over := map[string]any{
		"replicas": int64(3),
		"image":    map[string]any{"tag": "v2", "pull": "Always"},
		"list":     []any{"b"},
		"scalar":   map[string]any{"now": "a map"},
		"gone":     nil,
		"new":      true,
	}
	want := map[string]any{
		"replicas": int64(3),
		"image":    map[string]any{"repo": "nginx", "tag": "v2", "pull": "Always"},
		"list":     []any{"b"},
		"scalar":   map[string]any{"now": "a map"},
		"gone":     nil,
		"new":      true,
	}
	got := mergeValues(base, over)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("mergeValues (-want +got):\n%s", d)
	}
	if base["image"].(map[string]any)["tag"] != "v1" || len(base) != 5 {
		t.Errorf("mergeValues changed its base: %v", base)
	}
	if d := cmp.Diff(map[string]any{"a": int64(1)}, mergeValues(nil, map[string]any{"a": int64(1)})); d != "" {
		t.Errorf("over nil base: %s", d)
	}
	if d := cmp.Diff(map[string]any{"a": int64(1)}, mergeValues(map[string]any{"a": int64(1)}, nil)); d != "" {
		t.Errorf("nil over: %s", d)
	}
}

func TestPathsHolding(t *testing.T) {
	for _, tt := range []struct {
		v    any
		want []valuePath
	}{
		{nil, nil},
		{"plain", nil},
		{"${n}", []valuePath{{}}},
		{"#{expr}", []valuePath{{}}},
		{int64(3), nil},
		{
			map[string]any{"a": map[string]any{"b": []any{"x", "y-${n}"}, "c": "${c}"}, "d": "plain"},
			[]valuePath{{"a", "b", "1"}, {"a", "c"}},
		},
		{map[string]any{"a": []any{"x", 1, true}}, nil},
		// A key that holds a reference: its mapping is unknown.
		{map[string]any{"a": map[string]any{"${k}": 1, "b": "${b}"}}, []valuePath{{"a"}}},
	} {
		if d := cmp.Diff(tt.want, pathsHolding(tt.v, kubernetes.HasRef)); d != "" {
			t.Errorf("pathsHolding(%v) (-want +got):\n%s", tt.v, d)
		}
	}
}
