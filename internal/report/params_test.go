package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/secret"
)

func TestNewParam(t *testing.T) {
	mask := secret.NewMasker("hunter22").Text
	tests := []struct {
		name, value string
		secret      bool
		want        string
	}{
		{"db.host", "db.local", false, "db.local"},
		{"db.password", "hunter22", false, secret.Mask},                      // the name says it
		{"conn", "postgres://u:hunter22@db", false, "postgres://u:*****@db"}, // a secret inside
		{"opaque", "anything", true, secret.Mask},                            // marked secret
		{"api.token", "", false, secret.Mask},
	}
	for _, tt := range tests {
		p := NewParam(tt.name, "", tt.value, "default", "", tt.secret, mask)
		if p.Value != tt.want {
			t.Errorf("%s = %q: shown %q, want %q", tt.name, tt.value, p.Value, tt.want)
		}
	}
}

// TestReadParamsMasksAgain: a params.json edited to hold a secret still
// shows the mask.
func TestReadParamsMasksAgain(t *testing.T) {
	dir := t.TempDir()
	doc := `{"stack":[{"name":"db.password","value":"plain-text-pw"},{"name":"x","value":"y","secret":true}],"components":{"a":[{"name":"token","value":"t0k3n"}]}}`
	if err := os.WriteFile(filepath.Join(dir, ParamsFile), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := readParams(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p.Stack[0].Value != secret.Mask || p.Stack[1].Value != secret.Mask || p.Components["a"][0].Value != secret.Mask {
		t.Errorf("read %+v", p)
	}
	if p, err := readParams(t.TempDir()); p != nil || err != nil {
		t.Errorf("no params.json: %v, %v; want nothing and no error", p, err)
	}
	if err := os.WriteFile(filepath.Join(dir, ParamsFile), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readParams(dir); err == nil || !strings.Contains(err.Error(), ParamsFile) {
		t.Errorf("a broken params.json: %v", err)
	}
}
