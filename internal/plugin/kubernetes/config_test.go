package kubernetes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseConfig(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want config
		// errs are substrings the error must hold; none: no error.
		errs []string
	}{
		{
			name: "manifests list",
			in:   map[string]any{"manifests": []any{"deploy", "./extra/app.yaml"}},
			want: config{Manifests: []string{"deploy", "extra/app.yaml"}, Timeout: defaultTimeout},
		},
		{
			name: "manifests as one string",
			in:   map[string]any{"manifests": "app.yaml"},
			want: config{Manifests: []string{"app.yaml"}, Timeout: defaultTimeout},
		},
		{
			name: "every field",
			in: map[string]any{
				"manifests": []string{"."}, "kustomize": "overlays/prod", "crds": "crd",
				"namespace": "web", "kubeconfig": "/home/me/.kube/config", "context": "kind-dev", "timeout": 90,
			},
			want: config{
				Manifests: []string{"."}, Kustomize: "overlays/prod", CRDs: "crd", Namespace: "web",
				Kubeconfig: "/home/me/.kube/config", Context: "kind-dev", Timeout: 90 * time.Second,
			},
		},
		{
			name: "crds alone",
			in:   map[string]any{"crds": "crds"},
			want: config{CRDs: "crds", Timeout: defaultTimeout},
		},
		{name: "timeout int64", in: map[string]any{"kustomize": ".", "timeout": int64(30)}, want: config{Kustomize: ".", Timeout: 30 * time.Second}},
		{name: "timeout uint64", in: map[string]any{"kustomize": ".", "timeout": uint64(30)}, want: config{Kustomize: ".", Timeout: 30 * time.Second}},
		{name: "timeout float", in: map[string]any{"kustomize": ".", "timeout": 1.5}, want: config{Kustomize: ".", Timeout: 1500 * time.Millisecond}},
		{name: "timeout duration", in: map[string]any{"kustomize": ".", "timeout": "2m30s"}, want: config{Kustomize: ".", Timeout: 150 * time.Second}},
		{name: "timeout seconds string", in: map[string]any{"kustomize": ".", "timeout": "45"}, want: config{Kustomize: ".", Timeout: 45 * time.Second}},
		{
			name: "references left for the run",
			in:   map[string]any{"kustomize": ".", "namespace": "${ns}", "timeout": "${timeout}", "context": "#{ctx}"},
			want: config{Kustomize: ".", Namespace: "${ns}", Context: "#{ctx}", Timeout: defaultTimeout},
		},
		{name: "nil", in: nil, errs: []string{"give manifests"}},
		{name: "not a mapping", in: []any{"a"}, errs: []string{"config must be a mapping", "a list"}},
		{name: "empty mapping", in: map[string]any{}, errs: []string{"needs manifests (files or folders), kustomize (a folder) or crds"}},
		{
			name: "unknown field with suggestion",
			in:   map[string]any{"manifest": []any{"a.yaml"}},
			errs: []string{`unknown config field "manifest" (did you mean "manifests"?)`, "expected manifests, kustomize, crds, namespace, kubeconfig, context, timeout"},
		},
		{
			name: "unknown field far from any",
			in:   map[string]any{"manifests": "a.yaml", "replicas": 3},
			errs: []string{`unknown config field "replicas"; expected manifests`},
		},
		{name: "absolute manifest", in: map[string]any{"manifests": []any{"/etc/app.yaml"}}, errs: []string{`manifests[0]: "/etc/app.yaml" is absolute`}},
		{name: "leaving manifest", in: map[string]any{"manifests": []any{"ok.yaml", "../other/app.yaml"}}, errs: []string{`manifests[1]: "../other/app.yaml" leaves the component folder`}},
		{name: "leaving after cleaning", in: map[string]any{"manifests": "a/../../b"}, errs: []string{"leaves the component folder"}},
		{name: "empty path", in: map[string]any{"manifests": []any{""}}, errs: []string{"manifests[0]: the path is empty"}},
		{name: "empty list", in: map[string]any{"manifests": []any{}}, errs: []string{"the list is empty"}},
		{name: "path with a reference", in: map[string]any{"manifests": "${dir}/app.yaml"}, errs: []string{"holds a parameter reference"}},
		{name: "manifest not a string", in: map[string]any{"manifests": []any{3}}, errs: []string{"item 0 must be a path; got the number 3"}},
		{name: "manifests a mapping", in: map[string]any{"manifests": map[string]any{}}, errs: []string{"must be a list of files or folders; got a mapping"}},
		{name: "kustomize leaving", in: map[string]any{"kustomize": ".."}, errs: []string{`kustomize: ".." leaves the component folder`}},
		{name: "kustomize absolute", in: map[string]any{"kustomize": "/k"}, errs: []string{"is absolute"}},
		{name: "kustomize not a string", in: map[string]any{"kustomize": true}, errs: []string{"kustomize: must be a folder", "the boolean true"}},
		{name: "crds leaving", in: map[string]any{"crds": "../crds"}, errs: []string{"crds: \"../crds\" leaves"}},
		{name: "bad namespace", in: map[string]any{"kustomize": ".", "namespace": "Web_1"}, errs: []string{`namespace: "Web_1" is not a valid namespace name`}},
		{name: "namespace not a string", in: map[string]any{"kustomize": ".", "namespace": 3}, errs: []string{"namespace: must be a string"}},
		{name: "context not a string", in: map[string]any{"kustomize": ".", "context": []any{}}, errs: []string{"context: must be a string"}},
		{name: "zero timeout", in: map[string]any{"kustomize": ".", "timeout": 0}, errs: []string{"timeout: 0 is not a positive number of seconds"}},
		{name: "negative timeout", in: map[string]any{"kustomize": ".", "timeout": "-5s"}, errs: []string{`"-5s" is not a positive duration`}},
		{name: "bad timeout", in: map[string]any{"kustomize": ".", "timeout": "soon"}, errs: []string{`"soon" is neither seconds nor a duration`}},
		{name: "timeout a bool", in: map[string]any{"kustomize": ".", "timeout": true}, errs: []string{"timeout: must be seconds or a duration"}},
		{name: "timeout tiny", in: map[string]any{"kustomize": ".", "timeout": 1e-12}, errs: []string{"not a positive number of seconds"}},
		{name: "timeout huge", in: map[string]any{"kustomize": ".", "timeout": 1e300}, errs: []string{"too long"}},
		{
			name: "all errors together",
			in:   map[string]any{"manifests": "/abs", "kustomize": "..", "timeout": "x", "extra": 1},
			errs: []string{"manifests[0]", "kustomize:", "timeout:", `"extra"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseConfig(tt.in)
			if len(tt.errs) == 0 {
				if err != nil {
					t.Fatalf("parseConfig: %v", err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("config (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil {
				t.Fatalf("parseConfig = %+v, want an error", got)
			}
			for _, s := range tt.errs {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}

func TestCRDsFolder(t *testing.T) {
	withCRDs := t.TempDir()
	if err := os.Mkdir(filepath.Join(withCRDs, "crds"), 0o755); err != nil {
		t.Fatal(err)
	}
	fileCRDs := t.TempDir()
	if err := os.WriteFile(filepath.Join(fileCRDs, "crds"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name         string
		cfg          config
		dir          string
		want         string
		wantExplicit bool
	}{
		{"configured", config{CRDs: "defs"}, t.TempDir(), "defs", true},
		{"default present", config{Manifests: []string{"."}}, withCRDs, "crds", false},
		{"default absent", config{Manifests: []string{"."}}, t.TempDir(), "", false},
		{"crds is a file", config{Manifests: []string{"."}}, fileCRDs, "", false},
		{"crds already a manifests entry", config{Manifests: []string{"crds"}}, withCRDs, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, explicit := tt.cfg.crdsFolder(tt.dir)
			if got != tt.want || explicit != tt.wantExplicit {
				t.Errorf("crdsFolder = %q, %v; want %q, %v", got, explicit, tt.want, tt.wantExplicit)
			}
		})
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"90", 90 * time.Second, true},
		{" 90 ", 90 * time.Second, true},
		{"0.5", 500 * time.Millisecond, true},
		{"90s", 90 * time.Second, true},
		{"1h", time.Hour, true},
		{"0", 0, false},
		{"0s", 0, false},
		{"-1", 0, false},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"", 0, false},
		{"5 minutes", 0, false},
	}
	for _, tt := range tests {
		got, err := parseDuration(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}
