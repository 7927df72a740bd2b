package helm

import (
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	cutil "helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	rspb "helm.sh/helm/v4/pkg/release/v1"

	"github.com/gantry-dev/gantry/internal/plugin/kubernetes"
)

const crdYAML = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %s.example.com
spec:
  group: example.com
  names: {kind: %s, plural: %s}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`

func crd(plural, kind string) string {
	return strings.NewReplacer("%s.example.com", plural+".example.com", "kind: %s", "kind: "+kind, "plural: %s", "plural: "+plural).Replace(crdYAML)
}

// demoChart is a chart with CRDs, notes, an empty template, a hook, a
// partial and a dependency with CRDs and notes of its own.
func demoChart() map[string]string {
	return map[string]string{
		"Chart.yaml": `apiVersion: v2
name: demo
version: 0.1.0
dependencies:
- name: sub
  version: 0.1.0
  condition: sub.enabled
`,
		"values.yaml":            "replicas: 1\ngreeting: hello\nsub:\n  enabled: true\n",
		"crds/crontab.yaml":      crd("crontabs", "CronTab"),
		"crds/README.md":         "not a manifest",
		"templates/_helpers.tpl": `{{- define "demo.name" -}}{{ .Release.Name }}-demo{{- end -}}`,
		"templates/NOTES.txt":    "Thanks for installing {{ .Release.Name }} in {{ .Release.Namespace }}.\n",
		"templates/empty.yaml":   "{{- if .Values.never }}\napiVersion: v1\nkind: ConfigMap\n{{- end }}\n",
		"templates/blank.yaml":   "\n\n   \n",
		"templates/b-config.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "demo.name" . }}
  namespace: {{ .Release.Namespace }}
data:
  greeting: {{ .Values.greeting | quote }}
  upgrade: {{ .Release.IsUpgrade | quote }}
  revision: {{ .Release.Revision | quote }}
`,
		"templates/a-service.yaml": `apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}
spec:
  ports: [{port: 80}]
`,
		"templates/hook.yaml": `apiVersion: batch/v1
kind: Job
metadata:
  name: {{ .Release.Name }}-migrate
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-weight: "-5"
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: busybox}]
`,
		"charts/sub/Chart.yaml":          "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
		"charts/sub/crds/widgets.yaml":   crd("widgets", "Widget"),
		"charts/sub/templates/NOTES.txt": "sub notes\n",
		"charts/sub/templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-sub
