package helm

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"

	"github.com/gantry-dev/gantry/internal/plugin/kubernetes"
)

func TestParseConfig(t *testing.T) {
	def := kubernetes.DefaultTimeout
	tests := []struct {
		name string
		in   any
		// yaml, when given, is decoded into in (as go.yaml.in/yaml/v3 types
		// its scalars).
		yaml string
		want config
	}{
		{name: "nil", in: nil, want: config{Timeout: def}},
		{name: "empty mapping", in: map[string]any{}, want: config{Timeout: def}},
		{
			name: "every field",
			in: map[string]any{
				"chart": "./chart", "repo": "https://charts.example.com", "version": "1.2.3",
				"release": "web", "namespace": "apps", "values": []any{"values.yaml", "./env/values-prod.yaml"},
				"set":        map[string]any{"replicaCount": "${replicas}", "image": map[string]any{"tag": "v1"}},
				"kubeconfig": "/home/me/.kube/config", "context": "kind-dev", "timeout": int64(90),
			},
			want: config{
				Chart: "./chart", Repo: "https://charts.example.com", Version: "1.2.3", Release: "web", Namespace: "apps",
				Values:     []string{"values.yaml", "env/values-prod.yaml"},
				Set:        map[string]any{"replicaCount": "${replicas}", "image": map[string]any{"tag": "v1"}},
				Kubeconfig: "/home/me/.kube/config", Context: "kind-dev", Timeout: 90 * time.Second,
			},
		},
		{
			name: "every field from YAML",
			yaml: `
chart: nginx
repo: https://charts.example.com
version: 1.2
release: web
namespace: apps
values: [values.yaml, values-prod.yaml]
set: {replicaCount: 3, image: {tag: "${tag}"}, hosts: [a, b]}
kubeconfig: kube.yaml
context: prod
timeout: 2m
`,
			want: config{
				Chart: "nginx", Repo: "https://charts.example.com", Version: "1.2", Release: "web", Namespace: "apps",
				Values:     []string{"values.yaml", "values-prod.yaml"},
				Set:        map[string]any{"replicaCount": 3, "image": map[string]any{"tag": "${tag}"}, "hosts": []any{"a", "b"}},
				Kubeconfig: "kube.yaml", Context: "prod", Timeout: 2 * time.Minute,
			},
		},
		{name: "version an int", in: map[string]any{"version": int64(2)}, want: config{Version: "2", Timeout: def}},
		{name: "version a YAML int", yaml: "version: 3", want: config{Version: "3", Timeout: def}},
		{name: "version a float", in: map[string]any{"version": 1.5}, want: config{Version: "1.5", Timeout: def}},
		{name: "version a uint64", in: map[string]any{"version": uint64(7)}, want: config{Version: "7", Timeout: def}},
		{name: "version a range", in: map[string]any{"version": "~1.2"}, want: config{Version: "~1.2", Timeout: def}},
		{name: "release a boolean", in: map[string]any{"release": true}, want: config{Release: "true", Timeout: def}},
		{name: "values one string", in: map[string]any{"values": "values-prod.yaml"}, want: config{Values: []string{"values-prod.yaml"}, Timeout: def}},
		{name: "values cleaned", in: map[string]any{"values": "env/../values.yaml"}, want: config{Values: []string{"values.yaml"}, Timeout: def}},
		{name: "values empty list: no files", in: map[string]any{"values": []any{}}, want: config{Values: []string{}, Timeout: def}},
		{name: "set empty", in: map[string]any{"set": map[string]any{}}, want: config{Set: map[string]any{}, Timeout: def}},
		{name: "timeout int", in: map[string]any{"timeout": 30}, want: config{Timeout: 30 * time.Second}},
		{name: "timeout int64", in: map[string]any{"timeout": int64(30)}, want: config{Timeout: 30 * time.Second}},
		{name: "timeout float", in: map[string]any{"timeout": 1.5}, want: config{Timeout: 1500 * time.Millisecond}},
		{name: "timeout seconds string", in: map[string]any{"timeout": "45"}, want: config{Timeout: 45 * time.Second}},
		{name: "timeout duration", in: map[string]any{"timeout": "2m30s"}, want: config{Timeout: 150 * time.Second}},
		{name: "timeout YAML duration", yaml: "timeout: 90s", want: config{Timeout: 90 * time.Second}},
		{name: "timeout YAML number", yaml: "timeout: 600", want: config{Timeout: 10 * time.Minute}},
		{name: "timeout reference left at default", in: map[string]any{"timeout": "${timeout}"}, want: config{Timeout: def}},
		{name: "timeout reference in text", in: map[string]any{"timeout": "${secs}s"}, want: config{Timeout: def}},
		{
			name: "timeout expression left at default", in: map[string]any{"timeout": "#{secs * 2}"}, want: config{Timeout: def},
		},
		{name: "chart the component folder", in: map[string]any{"chart": "."}, want: config{Chart: ".", Timeout: def}},
		{name: "chart a package", in: map[string]any{"chart": "charts/web-1.0.0.tgz"}, want: config{Chart: "charts/web-1.0.0.tgz", Timeout: def}},
		{name: "chart repo/name", in: map[string]any{"chart": "bitnami/nginx"}, want: config{Chart: "bitnami/nginx", Timeout: def}},
		{name: "chart a reference", in: map[string]any{"chart": "${chart}"}, want: config{Chart: "${chart}", Timeout: def}},
		{name: "chart an expression", in: map[string]any{"chart": "#{chart}"}, want: config{Chart: "#{chart}", Timeout: def}},
		{
			// A chart named in a repository is no path: it is not checked as one.
			name: "chart with a repo",
			in:   map[string]any{"chart": "../web", "repo": "https://charts.example.com"},
			want: config{Chart: "../web", Repo: "https://charts.example.com", Timeout: def},
		},
		{
			name: "references left for the run",
			in:   map[string]any{"namespace": "${ns}", "release": "${name}-web", "context": "#{ctx}", "version": "${v}"},
			want: config{Namespace: "${ns}", Release: "${name}-web", Context: "#{ctx}", Version: "${v}", Timeout: def},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			if tt.yaml != "" {
				if err := yaml.Unmarshal([]byte(tt.yaml), &in); err != nil {
					t.Fatal(err)
				}
			}
			got, err := parseConfig(in)
			if err != nil {
				t.Fatalf("parseConfig: %v", err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("parseConfig (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		in   any
		// errs are substrings the error must hold; problems, when not 0, the
		// number of problems (lines) it reports.
		errs     []string
		problems int
	}{
		{name: "not a mapping", in: []any{"chart"}, errs: []string{"config must be a mapping with chart, repo, version"}},
		{name: "a string", in: "./chart", errs: []string{"config must be a mapping", "string"}},
		{
			name: "unknown field with suggestion",
			in:   map[string]any{"chrat": "./chart"},
			errs: []string{`unknown config field "chrat" (did you mean "chart"?)`, "expected chart, repo, version, release, namespace, values, set, kubeconfig, context, timeout"},
		},
		{name: "values misspelt", in: map[string]any{"value": "values.yaml"}, errs: []string{`unknown config field "value" (did you mean "values"?)`}},
		{name: "namespace misspelt", in: map[string]any{"namespaec": "web"}, errs: []string{`(did you mean "namespace"?)`}},
		{name: "unknown field far from any", in: map[string]any{"replicas": 3}, errs: []string{`unknown config field "replicas"; expected chart`}},
		{name: "chart a list", in: map[string]any{"chart": []any{"a"}}, errs: []string{"config chart: must be a string; got a list"}},
		{name: "repo a mapping", in: map[string]any{"repo": map[string]any{"url": "x"}}, errs: []string{"config repo: must be a string; got a mapping"}},
		{name: "release null", in: map[string]any{"release": nil}, errs: []string{"config release: must be a string; got nothing (null)"}},
		{name: "namespace a list", in: map[string]any{"namespace": []any{}}, errs: []string{"config namespace: must be a string; got a list"}},
		{name: "kubeconfig a mapping", in: map[string]any{"kubeconfig": map[string]any{}}, errs: []string{"config kubeconfig: must be a string"}},
		{name: "context null", in: map[string]any{"context": nil}, errs: []string{"config context: must be a string"}},
		{name: "version a list", in: map[string]any{"version": []any{"1"}}, errs: []string{"config version: must be a string; got a list"}},
		{name: "values a number", in: map[string]any{"values": int64(3)}, errs: []string{"config values: must be a list of files or folders; got the number 3"}},
		{name: "values a mapping", in: map[string]any{"values": map[string]any{}}, errs: []string{"config values: must be a list of files or folders; got a mapping"}},
		{name: "values item a number", in: map[string]any{"values": []any{"a.yaml", 3}}, errs: []string{"config values: item 1 must be a path; got the number 3"}},
		{name: "values item empty", in: map[string]any{"values": []any{""}}, errs: []string{`config values[0]: the path is empty`}},
		{name: "values empty string", in: map[string]any{"values": ""}, errs: []string{"config values[0]: the path is empty"}},
		{name: "values absolute", in: map[string]any{"values": []any{"/etc/values.yaml"}}, errs: []string{`config values[0]: "/etc/values.yaml" is absolute; give a path relative to the component folder`}},
		{name: "values escaping", in: map[string]any{"values": []any{"values.yaml", "../shared/values.yaml"}}, errs: []string{`config values[1]: "../shared/values.yaml" leaves the component folder`}},
		{name: "values escaping after cleaning", in: map[string]any{"values": "env/../../values.yaml"}, errs: []string{"leaves the component folder"}},
		{name: "values reference", in: map[string]any{"values": []any{"values-${env}.yaml"}}, errs: []string{`config values[0]: "values-${env}.yaml" holds a parameter reference`}},
		{name: "values expression", in: map[string]any{"values": "#{env}.yaml"}, errs: []string{"holds a parameter reference"}},
		{name: "chart absolute", in: map[string]any{"chart": "/srv/charts/web"}, errs: []string{`config chart: "/srv/charts/web" is absolute`}},
		{name: "chart escaping", in: map[string]any{"chart": "../web"}, errs: []string{`config chart: "../web" leaves the component folder`}},
		{name: "chart escaping after cleaning", in: map[string]any{"chart": "charts/../../web"}, errs: []string{"leaves the component folder"}},
		{name: "chart reference in path part", in: map[string]any{"chart": "/charts/${name}"}, errs: nil},
		{name: "set a string", in: map[string]any{"set": "a=b"}, errs: []string{`config set: must be a mapping of values; got the string "a=b"`}},
		{name: "set a list", in: map[string]any{"set": []any{"a=b"}}, errs: []string{"config set: must be a mapping of values; got a list"}},
		{name: "timeout not a duration", in: map[string]any{"timeout": "soon"}, errs: []string{"config timeout:", `"soon" is neither seconds nor a duration`}},
		{name: "timeout zero", in: map[string]any{"timeout": 0}, errs: []string{"config timeout:", "not a positive number of seconds"}},
		{name: "timeout negative duration", in: map[string]any{"timeout": "-1m"}, errs: []string{"config timeout:", "not a positive duration"}},
		{name: "timeout a boolean", in: map[string]any{"timeout": true}, errs: []string{"config timeout: must be seconds or a duration"}},
		{name: "timeout null", in: map[string]any{"timeout": nil}, errs: []string{"config timeout:"}},
		{
			name: "several problems together",
			in: map[string]any{
				"chrat": "x", "values": []any{"/abs.yaml", "ok.yaml", "../up.yaml"}, "timeout": "soon",
				"set": int64(3), "namespace": []any{}, "chart": "../web",
			},
			errs: []string{
				`unknown config field "chrat" (did you mean "chart"?)`,
				`values[0]: "/abs.yaml" is absolute`,
				`values[2]: "../up.yaml" leaves the component folder`,
				"config timeout:",
				"config set: must be a mapping of values; got the number 3",
				"config namespace: must be a string; got a list",
				`config chart: "../web" leaves the component folder`,
			},
			problems: 7,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseConfig(tt.in)
			if tt.errs == nil {
				if err != nil {
					t.Fatalf("parseConfig: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("parseConfig: no error; want one holding %q", tt.errs)
			}
			for _, s := range tt.errs {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q\ndoes not hold %q", err, s)
				}
			}
			if n := strings.Count(err.Error(), "\n") + 1; tt.problems != 0 && n != tt.problems {
				t.Errorf("error has %d lines; want one per problem (%d):\n%v", n, tt.problems, err)
			}
		})
	}
}

// TestParseConfigErrorOrder checks that problems come in the order of the
// fields' names, whatever the map's order, so that messages are stable.
func TestParseConfigErrorOrder(t *testing.T) {
	in := map[string]any{"zeta": 1, "version": []any{}, "alpha": 1, "chart": nil, "timeout": "x"}
	var first string
	for i := range 20 {
		_, err := parseConfig(in)
		if err == nil {
			t.Fatal("no error")
		}
		if i == 0 {
			first = err.Error()
			lines := strings.Split(first, "\n")
			for j, prefix := range []string{`unknown config field "alpha"`, "config chart:", "config timeout:", "config version:", `unknown config field "zeta"`} {
				if j >= len(lines) || !strings.HasPrefix(lines[j], prefix) {
					t.Fatalf("line %d of\n%s\ndoes not start with %q", j, first, prefix)
				}
			}
		} else if err.Error() != first {
			t.Fatalf("errors differ between calls:\n%s\n---\n%s", first, err)
		}
	}
}

// FuzzParseConfig feeds YAML configs to parseConfig: it must never panic,
// and a config it accepts must hold only values files inside the component
// folder and a positive timeout.
func FuzzParseConfig(f *testing.F) {
	for _, s := range []string{
		"",
		"null",
		"chart: ./chart",
		"chart: nginx\nrepo: https://charts.example.com\nversion: 1.2\n",
		"values: [values.yaml, values-prod.yaml]\nset: {replicaCount: \"${replicas}\"}\n",
		"values: values.yaml\ntimeout: 90\n",
		"timeout: ${t}\n",
		"timeout: 1e400\n",
		"timeout: .nan\n",
		"timeout: -3\n",
		"timeout: 99999999999999999999\n",
		"values: [/abs, ../up, '', 3]\n",
		"chart: ../x\nchrat: y\n",
		"set: [1, 2]\n",
		"set: {1: a}\n",
		"- a\n- b\n",
		"version: [1]\nrelease: {a: b}\n",
		"release: !!binary aGVsbG8=\n",
		"context: 2001-12-14\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var v any
		if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
			t.Skip()
		}
		c, err := parseConfig(v)
		if err != nil {
			if err.Error() == "" {
				t.Errorf("empty error for %q", doc)
			}
			return
		}
		if c.Timeout <= 0 {
			t.Errorf("timeout %v accepted from %q", c.Timeout, doc)
		}
		for _, p := range c.Values {
			if _, err := kubernetes.LocalPath(p); err != nil {
				t.Errorf("values file %q accepted from %q: %v", p, doc, err)
			}
		}
		if c.Chart != "" && c.Repo == "" && !kubernetes.HasRef(c.Chart) {
			if _, err := kubernetes.LocalPath(c.Chart); err != nil {
				t.Errorf("chart %q accepted from %q: %v", c.Chart, doc, err)
			}
		}
	})
}
