package kubernetes

import (
	"errors"
	"fmt"
	"github.com/gantry-dev/gantry/internal/params"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// writeFiles writes files (path → content) under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// loaded is an object as tests compare it.
type loaded struct {
	Ref, Source string
	CRD         bool
}

func summarizeObjects(objs []*object) []loaded {
	out := make([]loaded, 0, len(objs))
	for _, o := range objs {
		out = append(out, loaded{Ref: o.ref(), Source: o.source, CRD: o.crd})
	}
	return out
}

// vars expands ${name} from a map, and fails on ${fail}: a stand-in for
// the parameter expansion the runner passes.
func vars(m map[string]string) expandFunc {
	return func(s string) (string, error) {
		var b strings.Builder
		for {
			i := strings.Index(s, "${")
			if i < 0 {
				b.WriteString(s)
				return b.String(), nil
			}
			j := strings.Index(s[i:], "}")
			if j < 0 {
				return "", errors.New("unclosed ${")
			}
			name := s[i+2 : i+j]
			v, ok := m[name]
			if !ok {
				return "", fmt.Errorf("parameter %q is not defined", name)
			}
			b.WriteString(s[:i] + v)
			s = s[i+j+1:]
		}
	}
}

const configMap = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n"

func TestLoadFiles(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		cfg   config
		want  []loaded
	}{
		{
			name: "a folder's manifest files sorted by name, not its sub-folders or other files",
			files: map[string]string{
				"deploy/b.yml":          fmt.Sprintf(configMap, "b"),
				"deploy/a.yaml":         fmt.Sprintf(configMap, "a"),
				"deploy/c.json":         `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}`,
				"deploy/D.YAML":         fmt.Sprintf(configMap, "d"),
				"deploy/notes.txt":      "not a manifest",
				"deploy/sub/deep.yaml":  fmt.Sprintf(configMap, "deep"),
				"deploy/kustomize.yaml": fmt.Sprintf(configMap, "k"),
			},
			cfg: config{Manifests: []string{"deploy"}},
			want: []loaded{
				{Ref: "ConfigMap/d", Source: "deploy/D.YAML:1:1"},
				{Ref: "ConfigMap/a", Source: "deploy/a.yaml:1:1"},
				{Ref: "ConfigMap/b", Source: "deploy/b.yml:1:1"},
				{Ref: "ConfigMap/c", Source: "deploy/c.json:1:1"},
				{Ref: "ConfigMap/k", Source: "deploy/kustomize.yaml:1:1"},
			},
		},
		{
			name: "files in the order listed, any extension when named",
			files: map[string]string{
				"z.yaml":    fmt.Sprintf(configMap, "z"),
				"a.txt":     fmt.Sprintf(configMap, "a"),
				"dir/m.yml": fmt.Sprintf(configMap, "m"),
			},
			cfg: config{Manifests: []string{"z.yaml", "a.txt", "dir"}},
			want: []loaded{
				{Ref: "ConfigMap/z", Source: "z.yaml:1:1"},
				{Ref: "ConfigMap/a", Source: "a.txt:1:1"},
				{Ref: "ConfigMap/m", Source: "dir/m.yml:1:1"},
			},
		},
		{
			name: "multi-document files, empty documents and comments skipped, positions of each document",
			files: map[string]string{"app.yaml": "# leading comment\n---\n" + fmt.Sprintf(configMap, "one") +
				"---\n---\n# only a comment\n---\n\n" + fmt.Sprintf(configMap, "two") + "...\n---\nnull\n---\n" +
				"apiVersion: v1\nkind: Secret\nmetadata: {name: three, namespace: web}\n"},
			cfg: config{Manifests: []string{"app.yaml"}},
			want: []loaded{
				{Ref: "ConfigMap/one", Source: "app.yaml:3:1"},
				{Ref: "ConfigMap/two", Source: "app.yaml:12:1"},
				{Ref: "Secret/web/three", Source: "app.yaml:20:1"},
			},
		},
		{
			name: "List items are objects, each where it starts",
			files: map[string]string{"list.yaml": "apiVersion: v1\nkind: List\nitems:\n" +
				"- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n" +
				"- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: b, namespace: web}\n"},
			cfg: config{Manifests: []string{"list.yaml"}},
			want: []loaded{
				{Ref: "ConfigMap/a", Source: "list.yaml:4:3"},
				{Ref: "Deployment/web/b", Source: "list.yaml:7:3"},
			},
		},
		{
			name: "a typed list's items, their kind and apiVersion from the list's",
			files: map[string]string{"list.yaml": "apiVersion: v1\nkind: ConfigMapList\nitems:\n" +
				"- metadata: {name: a}\n  data: {k: v}\n" +
				"- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b, namespace: web}\n"},
			cfg: config{Manifests: []string{"list.yaml"}},
			want: []loaded{
				{Ref: "ConfigMap/a", Source: "list.yaml:4:3"},
				{Ref: "ConfigMap/web/b", Source: "list.yaml:6:3"},
			},
		},
		{
			name:  "empty List",
			files: map[string]string{"list.yaml": "apiVersion: v1\nkind: List\nitems: []\n"},
			cfg:   config{Manifests: []string{"list.yaml"}},
			want:  []loaded{},
		},
		{
			name:  "JSON indented with tabs",
			files: map[string]string{"app.json": "{\n\t\"apiVersion\": \"v1\",\n\t\"kind\": \"ConfigMap\",\n\t\"metadata\": {\n\t\t\"name\": \"tabs\"\n\t},\n\t\"data\": {\"n\": \"1\"}\n}\n"},
			cfg:   config{Manifests: []string{"app.json"}},
			want:  []loaded{{Ref: "ConfigMap/tabs", Source: "app.json:1:1"}},
		},
		{
			name: "the crds folder by default, first and marked; CRDs in the manifests marked too",
			files: map[string]string{
				"crds/crontab.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: crontabs.example.org}\n",
				"app.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: backups.example.org}\n---\n" +
					"apiVersion: example.org/v1\nkind: CronTab\nmetadata: {name: tab}\n",
			},
			cfg: config{Manifests: []string{"app.yaml"}},
			want: []loaded{
				{Ref: "CustomResourceDefinition/crontabs.example.org", Source: "crds/crontab.yaml:1:1", CRD: true},
				{Ref: "CustomResourceDefinition/backups.example.org", Source: "app.yaml:1:1", CRD: true},
				{Ref: "CronTab/tab", Source: "app.yaml:5:1"},
			},
		},
		{
			name: "a configured CRDs folder alone",
			files: map[string]string{
				"defs/a.yaml": "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.example.org}\n",
				"crds/x.yaml": "not read: the configured folder replaces the default",
			},
			cfg:  config{CRDs: "defs"},
			want: []loaded{{Ref: "CustomResourceDefinition/a.example.org", Source: "defs/a.yaml:1:1", CRD: true}},
		},
		{
			name: "same name in other kinds, groups and namespaces is no duplicate",
			files: map[string]string{"app.yaml": fmt.Sprintf(configMap, "x") + "---\n" +
				"apiVersion: v1\nkind: Secret\nmetadata: {name: x}\n---\n" +
				"apiVersion: example.org/v1\nkind: ConfigMap\nmetadata: {name: x}\n---\n" +
				"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: other}\n"},
			cfg: config{Manifests: []string{"app.yaml"}},
			want: []loaded{
				{Ref: "ConfigMap/x", Source: "app.yaml:1:1"},
				{Ref: "Secret/x", Source: "app.yaml:6:1"},
				{Ref: "ConfigMap/x", Source: "app.yaml:10:1"},
				{Ref: "ConfigMap/other/x", Source: "app.yaml:14:1"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			objs, err := load(dir, tt.cfg, nil)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			if diff := cmp.Diff(tt.want, summarizeObjects(objs)); diff != "" {
				t.Errorf("objects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		cfg   config
		// errs are substrings of the error, each on a line of its own.
		errs []string
	}{
		{
			name:  "missing fields, all reported, positioned",
			files: map[string]string{"a.yaml": "kind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nmetadata: {name: b}\n", "b.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {}\n"},
			cfg:   config{Manifests: []string{"a.yaml", "b.yaml"}},
			errs: []string{
				"a.yaml:1:1: ConfigMap missing apiVersion; every object needs apiVersion, kind and metadata.name",
				"a.yaml:4:1: missing kind",
				"b.yaml:1:1: Secret missing metadata.name",
			},
		},
		{
			name:  "fields of the wrong type",
			files: map[string]string{"a.yaml": "apiVersion: 1\nkind: ConfigMap\nmetadata: {name: [a]}\n---\napiVersion: v1\nkind: Secret\nmetadata: name\n"},
			cfg:   config{Manifests: []string{"a.yaml"}},
			errs: []string{
				"a.yaml:1:1: ConfigMap apiVersion must be a non-empty string; got the number 1",
				"a.yaml:1:1: ConfigMap metadata.name must be a non-empty string; got a list",
				"a.yaml:5:1: Secret metadata must be a mapping",
			},
		},
		{
			name:  "bad apiVersion",
			files: map[string]string{"a.yaml": "apiVersion: a/b/c\nkind: ConfigMap\nmetadata: {name: a}\n"},
			cfg:   config{Manifests: []string{"a.yaml"}},
			errs:  []string{`a.yaml:1:1: ConfigMap apiVersion "a/b/c" is not group/version or version`},
		},
		{
			name:  "annotation and label values must be strings",
			files: map[string]string{"a.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  annotations: {helm.sh/hook-weight: 5}\n  labels: {on: true}\n"},
			cfg:   config{Manifests: []string{"a.yaml"}},
			errs: []string{
				"a.yaml:1:1: Job metadata.annotations.helm.sh/hook-weight: values must be strings (quote it); got the number 5",
				"a.yaml:1:1: Job metadata.labels.on: values must be strings (quote it); got the boolean true",
			},
		},
		{
			name: "duplicates across files name both places",
			files: map[string]string{
				"a.yaml": fmt.Sprintf(configMap, "x"),
				"b.yaml": "# x again\n" + fmt.Sprintf(configMap, "x"),
			},
			cfg:  config{Manifests: []string{"a.yaml", "b.yaml"}},
			errs: []string{"b.yaml:2:1: ConfigMap/x is defined twice: also at a.yaml:1:1"},
		},
		{
			name:  "duplicate across versions of one group",
			files: map[string]string{"a.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n---\napiVersion: apps/v1beta1\nkind: Deployment\nmetadata: {name: x}\n"},
			cfg:   config{Manifests: []string{"a.yaml"}},
			errs:  []string{"a.yaml:5:1: Deployment/x is defined twice: also at a.yaml:1:1"},
		},
		{
			name:  "annotations are validated",
			files: map[string]string{"app.yaml": "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  annotations: {helm.sh/hook-weight: x, helm.sh/hook: pre-instal}\n"},
			cfg:   config{Manifests: []string{"app.yaml"}},
			errs: []string{
				`app.yaml:5:55: Job/migrate: annotation helm.sh/hook: unknown hook event "pre-instal"`,
				`app.yaml:5:38: Job/migrate: annotation helm.sh/hook-weight: "x" is not an integer`,
			},
		},
		{
			name:  "syntax error, after the documents before it",
			files: map[string]string{"a.yaml": fmt.Sprintf(configMap, "ok") + "---\napiVersion: v1\nkind: [\n"},
			cfg:   config{Manifests: []string{"a.yaml"}},
			errs:  []string{"a.yaml:7: did not find expected node content"},
		},
		{
			name:  "an error without a line",
			files: map[string]string{"a.yaml": "apiVersion: v1\x00\n"},
			cfg:   config{Manifests: []string{"a.yaml"}},
			errs:  []string{"a.yaml: control characters are not allowed"},
		},
		{
			name:  "a document that is not a mapping",
			files: map[string]string{"a.yaml": "- a\n- b\n---\nhello\n"},
			cfg:   config{Manifests: []string{"a.yaml"}},
			errs: []string{
				"a.yaml:1:1: a manifest document must be a mapping (one object); got a list",
				`a.yaml:4:1: a manifest document must be a mapping (one object); got the string "hello"`,
			},
		},
		{
			name:  "List items that are not objects",
			files: map[string]string{"a.yaml": "apiVersion: v1\nkind: List\nitems:\n- 3\n---\napiVersion: v1\nkind: List\nitems: {a: b}\n"},
			cfg:   config{Manifests: []string{"a.yaml"}},
			errs: []string{
				"a.yaml:4:3: a List item must be a mapping (one object); got the number 3",
				"a.yaml:6:1: List: items must be a list of objects; got a mapping",
			},
		},
		{
			name:  "duplicate mapping keys",
			files: map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  k: 1\n  k: 2\n"},
			cfg:   config{Manifests: []string{"a.yaml"}},
			errs:  []string{`a.yaml:6:3: mapping key "k" is defined twice`},
		},
		{
			name:  "a mapping as a key",
			files: map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  ? {x: y}\n  : v\n"},
			cfg:   config{Manifests: []string{"a.yaml"}},
			errs:  []string{"a.yaml:5:5: a mapping key must be a string, not a mapping or a list"},
		},
		{
			name:  "numbers JSON cannot hold",
			files: map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nx: .inf\n"},
			cfg:   config{Manifests: []string{"a.yaml"}},
			errs:  []string{"a.yaml:4:4: .inf is not a number JSON can hold"},
		},
		{
			name:  "a tag that does not fit",
			files: map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nx: !!int abc\n"},
			cfg:   config{Manifests: []string{"a.yaml"}},
			errs:  []string{"a.yaml:4:4: cannot decode !!str `abc` as a !!int"},
		},
		{
			name:  "an alias inside its own anchor",
			files: map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nx: &x [a, *x]\n"},
			cfg:   config{Manifests: []string{"a.yaml"}},
			errs:  []string{"a.yaml:4:"},
		},
		{
			name:  "a missing manifest",
			cfg:   config{Manifests: []string{"nope.yaml", "gone"}},
			errs:  []string{"manifests: nope.yaml: not found", "manifests: gone: not found"},
			files: map[string]string{},
		},
		{
			name:  "an empty folder",
			files: map[string]string{"deploy/readme.md": "no manifests"},
			cfg:   config{Manifests: []string{"deploy"}},
			errs:  []string{"manifests: deploy: the folder has no *.yaml, *.yml or *.json files"},
		},
		{
			name:  "a configured CRDs folder that is missing",
			files: map[string]string{},
			cfg:   config{CRDs: "defs"},
			errs:  []string{"crds: defs: not found"},
		},
		{
			name: "the CRDs folder holds CRDs only, and no hooks",
			files: map[string]string{
				"crds/a.yaml": fmt.Sprintf(configMap, "stray") + "---\n" +
					"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: x.example.org\n  annotations: {helm.sh/hook: pre-install}\n",
			},
			cfg: config{Manifests: []string{"crds/a.yaml"}, CRDs: "crds"},
			errs: []string{
				"crds/a.yaml:1:1: ConfigMap/stray: the CRDs folder holds only CustomResourceDefinitions",
				"crds/a.yaml:6:1: CustomResourceDefinition/x.example.org: a CRD of the CRDs folder is deployed before everything else and cannot be a hook",
			},
		},
		{
			name:  "a folder named as a file in a folder",
			files: map[string]string{"deploy/x.yaml/a.yaml": fmt.Sprintf(configMap, "a"), "deploy/b.yaml": fmt.Sprintf(configMap, "b")},
			cfg:   config{Manifests: []string{"deploy"}},
			errs:  nil, // sub-folders are skipped, whatever their names
		},
		{
			name: "a document nested too deep through aliases",
			files: map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\na: &a " +
				strings.Repeat("[", 6000) + "x" + strings.Repeat("]", 6000) + "\nb: " + strings.Repeat("[", 6000) + "*a" + strings.Repeat("]", 6000) + "\n"},
			cfg:  config{Manifests: []string{"a.yaml"}},
			errs: []string{"a.yaml:4:", "nested more than 10000 levels deep"},
		},
		{
			name:  "a document nested too deep",
			files: map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nx: " + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + "\n"},
			cfg:   config{Manifests: []string{"a.yaml"}},
			errs:  []string{"a.yaml", "exceeded max depth"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			objs, err := load(dir, tt.cfg, nil)
			if len(tt.errs) == 0 {
				if err != nil {
					t.Fatalf("load: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("load = %v, want errors", summarizeObjects(objs))
			}
			t.Logf("errors:\n%v", err)
			if objs != nil {
				t.Errorf("load returned objects with its errors: %v", summarizeObjects(objs))
			}
			for _, s := range tt.errs {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error\n%v\ndoes not contain %q", err, s)
				}
			}
		})
	}
}

func TestLoadRefusesNonRegularFiles(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs")
	}
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.yaml"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := load(dir, config{Manifests: []string{"."}}, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "pipe.yaml: is a named pipe (FIFO), not a regular file") {
			t.Errorf("load of a FIFO: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("load blocked on a FIFO")
	}
}

func TestLoadExpansion(t *testing.T) {
	params := map[string]string{
		"replicas": "3", "flag": "true", "tag": "3", "n": "3", "inject": "a: b", "list": "[1, 2]",
		"key": "color", "merge": "<<", "empty": "", "ratio": "1.5", "inf": ".inf", "date": "2024-01-01",
		"name": "web", "ns": "prod", "hex": "0x1F", "nul": "null",
	}
	// A kind of no schema's: a ConfigMap's data takes strings only
	// (TestLoadStringValues).
	manifest := `apiVersion: example.com/v1
kind: Settings
metadata:
  name: ${name}-config
  namespace: ${ns}
data:
  replicas: ${replicas}
  flag: ${flag}
  image: app:${tag}
  quoted: "${n}"
  single: '${n}'
  tagged: !!str ${n}
  inject: ${inject}
  list: ${list}
  ${key}: blue
  ${merge}: not a merge
  empty: ${empty}
  ratio: ${ratio}
  inf: ${inf}
  date: ${date}
  two: ${n}${n}
  hex: ${hex}
  nul: ${nul}
  block: |
    n=${n}
  anchored: &a ${replicas}
  aliased: *a
  untouched: 42
`
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"cm.yaml": manifest})
	objs, err := load(dir, config{Manifests: []string{"cm.yaml"}}, vars(params))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if len(objs) != 1 {
		t.Fatalf("%d objects", len(objs))
	}
	o := objs[0]
	if o.ref() != "Settings/prod/web-config" {
		t.Errorf("ref = %q", o.ref())
	}
	if o.planned != "Settings/${ns}/${name}-config" {
		t.Errorf("planned = %q, want the ref as written", o.planned)
	}
	want := map[string]any{
		"replicas": int64(3), "flag": true, "image": "app:3", "quoted": "3", "single": "3", "tagged": "3",
		"inject": "a: b", "list": "[1, 2]", "color": "blue", "<<": "not a merge", "empty": nil,
		"ratio": 1.5, "inf": ".inf", "date": "2024-01-01", "two": "33", "hex": int64(31), "nul": nil,
		"block": "n=3\n", "anchored": int64(3), "aliased": int64(3), "untouched": int64(42),
	}
	if diff := cmp.Diff(want, o.u.Object["data"]); diff != "" {
		t.Errorf("data (-want +got):\n%s", diff)
	}

	// Without expansion (plan time) the references stay as written.
	objs, err = load(dir, config{Manifests: []string{"cm.yaml"}}, nil)
	if err != nil {
		t.Fatalf("load without expansion: %v", err)
	}
	data := objs[0].u.Object["data"].(map[string]any)
	if data["replicas"] != "${replicas}" || data["image"] != "app:${tag}" || data["${key}"] != "blue" {
		t.Errorf("unexpanded data = %v", data)
	}
	if objs[0].planned != "" || objs[0].ref() != "Settings/${ns}/${name}-config" {
		t.Errorf("unexpanded ref = %q, planned %q", objs[0].ref(), objs[0].planned)
	}
}

func TestLoadExpansionErrors(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  x: ${missing}\n  ${other}: y\n",
		"b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  annotations: {note: \"${x\"}\n",
	})
	_, err := load(dir, config{Manifests: []string{"a.yaml", "b.yaml"}}, vars(nil))
	if err == nil {
		t.Fatal("no error")
	}
	for _, s := range []string{
		`a.yaml:5:6: parameter "missing" is not defined`,
		`a.yaml:6:3: parameter "other" is not defined`,
		"b.yaml:5:23: unclosed ${",
	} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error\n%v\ndoes not contain %q", err, s)
		}
	}
}

