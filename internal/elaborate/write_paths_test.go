package elaborate

import (
	"path/filepath"
	"testing"
)

// TestAbsPaths: absPaths makes paths absolute as filepath.Abs does, with the
// working directory read once.
func TestAbsPaths(t *testing.T) {
	paths := newAbsPaths()
	for _, p := range []string{"", ".", "..", "a", "a/../b", "./a/./b/", "../up/x", "/", "/x/./y/..", "//double"} {
		got, err := paths.abs(p)
		want, werr := filepath.Abs(p)
		if got != want || (err == nil) != (werr == nil) {
			t.Errorf("abs(%q) = %q, %v; filepath.Abs gives %q, %v", p, got, err, want, werr)
		}
	}
	tests := []struct {
		base, dir, rel string
		same           bool
	}{
		{".", ".", ".", true},
		{".", "comp", "comp", false},
		{"stacks/a", "stacks/b/c", "../b/c", false},
		{"/abs/base", "/abs/base/x", "x", false},
		{"x/..", ".", ".", true},
	}
	for _, tt := range tests {
		if got := paths.rel(tt.base, tt.dir); got != tt.rel {
			t.Errorf("rel(%q, %q) = %q, want %q", tt.base, tt.dir, got, tt.rel)
		}
		if got := paths.same(tt.base, tt.dir); got != tt.same {
			t.Errorf("same(%q, %q) = %v, want %v", tt.base, tt.dir, got, tt.same)
		}
	}
}
