package elaborate

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestBaseParamsFiles: a base stack's folder brings params.yaml, then
// params-$ENV.yaml when ENV is set, each when it is there, and the result
// names them among the files it is made from (the elaborated file a run
// writes is rewritten when one of them changes).
func TestBaseParamsFiles(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"base/hub.yaml":        "version: 1\nkind: stack\nmeta: {name: base}\n",
		"base/params.yaml":     "parameters:\n  - {name: region, value: base}\n",
		"base/params-dev.yaml": "parameters:\n  - {name: region, value: base-dev}\n",
		"top/hub.yaml":         "version: 1\nkind: stack\nmeta: {name: top, fromStack: ../base}\n",
		"top/params-dev.yaml":  "parameters:\n  - {name: region, value: top-dev}\n",
	} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := filepath.Join(dir, "base")
	for _, tc := range []struct {
		env, region string
		params      []string
	}{
		{"", "base", []string{"params.yaml"}},
		{"dev", "base-dev", []string{"params.yaml", "params-dev.yaml"}},
		{"prod", "base", []string{"params.yaml"}},
	} {
		t.Setenv("ENV", tc.env)
		var want []string
		for _, p := range tc.params {
			want = append(want, filepath.Join(base, p))
		}
		if got := baseParamsFiles(base); !slices.Equal(got, want) {
			t.Errorf("ENV=%s: params files %v, want %v", tc.env, got, want)
		}
		res, diags := Elaborate(filepath.Join(dir, "top/hub.yaml"), Options{})
		if diags.HasErrors() {
			t.Fatal(diags.Err())
		}
		if got := res.Stack.Parameters[0].Value; string(got) != tc.region {
			t.Errorf("ENV=%s: region %q, want %q", tc.env, got, tc.region)
		}
		for _, f := range want {
			if !slices.Contains(res.Files, f) {
				t.Errorf("ENV=%s: Files %v lack %s", tc.env, res.Files, f)
			}
		}
	}
}