// An expanded value is never YAML: whatever it holds, the document keeps
// its shape.
func TestLoadExpansionCannotInject(t *testing.T) {
	for _, v := range []string{
		"x\nkind: Secret", "x\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: evil}", "{a: 1}", "*alias", "&anchor x",
		"!!binary aGk=", "- a", "# comment", "'", "\"", "]", "a: b\nc: d", "|\n  text",
	} {
		dir := t.TempDir()
		writeFiles(t, dir, map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  v: ${v}\n  q: \"${v}\"\n"})
		objs, err := load(dir, config{Manifests: []string{"a.yaml"}}, vars(map[string]string{"v": v}))
		if err != nil {
			t.Errorf("value %q: %v", v, err)
			continue
		}
		if len(objs) != 1 || objs[0].u.GetKind() != "ConfigMap" {
			t.Errorf("value %q changed the objects: %v", v, summarizeObjects(objs))
			continue
		}
		data := objs[0].u.Object["data"].(map[string]any)
		if data["v"] != v || data["q"] != v || len(data) != 2 {
			t.Errorf("value %q: data = %#v", v, data)
		}
	}
}

func TestLoadMergeKeys(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: a}
base: &base {x: 1, y: 1}
more: &more {y: 2, z: 2}
data:
  <<: [*base, *more]
  x: 0
