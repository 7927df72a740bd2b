package testenv

import (
	"fmt"
	"testing"
)

// stops records how a test would stop: a fake testing.TB whose Fatal and
// Skip only note their message (the first one counts).
type stops struct {
	testing.TB
	how string
}

func (s *stops) Helper() {}
func (s *stops) Fatal(args ...any) {
	if s.how == "" {
		s.how = "fatal: " + fmt.Sprint(args...)
	}
}
func (s *stops) Skip(args ...any) {
	if s.how == "" {
		s.how = "skip: " + fmt.Sprint(args...)
	}
}

func TestServer(t *testing.T) {
	tests := []struct {
		value, ci string
		want, how string
	}{
		{"127.0.0.1:7233", "", "127.0.0.1:7233", ""},
		{"127.0.0.1:7233", "true", "127.0.0.1:7233", ""},
		{"", "", "", "skip: GANTRY_TEST_X is not set: scripts/x/start.sh DIR starts one"},
		{"0", "", "", "skip: GANTRY_TEST_X is not set: scripts/x/start.sh DIR starts one"},
		{"", "true", "", "fatal: no X server: GANTRY_TEST_X is not set (scripts/test.sh starts one)"},
		{"0", "true", "", "fatal: no X server: GANTRY_TEST_X is not set (scripts/test.sh starts one)"},
	}
	for _, tt := range tests {
		t.Setenv("GANTRY_TEST_X", tt.value)
		t.Setenv("CI", tt.ci)
		s := &stops{TB: t}
		got := Server(s, "GANTRY_TEST_X", "X server", "scripts/x/start.sh DIR starts one")
		if s.how != tt.how || tt.how == "" && got != tt.want {
			t.Errorf("GANTRY_TEST_X=%q CI=%q: %q, stopped %q; want %q, stopped %q", tt.value, tt.ci, got, s.how, tt.want, tt.how)
		}
	}
}