`,
	}
}

func loadTestChart(t *testing.T, files map[string]string) string {
	t.Helper()
	return writeFiles(t, filepath.Join(t.TempDir(), "chart"), files)
}

func renderFiles(t *testing.T, files map[string]string, values map[string]any, upgrade bool) (*rendered, error) {
	t.Helper()
	ch, err := loader.Load(loadTestChart(t, files))
	if err != nil {
		t.Fatal(err)
	}
	return render(context.Background(), renderRequest{chart: ch, values: values, release: "rel", namespace: "ns",
		revision: 3, upgrade: upgrade, caps: common.DefaultCapabilities})
}

func docNames(docs []kubernetes.Document) []string {
	var out []string
	for _, d := range docs {
		name := d.Name
		if d.CRD {
			name += " (CRD)"
		}
		out = append(out, name)
	}
	return out
}

func TestRender(t *testing.T) {
	r, err := renderFiles(t, demoChart(), map[string]any{"greeting": "hi"}, false)
	if err != nil {
		t.Fatal(err)
	}
	wantDocs := []string{
		"demo/crds/crontab.yaml (CRD)",
		"demo/charts/sub/crds/widgets.yaml (CRD)",
		"demo/charts/sub/templates/cm.yaml",
		"demo/templates/a-service.yaml",
		"demo/templates/b-config.yaml",
		"demo/templates/hook.yaml",
	}
	if got := docNames(r.docs); !slices.Equal(got, wantDocs) {
		t.Errorf("documents:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantDocs, "\n"))
	}
	byName := map[string]string{}
	for _, d := range r.docs {
		byName[d.Name] = string(d.Data)
	}
	if d := byName["demo/crds/crontab.yaml"]; d != crd("crontabs", "CronTab") {
		t.Errorf("the CRD is not the file as written:\n%s", d)
	}
	cm := byName["demo/templates/b-config.yaml"]
	for _, s := range []string{"name: rel-demo", "namespace: ns", `greeting: "hi"`, `upgrade: "false"`, `revision: "3"`} {
		if !strings.Contains(cm, s) {
			t.Errorf("the ConfigMap does not hold %q (values, release, partials):\n%s", s, cm)
		}
	}
	for name := range byName {
		if strings.Contains(name, "NOTES") || strings.Contains(name, "empty") || strings.Contains(name, "blank") || strings.Contains(name, "_helpers") {
			t.Errorf("document %s should not be there", name)
		}
	}

	if want := "Thanks for installing rel in ns.\n"; r.notes != want {
		t.Errorf("notes = %q; want %q (the chart's, not its dependency's)", r.notes, want)
	}

	if len(r.hooks) != 1 {
		t.Fatalf("hooks = %d; want 1", len(r.hooks))
	}
	h := r.hooks[0]
	if h.Name != "rel-migrate" || h.Kind != "Job" || h.Path != "demo/templates/hook.yaml" || h.Weight != -5 ||
		!slices.Equal(h.Events, []rspb.HookEvent{rspb.HookPreInstall, rspb.HookPreUpgrade}) {
		t.Errorf("hook = %+v", h)
	}

	for _, s := range []string{"# Source: demo/templates/a-service.yaml", "# Source: demo/templates/b-config.yaml", "# Source: demo/charts/sub/templates/cm.yaml", "kind: Service"} {
		if !strings.Contains(r.manifest, s) {
			t.Errorf("manifest does not hold %q:\n%s", s, r.manifest)
		}
	}
	for _, s := range []string{"hook.yaml", "migrate", "Thanks", "CustomResourceDefinition"} {
		if strings.Contains(r.manifest, s) {
			t.Errorf("manifest holds %q:\n%s", s, r.manifest)
		}
	}
	if !strings.HasPrefix(r.manifest, "---\n# Source: ") {
		t.Errorf("manifest does not start as Helm's does:\n%s", r.manifest)
	}
}

func TestRenderUpgradeAndDependencyCondition(t *testing.T) {
	r, err := renderFiles(t, demoChart(), map[string]any{"sub": map[string]any{"enabled": false}}, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"demo/crds/crontab.yaml (CRD)",
		"demo/templates/a-service.yaml",
		"demo/templates/b-config.yaml",
		"demo/templates/hook.yaml",
	}
	if got := docNames(r.docs); !slices.Equal(got, want) {
		t.Errorf("documents with the dependency disabled:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, d := range r.docs {
		if d.Name == "demo/templates/b-config.yaml" && !strings.Contains(string(d.Data), `upgrade: "true"`) {
			t.Errorf("an upgrade renders .Release.IsUpgrade false:\n%s", d.Data)
		}
	}
}

func TestRenderNoNotes(t *testing.T) {
	files := chartFiles("plain", "1.0.0")
	r, err := renderFiles(t, files, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if r.notes != "" || len(r.hooks) != 0 {
		t.Errorf("notes %q, hooks %v; want none", r.notes, r.hooks)
	}
	if got := docNames(r.docs); !slices.Equal(got, []string{"plain/templates/cm.yaml"}) {
		t.Errorf("documents = %q", got)
	}
}

func TestRenderErrors(t *testing.T) {
	base := chartFiles("web", "1.0.0")
	with := func(extra map[string]string) map[string]string {
		m := maps.Clone(base)
		maps.Copy(m, extra)
		return m
	}
	schema := `{
  "$schema": "https://json-schema.org/draft-07/schema#",
  "type": "object",
  "properties": {"replicas": {"type": "integer"}}
}`
	tests := []struct {
		name   string
		files  map[string]string
		values map[string]any
		caps   *common.Capabilities // default: Helm's defaults, the plan's
		errs   []string
	}{
		{
			name:  "template error names file and line",
			files: with(map[string]string{"templates/bad.yaml": "apiVersion: v1\nkind: {{ .Values.kind | required \"kind is required\" }}\n"}),
			errs:  []string{"render chart web", "templates/bad.yaml:2", "kind is required"},
		},
		{
			name:  "template parse error",
			files: with(map[string]string{"templates/bad.yaml": "a: 1\nb: {{ .Values.x \n"}),
			errs:  []string{"render chart web", "templates/bad.yaml:2"},
		},
		{
			name:  "missing nested value",
			files: with(map[string]string{"templates/bad.yaml": "a: 1\nb: {{ .Values.image.tag }}\n"}),
			errs:  []string{"templates/bad.yaml:2"},
		},
		{
			name:   "schema violation",
			files:  with(map[string]string{"values.schema.json": schema, "values.yaml": "replicas: 1\n"}),
			values: map[string]any{"replicas": "three"},
			errs:   []string{"chart web", "schema", "replicas"},
		},
		{
			name:  "schema violation by the chart's own values",
			files: with(map[string]string{"values.schema.json": schema, "values.yaml": "replicas: three\n"}),
			errs:  []string{"schema"},
		},
		{
			name:  "kubeVersion not met by the cluster",
			files: with(map[string]string{"Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.0\nkubeVersion: \">=1.99.0-0\"\n"}),
			caps:  clusterCaps("v1.36.4"),
			errs:  []string{"chart web needs Kubernetes >=1.99.0-0; the cluster runs v1.36.4"},
		},
		{
			name:  "missing dependency",
			files: with(map[string]string{"Chart.yaml": "apiVersion: v2\nname: web\nversion: 1.0.0\ndependencies:\n- name: absent\n  version: 1.0.0\n"}),
			errs:  []string{"chart web", "missing in charts/: absent"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ch, err := loader.Load(loadTestChart(t, tt.files))
			if err != nil {
				t.Fatal(err)
			}
			caps := tt.caps
			if caps == nil {
				caps = common.DefaultCapabilities
			}
			_, err = render(context.Background(), renderRequest{chart: ch, values: tt.values, release: "rel", namespace: "ns",
				revision: 1, caps: caps})
			if err == nil {
				t.Fatal("render: no error")
			}
			for _, s := range tt.errs {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q\ndoes not hold %q", err, s)
				}
			}
			// The plan counts each line of a plugin's error as a problem.
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error runs over several lines:\n%v", err)
			}
		})
	}
}

// clusterCaps are capabilities as prepare asks them of a cluster running
// version (a copy of Helm's defaults with that version).
func clusterCaps(version string) *common.Capabilities {
	c := *common.DefaultCapabilities
	v := strings.Split(strings.TrimPrefix(version, "v"), ".")
	c.KubeVersion = common.KubeVersion{Version: version, Major: v[0], Minor: v[1]}
	return &c
}

// TestRenderKubeVersion: a chart's kubeVersion is checked against the
// cluster's version, at run time; the plan's capabilities are Helm's
// defaults, which say nothing of the cluster, so the plan does not check it
// (a chart for a newer or older cluster than Helm's default is fine).
func TestRenderKubeVersion(t *testing.T) {
	tests := []struct {
		name, kubeVersion string
		caps              *common.Capabilities
	}{
		{name: "met by the cluster", kubeVersion: ">=1.16.0-0", caps: clusterCaps("v1.30.2")},
		{name: "plan: above Helm's default version", kubeVersion: ">=1.99.0-0", caps: common.DefaultCapabilities},
		{name: "plan: below Helm's default version", kubeVersion: "<1.30.0-0", caps: common.DefaultCapabilities},
		{name: "plan: patch above Helm's default", kubeVersion: ">" + common.DefaultCapabilities.KubeVersion.Version + "-0", caps: common.DefaultCapabilities},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := chartFiles("web", "1.0.0")
			files["Chart.yaml"] = "apiVersion: v2\nname: web\nversion: 1.0.0\nkubeVersion: \"" + tt.kubeVersion + "\"\n"
			ch, err := loader.Load(loadTestChart(t, files))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := render(context.Background(), renderRequest{chart: ch, release: "rel", namespace: "ns", revision: 1, caps: tt.caps}); err != nil {
				t.Errorf("render: %v", err)
			}
		})
	}
}

// TestRenderSchemaWithUnknownValues: the plan checks the values schema even
// when some values are unknown (they hold references, which are text until
// the run), and reports only the errors that stand whatever those values
// turn out to be.
func TestRenderSchemaWithUnknownValues(t *testing.T) {
	files := chartFiles("web", "1.0.0")
	files["values.schema.json"] = `{
  "type": "object",
  "properties": {
    "replicas": {"type": "integer"},
    "image": {"type": "object", "required": ["repo"], "properties": {"tag": {"type": "string", "pattern": "^v"}}},
    "port": {"anyOf": [{"type": "integer"}, {"type": "string", "pattern": "^[0-9]+$"}]},
    "labels": {"type": "object", "additionalProperties": false, "properties": {"app": {"type": "string"}}},
    "zones": {"type": "array", "uniqueItems": true, "maxItems": 2},
    "mode": {"type": "string"}
  },
  "if": {"properties": {"mode": {"const": "ha"}}, "required": ["mode"]},
  "then": {"required": ["peers"]}
}`
	files["charts/sub/Chart.yaml"] = "apiVersion: v2\nname: sub\nversion: 0.1.0\n"
	files["charts/sub/values.schema.json"] = `{"type": "object", "properties": {"size": {"type": "integer"},
  "global": {"type": "object", "properties": {"replicas": {"type": "integer"}, "storageClass": {"enum": ["gp2", "gp3"]}}}}}`
	// Helm copies global into every dependency, theirs too.
	files["charts/sub/charts/leaf/Chart.yaml"] = "apiVersion: v2\nname: leaf\nversion: 0.1.0\n"
	files["charts/sub/charts/leaf/values.schema.json"] = `{"type": "object", "properties": {"global": {"properties": {"secure": {"type": "boolean"}}}}}`
	ch, err := loader.Load(loadTestChart(t, files))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		values map[string]any
		// errs are substrings of the error; none: no error.
		errs []string
	}{
		{
			name:   "a literal breaks the schema beside a reference",
			values: map[string]any{"replicas": "three", "image": map[string]any{"repo": "r", "tag": "${tag}"}},
			errs:   []string{"chart web", "schema", "at '/replicas': got string, want integer"},
		},
		{name: "a reference where a number is wanted", values: map[string]any{"replicas": "${n}"}},
		{name: "a reference where an object is wanted", values: map[string]any{"image": "${image}"}},
		{name: "a reference where a pattern is wanted", values: map[string]any{"image": map[string]any{"repo": "r", "tag": "${tag}"}}},
		{
			name:   "a key missing beside a reference",
			values: map[string]any{"image": map[string]any{"tag": "${tag}"}},
			errs:   []string{"at '/image': missing property 'repo'"},
		},
		{
			name:   "the known value of a mapping with a reference",
			values: map[string]any{"image": map[string]any{"repo": "r", "tag": "latest-${n}"}, "labels": map[string]any{"app": 3, "x": "${x}"}},
			errs:   []string{"at '/labels'", "additional properties 'x' not allowed", "at '/labels/app': got number, want string"},
		},
		{name: "anyOf: an alternative may match", values: map[string]any{"port": "${port}"}},
		{
			name:   "anyOf: no alternative matches",
			values: map[string]any{"port": true, "replicas": "${n}"},
			errs:   []string{"at '/port': 'anyOf' failed", "got boolean, want integer"},
		},
		{name: "uniqueItems over a reference", values: map[string]any{"zones": []any{"a", "${zone}"}}},
		{
			name:   "maxItems over a reference",
			values: map[string]any{"zones": []any{"a", "b", "${zone}"}},
			errs:   []string{"at '/zones': maxItems"},
		},
		{name: "then chosen by an if on unknown values", values: map[string]any{"mode": "${mode}"}},
		{
			name:   "then chosen by known values",
			values: map[string]any{"mode": "ha"},
			errs:   []string{"missing property 'peers'"},
		},
		{name: "a dependency's reference", values: map[string]any{"sub": map[string]any{"size": "${size}"}}},
		{
			name:   "a dependency's literal beside a reference",
			values: map[string]any{"sub": map[string]any{"size": "big"}, "replicas": "${n}"},
			errs:   []string{"sub:", "at '/size': got string, want integer"},
		},
		{
			name:   "global references a dependency's schema constrains",
			values: map[string]any{"global": map[string]any{"replicas": "${n}", "storageClass": "${sc}", "secure": "${secure}"}},
		},
		{name: "global as a whole a reference", values: map[string]any{"global": "${global}"}},
		{
			name:   "a global literal a dependency's dependency refuses beside global references",
			values: map[string]any{"global": map[string]any{"replicas": "${n}", "secure": "yes"}},
			errs:   []string{"leaf:", "at '/global/secure': got string, want boolean"},
		},
		{
			name:   "a dependency's global given under its name is known",
			values: map[string]any{"global": map[string]any{"replicas": "${n}"}, "sub": map[string]any{"global": map[string]any{"storageClass": "ssd"}}},
			errs:   []string{"sub:", "at '/global/storageClass': value must be one of"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render(context.Background(), renderRequest{chart: ch, values: tt.values, release: "rel", namespace: "ns",
				revision: 1, caps: common.DefaultCapabilities, plan: true, unknown: pathsHolding(tt.values, kubernetes.HasRef)})
			checkErr(t, err, tt.errs)
		})
	}
}

// checkErr fails the test unless err holds every one of errs, or, when
// errs is empty, err is nil.
func checkErr(t *testing.T, err error, errs []string) {
	t.Helper()
	if len(errs) == 0 {
		if err != nil {
			t.Fatalf("render: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatal("render: no error")
	}
	for _, s := range errs {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q\ndoes not hold %q", err, s)
		}
	}
}

// TestRenderSchemaRemoteRefs: the plan fetches no schema a chart's schema
// refers to by URL, whether or not values are unknown: what such a schema
// checks is left to prepare, where Helm fetches it; the rest of the
// schema is checked.
func TestRenderSchemaRemoteRefs(t *testing.T) {
	var gets atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		// Refuses everything, as the plan must not see.
		_, _ = w.Write([]byte(`{"definitions": {"port": false, "name": false}, "$defs": {"size": false}}`))
	}))
	defer srv.Close()
	files := chartFiles("web", "1.0.0")
	files["values.schema.json"] = `{
  "type": "object",
  "properties": {
    "replicas": {"type": "integer"},
    "port": {"$ref": "` + srv.URL + `/defs.json#/definitions/port"},
    "name": {"not": {"$ref": "` + srv.URL + `/defs.json#/definitions/name"}},
    "size": {"oneOf": [{"$ref": "` + srv.URL + `/other.json#/%24defs/size"}, {"type": "integer"}]},
    "tier": {"$ref": "` + srv.URL + `/anchors.json#tier"}
  }
}`
	ch, err := loader.Load(loadTestChart(t, files))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		values map[string]any
		errs   []string
	}{
		{name: "no value unknown", values: map[string]any{"port": 80, "name": "a", "size": 3, "tier": "x"}},
		{name: "a reference", values: map[string]any{"port": "${port}", "replicas": 2}},
		{
			name:   "a literal the local part refuses",
			values: map[string]any{"port": 80, "replicas": "three"},
			errs:   []string{"at '/replicas': got string, want integer"},
		},
		{
			name:   "a literal the local part refuses beside a reference",
			values: map[string]any{"port": "${port}", "replicas": "three"},
			errs:   []string{"at '/replicas': got string, want integer"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := render(context.Background(), renderRequest{chart: ch, values: tt.values, release: "rel", namespace: "ns",
				revision: 1, caps: common.DefaultCapabilities, plan: true, unknown: pathsHolding(tt.values, kubernetes.HasRef)})
			checkErr(t, err, tt.errs)
		})
	}
	if n := gets.Load(); n != 0 {
		t.Errorf("the plan fetched %d schemas", n)
	}
}

// TestRenderSchemaPanic: a panic while the plan checks the values schema
// (here in a URN resolver, which Helm's SDK lets a program set) is an
// error of the chart, as in Helm's own check, not a crash of gantry.
func TestRenderSchemaPanic(t *testing.T) {
	saved := cutil.URNResolver
	t.Cleanup(func() { cutil.URNResolver = saved })
	cutil.URNResolver = func(string) (any, error) { panic("resolver broke") }
	files := chartFiles("web", "1.0.0")
	files["values.schema.json"] = `{"properties": {"port": {"$ref": "urn:example:port"}}}`
	ch, err := loader.Load(loadTestChart(t, files))
	if err != nil {
		t.Fatal(err)
	}
	_, err = render(context.Background(), renderRequest{chart: ch, values: map[string]any{"port": 80}, release: "rel", namespace: "ns",
		revision: 1, caps: common.DefaultCapabilities, plan: true})
	checkErr(t, err, []string{"chart web", "unable to validate schema: resolver broke"})
}
