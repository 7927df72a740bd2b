package cli

import (
	"slices"
	"testing"
)

// TestStackGiven: the stack a plan's suggestions repeat is the manifest,
// the params files and -s, with a database URL's password hidden.
func TestStackGiven(t *testing.T) {
	tests := []struct {
		state string
		args  []string
		want  []string
	}{
		{"", []string{"hub.yaml"}, []string{"hub.yaml"}},
		{"", []string{"hub.yaml", "a.yaml", "b.yaml"}, []string{"hub.yaml", "a.yaml", "b.yaml"}},
		{"run.state", []string{"hub.yaml", "a.yaml"}, []string{"hub.yaml", "a.yaml", "-s", "run.state"}},
		{"postgres://u:Secret9@h/db", []string{"hub.yaml"}, []string{"hub.yaml", "-s", "postgres://u:*****@h/db"}},
	}
	for _, tt := range tests {
		f := &stackFlags{statePath: tt.state}
		if got := f.stackGiven(tt.args); !slices.Equal(got, tt.want) {
			t.Errorf("stackGiven(%q) with -s %q = %q, want %q", tt.args, tt.state, got, tt.want)
		}
	}
}
