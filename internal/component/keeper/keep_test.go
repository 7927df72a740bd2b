package keeper

import "testing"

// TestGantrySession: the keeper names processes by the session gantry gave
// it, not by its parent's, which is no longer gantry's when gantry was
// killed before the keeper got to run (its processes were then named as
// no process of gantry's, and its log line said the process had ended).
func TestGantrySession(t *testing.T) {
	tests := []struct {
		given string
		want  int
	}{
		{"4242", 4242},
		{"", 0},
		{"x1", 0},
		{"-3", 0},
	}
	for _, tt := range tests {
		if got := gantrySession(tt.given); got != tt.want {
			t.Errorf("gantrySession(%q) = %d, want %d", tt.given, got, tt.want)
		}
	}
}