`})
	objs, err := load(dir, config{Manifests: []string{"a.yaml"}}, nil)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	want := map[string]any{"x": int64(0), "y": int64(1), "z": int64(2)}
	if diff := cmp.Diff(want, objs[0].u.Object["data"]); diff != "" {
		t.Errorf("merged (-want +got):\n%s", diff)
	}
	writeFiles(t, dir, map[string]string{"b.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata:\n  <<: [1]\n"})
	if _, err := load(dir, config{Manifests: []string{"b.yaml"}}, nil); err == nil || !strings.Contains(err.Error(), "b.yaml:5:8: << merges mappings; got the number 1") {
		t.Errorf("merge of a number: %v", err)
	}
}

// A "billion laughs" document is an error, found quickly and in little
// memory, not gigabytes of expanded aliases.
func TestLoadAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\n")
	b.WriteString("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := 0; j < 9; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"bomb.yaml": b.String()})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	_, err := load(dir, config{Manifests: []string{"bomb.yaml"}}, vars(nil))
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "aliases expand to more than") {
		t.Fatalf("load of an alias bomb: %v", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("took %v", d)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<30 {
		t.Errorf("allocated %d MiB", alloc>>20)
	}
	// The budget is shared by the documents of a load: many small
	// expansions add up.
	b.Reset()
	for i := 0; i < 40; i++ {
		fmt.Fprintf(&b, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\nbig: &big [%s]\ncopies: [%s]\n---\n",
			i, strings.TrimSuffix(strings.Repeat("x, ", 1000), ", "), strings.TrimSuffix(strings.Repeat("*big, ", 30), ", "))
	}
	writeFiles(t, dir, map[string]string{"many.yaml": b.String()})
	if _, err := load(dir, config{Manifests: []string{"many.yaml"}}, nil); err == nil || !strings.Contains(err.Error(), "aliases expand to more than") {
		t.Errorf("load of many expansions: %v", err)
	}
	// Few nodes, much text: a 10 KB string repeated 300,000 times.
	long := strings.Repeat("x", 10_000)
	text := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: t}\nbig: &b " + long + "\nl1: &l1 [" + strings.Repeat("*b, ", 99) + "*b]\nl2: &l2 [" + strings.Repeat("*l1, ", 99) + "*l1]\nl3: [" + strings.Repeat("*l2, ", 29) + "*l2]\n"
	writeFiles(t, dir, map[string]string{"text.yaml": text})
	if _, err := load(dir, config{Manifests: []string{"text.yaml"}}, nil); err == nil || !strings.Contains(err.Error(), "MiB of text (an alias bomb?)") {
		t.Errorf("load of a text alias bomb: %v", err)
	}
}

func TestLoadObjectLimit(t *testing.T) {
	var b strings.Builder
	for i := 0; i <= maxObjects; i++ {
		fmt.Fprintf(&b, "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\n", i)
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.yaml": b.String(), "b.yaml": fmt.Sprintf(configMap, "after")})
	_, err := load(dir, config{Manifests: []string{"a.yaml", "b.yaml"}}, nil)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d objects", maxObjects)) {
		t.Fatalf("load: %v", err)
	}
	if n := strings.Count(err.Error(), "more than"); n != 1 {
		t.Errorf("the limit is reported %d times", n)
	}
}

func TestLoadKustomize(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"base/kustomization.yaml": "resources:\n- deployment.yaml\n- service.yaml\n",
		"base/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:${tag}
`,
		"base/service.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec: {selector: {app: web}, ports: [{port: 80}]}\n",
		"overlay/kustomization.yaml": `resources:
- ../base
namePrefix: prod-
configMapGenerator:
- name: settings
  literals:
  - color=blue
`,
	})
	objs, err := load(dir, config{Kustomize: "overlay"}, vars(map[string]string{"replicas": "2", "tag": "1.27"}))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	var refs, sources []string
	for _, o := range objs {
		refs = append(refs, o.ref())
		sources = append(sources, o.source)
	}
	if len(objs) != 3 {
		t.Fatalf("objects: %v", refs)
	}
	byKind := map[string]*object{}
	for _, o := range objs {
		byKind[o.u.GetKind()] = o
	}
	cm := byKind["ConfigMap"]
	if cm == nil || !strings.HasPrefix(cm.u.GetName(), "prod-settings-") || cm.u.Object["data"].(map[string]any)["color"] != "blue" {
		t.Errorf("generated ConfigMap: %v", cm)
	}
	dep := byKind["Deployment"]
	if dep == nil || dep.u.GetName() != "prod-web" {
		t.Fatalf("Deployment: %v", refs)
	}
	if r, _, _ := unstructuredInt(dep.u.Object, "spec", "replicas"); r != 2 {
		t.Errorf("replicas = %v, want the number 2", dep.u.Object["spec"].(map[string]any)["replicas"])
	}
	if byKind["Service"] == nil || byKind["Service"].u.GetName() != "prod-web" {
		t.Errorf("Service: %v", refs)
	}
	for i, s := range sources {
		if want := fmt.Sprintf("kustomize overlay (document %d)", i+1); s != want {
			t.Errorf("source %d = %q, want %q", i, s, want)
		}
	}

	// Expansion errors point into the build's documents.
	_, err = load(dir, config{Kustomize: "overlay"}, vars(map[string]string{"replicas": "2"}))
	if err == nil || !strings.Contains(err.Error(), `kustomize overlay (document`) || !strings.Contains(err.Error(), `parameter "tag" is not defined`) {
		t.Errorf("expansion error: %v", err)
	}
}

