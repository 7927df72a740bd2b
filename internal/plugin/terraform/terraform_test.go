package terraform

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDeclaredVariables(t *testing.T) {
	dir := t.TempDir()
	tf := `variable "cidr" { type = string }
variable "zones" {
  description = "a { brace } in text"
  type        = list(string)
}
variable "untyped" {}
variable "count_of" {
  type = number
  validation {
    condition = var.count_of > 0
    error_message = "positive"
  }
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(tf), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := declaredVariables(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"cidr": "string", "zones": "list", "untyped": "", "count_of": "number"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("declared (-want +got):\n%s", diff)
	}
}

func TestParamValue(t *testing.T) {
	tests := []struct {
		value, typ, want string
	}{
		{"10.0.0.0/16", "string", `"10.0.0.0/16"`},
		{`["a","b"]`, "string", `"[\"a\",\"b\"]"`},
		{`["a","b"]`, "list", `["a","b"]`},
		{`{"k":"v"}`, "map", `{"k":"v"}`},
		{`not json`, "list", `"not json"`},
		{"3", "number", `"3"`},
		{"3", "", `"3"`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(paramValue(tt.value, tt.typ))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tt.want {
			t.Errorf("paramValue(%q, %q) = %s, want %s", tt.value, tt.typ, b, tt.want)
		}
	}
}
