package elaborate

import (
	"errors"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/gantry-dev/gantry/internal/yamlenc"
)

// TestMarshalDocMatchesGoccy: the bundled examples' elaborated documents
// are written by yamlenc (not left to goccy/go-yaml), as goccy would write
// them, byte for byte: the elaborated file did not change when yamlenc
// took over.
func TestMarshalDocMatchesGoccy(t *testing.T) {
	for stack, params := range map[string][]string{
		"../../examples/quickstart/hub.yaml": nil,
		"../../examples/nested/hub.yaml":     {"../../examples/nested/params.yaml"},
		"../../examples/kubernetes/hub.yaml": nil,
	} {
		res, diags := Load(stack, Options{ParamsFiles: params})
		if diags.HasErrors() {
			t.Fatalf("%s: %v", stack, diags)
		}
		docs := []any{res.Stack}
		for _, c := range res.Components {
			docs = append(docs, c)
		}
		for i, d := range docs {
			got, err := yamlenc.Marshal(d)
			if errors.Is(err, yamlenc.ErrUnsupported) {
				t.Errorf("%s document %d: left to goccy: %v", stack, i, err)
				continue
			}
			if err != nil {
				t.Fatalf("%s document %d: %v", stack, i, err)
			}
			want, err := yaml.MarshalWithOptions(d, yaml.IndentSequence(true), yaml.Indent(2))
			if err != nil {
				t.Fatalf("%s document %d: goccy: %v", stack, i, err)
			}
			if string(got) != string(want) {
				t.Errorf("%s document %d differs\n--- yamlenc\n%s--- goccy\n%s", stack, i, got, want)
			}
		}
	}
}