// unstructuredInt reads an int64 at a path of nested maps.
func unstructuredInt(m map[string]any, path ...string) (int64, bool, error) {
	var x any = m
	for _, p := range path {
		mm, ok := x.(map[string]any)
		if !ok {
			return 0, false, nil
		}
		x = mm[p]
	}
	n, ok := x.(int64)
	return n, ok, nil
}

func TestLoadKustomizeErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		errs  []string
	}{
		{
			name:  "no kustomization",
			files: map[string]string{"k/readme.md": "x"},
			errs:  []string{"kustomize k: k has no kustomization.yaml, kustomization.yml or Kustomization"},
		},
		{
			name: "not a folder",
			errs: []string{"kustomize k: k is not a folder"},
		},
		{
			name:  "a build error names the folder",
			files: map[string]string{"k/kustomization.yaml": "resources:\n- missing.yaml\n"},
			errs:  []string{"kustomize k: ", "missing.yaml"},
		},
		{
			name:  "a remote git base",
			files: map[string]string{"k/kustomization.yaml": "resources:\n- github.com/org/repo//deploy?ref=v1\n"},
			errs:  []string{`kustomize k: k/kustomization.yaml: resources: "github.com/org/repo//deploy?ref=v1" is remote; gantry builds kustomizations from local files only`},
		},
		{
			name:  "a remote file",
			files: map[string]string{"k/kustomization.yml": "resources:\n- https://example.org/app.yaml\n"},
			errs:  []string{`k/kustomization.yml: resources: "https://example.org/app.yaml" is remote`},
		},
		{
			name:  "an scp-style base",
			files: map[string]string{"k/Kustomization": "components:\n- git@github.com:org/repo.git\n"},
			errs:  []string{`k/Kustomization: components: "git@github.com:org/repo.git" is remote`},
		},
		{
			name: "a remote base of a local base",
			files: map[string]string{
				"k/kustomization.yaml":    "resources:\n- ../base\n",
				"base/kustomization.yaml": "resources:\n- ssh://git@example.org/repo.git\n",
			},
			errs: []string{`kustomize k: base/kustomization.yaml: resources: "ssh://git@example.org/repo.git" is remote`},
		},
		{
			name:  "a remote patch",
			files: map[string]string{"k/kustomization.yaml": "patches:\n- path: https://example.org/patch.yaml\n"},
			errs:  []string{`patches: "https://example.org/patch.yaml" is remote`},
		},
		{
			name:  "a remote generator file",
			files: map[string]string{"k/kustomization.yaml": "configMapGenerator:\n- name: c\n  files:\n  - conf=https://example.org/c.conf\n"},
			errs:  []string{`configMapGenerator: "https://example.org/c.conf" is remote`},
		},
		{
			name:  "helm charts are not inflated",
			files: map[string]string{"k/kustomization.yaml": "helmCharts:\n- name: nginx\n  repo: https://charts.example.org\n"},
			errs:  []string{"kustomize k: k/kustomization.yaml: helmCharts: gantry does not inflate Helm charts in a kustomization; deploy the chart with the helm plugin"},
		},
		{
			name:  "a build error is one line",
			files: map[string]string{"k/kustomization.yaml": "patches: [{path: nothere.yaml}]\n"},
			errs:  []string{"kustomize k: trouble configuring builtin PatchTransformer: failed to get the patch file from path(nothere.yaml)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			_, err := load(dir, config{Kustomize: "k"}, nil)
			if err == nil {
				t.Fatal("no error")
			}
			t.Logf("errors:\n%v", err)
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("one error of one line wanted:\n%v", err)
			}
			for _, s := range tt.errs {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error\n%v\ndoes not contain %q", err, s)
				}
			}
		})
	}
}

