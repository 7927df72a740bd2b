package kubernetes

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/plugin"
)

// TestInputRefs lists what an instance's files read, for the component
// graph: the references of manifests and of a kustomization's resources and
// generator literals, the names of expressions, each once; unreadable or
// unparsable inputs read nothing (the plan's stages report them).
func TestInputRefs(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string]string
		config map[string]any
		want   []string
	}{
		{
			name: "manifests",
			files: map[string]string{"cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: "${prefix}-cm"}
data:
  url: "${db:url}"
  again: "${db:url}/x"
  n: "#{replicas + 1}"
`},
			config: map[string]any{"manifests": []any{"cm.yaml"}},
			want:   []string{":prefix", "db:url", ":replicas"},
		},
		{
			name: "kustomization resources and generator literals",
			files: map[string]string{
				"kustomization.yaml": "resources: [cm.yaml]\nconfigMapGenerator:\n  - name: gen\n    literals: [\"url=${api:url}\"]\n",
				"cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: \"${db:host}\"}\n",
			},
			config: map[string]any{"kustomize": "."},
			want:   []string{"api:url", "db:host"},
		},
		{
			name:   "a missing file",
			config: map[string]any{"manifests": []any{"none.yaml"}},
		},
		{
			name:   "a reference that does not parse",
			files:  map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: \"${db:url\", b: \"${ok}\"}\n"},
			config: map[string]any{"manifests": []any{"cm.yaml"}},
			want:   []string{":ok"},
		},
		{
			name:   "a config that does not parse",
			config: map[string]any{"manifests": 3},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tt.files)
			refs := engine{manifests{}}.InputRefs(plugin.StagesRequest{Component: "app", Dir: dir,
				Entry: &plugin.Spec{Name: "kubernetes", Key: "app", Config: tt.config}, Action: plugin.ActionDeploy})
			var got []string
			for _, r := range refs {
				got = append(got, r.Component+":"+r.Name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("refs (-want +got):\n%s", diff)
			}
		})
	}
}