func TestSingleRef(t *testing.T) {
	tests := map[string]bool{
		"${a}": true, "#{a + 1}": true, "#{ {'a': 1}['a'] }": true, "${a/base64}": true,
		"${a}${b}": false, "x${a}": false, "${a}x": false, "${a} ${b}": false, "#{a}-#{b}": false,
		"${a}}": false, "${": false, "${}x": false, "plain": false, "{a}": false,
	}
	for s, want := range tests {
		if got := singleRef(s); got != want {
			t.Errorf("singleRef(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestPlainTag(t *testing.T) {
	tests := map[string]string{
		"3": "!!int", "-7": "!!int", "0x1F": "!!int", "1.5": "!!float", "1e3": "!!float",
		"true": "!!bool", "False": "!!bool", "": "!!null", "~": "!!null", "null": "!!null",
		".inf": "!!str", ".nan": "!!str", "<<": "!!str", "2024-01-01": "!!str", "yes": "!!str",
		"a: b": "!!str", "[1]": "!!str", "web": "!!str",
	}
	for s, want := range tests {
		if got := plainTag(s); got != want {
			t.Errorf("plainTag(%q) = %q, want %q", s, got, want)
		}
	}
}

// FuzzLoad feeds random bytes to load as a manifest file: it must not
// panic, and must return (the alias budget and the bounds keep memory and
// time bounded).
func FuzzLoad(f *testing.F) {
	for _, seed := range []string{
		fmt.Sprintf(configMap, "a"),
		"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n",
		"a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${n}}\ndata: {${k}: ${v}, <<: {x: 1}}\n",
		"---\n---\n...\n",
		"{\"apiVersion\": \"v1\", \"kind\": \"Secret\", \"metadata\": {\"name\": \"s\", \"annotations\": {\"helm.sh/hook\": \"pre-install\"}}}",
		"x: &x [*x]\n",
		"? [a]\n: b\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations: {werf.io/weight: x, a.external-dependency.werf.io/resource: b}\n",
	} {
		f.Add([]byte(seed))
	}
	expand := func(s string) (string, error) {
		if strings.Contains(s, "${fail}") {
			return "", errors.New("fail")
		}
		return strings.ReplaceAll(strings.ReplaceAll(s, "${", "<"), "#{", "<"), nil
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "m.yaml"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, e := range []expandFunc{nil, expand} {
			objs, err := load(dir, config{Manifests: []string{"m.yaml"}}, e)
			if err != nil && objs != nil {
				t.Fatal("objects returned with errors")
			}
			for _, o := range objs {
				if o.u.GetKind() == "" || o.u.GetName() == "" || o.u.GetAPIVersion() == "" {
					t.Fatalf("object without identity: %v", o.u.Object)
				}
				_ = o.validate()
				_ = deployStages(objs, false, false)
			}
		}
	})
}

// TestLoadKustomizeKeepsQuotedStrings: a resource's "${port}" in quotes
// stays a string once expanded, as it does outside kustomize, although
// the build's output writes it plain; a plain ${replicas} takes YAML's
// type; one written both ways takes it too (the output cannot tell them
// apart), but in a ConfigMap's data, which takes strings only.
func TestLoadKustomizeKeepsQuotedStrings(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"kustomization.yaml": "resources:\n- cm.yaml\n- deployment.yaml\n",
		"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n" +
			"data:\n  port: \"${port}\"\n  single: '${port}'\n  both: \"${n}\"\n",
		"deployment.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n" +
			"spec:\n  replicas: ${replicas}\n  minReadySeconds: ${n}\n  selector: {matchLabels: {app: web}}\n" +
			"  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers: [{name: web, image: nginx}]\n",
	})
	objs, err := load(dir, config{Kustomize: "."}, vars(map[string]string{"port": "8080", "replicas": "2", "n": "5"}))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	byKind := map[string]*object{}
	for _, o := range objs {
		byKind[o.u.GetKind()] = o
	}
	want := map[string]any{"port": "8080", "single": "8080", "both": "5"}
	if diff := cmp.Diff(want, byKind["ConfigMap"].u.Object["data"]); diff != "" {
		t.Errorf("ConfigMap data (-want +got):\n%s", diff)
	}
	spec := byKind["Deployment"].u.Object["spec"].(map[string]any)
	if spec["replicas"] != int64(2) || spec["minReadySeconds"] != int64(5) {
		t.Errorf("replicas %#v, minReadySeconds %#v: want the numbers 2 and 5", spec["replicas"], spec["minReadySeconds"])
	}
}

// TestLoadStringValues: a reference alone in a ConfigMap's or Secret's
// data, stringData or binaryData stays a string once expanded, however it
// is written; elsewhere in them, and in other objects, it takes YAML's
// type.
func TestLoadStringValues(t *testing.T) {
	manifest := `apiVersion: v1
kind: ConfigMap
metadata: {name: c, annotations: {n: "${n}"}}
data:
  port: ${n}
  flag: ${flag}
---
apiVersion: v1
kind: Secret
metadata: {name: s}
stringData:
  port: ${n}
---
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: in-list}
  data:
    port: ${n}
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: d
    labels:
      n: ${n}
  spec:
    replicas: ${n}
    template:
      spec:
        containers:
        - name: c
          image: x
          env:
          - name: N
            value: ${n}
          ports:
          - containerPort: ${n}
`
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"m.yaml": manifest})
	objs, err := load(dir, config{Manifests: []string{"m.yaml"}}, vars(map[string]string{"n": "3", "flag": "true"}))
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	got := map[string]any{}
	for _, o := range objs {
		for _, field := range []string{"data", "stringData", "spec"} {
			if m, ok := o.u.Object[field].(map[string]any); ok {
				got[o.u.GetName()+"."+field] = m
			}
		}
	}
	want := map[string]any{
		"c.data":       map[string]any{"port": "3", "flag": "true"},
		"s.stringData": map[string]any{"port": "3"},
		"in-list.data": map[string]any{"port": "3"},
		"d.spec": map[string]any{"replicas": int64(3), "template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "c", "image": "x", "env": []any{map[string]any{"name": "N", "value": "3"}}, "ports": []any{map[string]any{"containerPort": int64(3)}}},
		}}}},
	}
	for _, o := range objs {
		if o.u.GetName() == "d" && o.u.GetLabels()["n"] != "3" {
			t.Errorf("label n = %#v, want the string 3", o.u.Object["metadata"])
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// An expansion error in a Secret's values says what is wrong without the
// value under a caret; elsewhere the caret stays, as it helps.
func TestLoadExpansionErrorsHideSecretValues(t *testing.T) {
	parse := func(s string) (string, error) {
		tm, err := params.Parse(s)
		if err == nil {
			err = tm.Check()
		}
		return s, err
	}
	for _, tc := range []struct {
		name, doc string
		want      string // in the error
		secret    bool   // the value must not be in it
	}{
		{"secret stringData", "kind: Secret\nmetadata: {name: s}\nstringData: {pw: \"S3cretText${db\"}\n", "m.yaml:4:18: ", true},
		{"secret data", "kind: Secret\nmetadata: {name: s}\ndata:\n  pw: \"S3cretText${db\"\n", "m.yaml:5:7: ", true},
		{"secret in a list", "kind: List\nitems:\n- kind: Secret\n  apiVersion: v1\n  metadata: {name: s}\n  stringData: {pw: \"S3cretText${db\"}\n", "m.yaml:7:20: ", true},
		{"configmap", "kind: ConfigMap\nmetadata: {name: c}\ndata: {pw: \"S3cretText${db\"}\n", "S3cretText", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"m.yaml": "apiVersion: v1\n" + tc.doc})
			_, err := load(dir, config{Manifests: []string{"m.yaml"}}, parse)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if tc.secret && strings.Contains(err.Error(), "S3cret") {
				t.Errorf("error %q shows the Secret's value", err)
			}
		})
	}
}
