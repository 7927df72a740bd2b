package state

import (
	"strings"
	"testing"
	"time"
)

// TestDecodeYAMLTimes: the slow path reads the forms of a YAML timestamp
// strictTime takes with their values (goccy's own reading gives some of
// them no time at all), and refuses what is no time at its place.
func TestDecodeYAMLTimes(t *testing.T) {
	doc := func(started string) string {
		return "version: 1\nstack: s\nupdated: 2026-01-02T03:04:05Z\ncomponents:\n  \"a b\":\n    status: deployed\n    order: 0\n    started: " + started + "\n"
	}
	zone := time.FixedZone("", 5*3600+1800)
	tests := []struct {
		started string
		want    time.Time
		err     string
	}{
		{"2026-03-04T05:06:07.5+05:30", time.Date(2026, 3, 4, 5, 6, 7, 5e8, zone), ""},
		{"2026-03-04 05:06:07+05:30", time.Date(2026, 3, 4, 5, 6, 7, 0, zone), ""},
		{"2026-03-04 05:06:07", time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC), ""},
		{`"2026-03-04T05:06:07Z" # quoted, commented`, time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC), ""},
		{"2026-03-04", time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC), ""},
		{"2026-03-04t05:06:07z", time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC), ""},
		{"~", time.Time{}, ""},
		{"yesterday", time.Time{}, "[8:14] expected a time"},
		{"2026-1-2T3:4:5Z", time.Time{}, "[8:14] expected a time"},
		{"[2026-03-04]", time.Time{}, "[8:14] expected a time"},
	}
	for _, tt := range tests {
		t.Run(tt.started, func(t *testing.T) {
			s, err := decodeYAML([]byte(doc(tt.started)))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Components["a b"].Started; !got.Equal(tt.want) {
				t.Errorf("started = %v, want %v", got, tt.want)
			}
			if want := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC); !s.Updated.Equal(want) {
				t.Errorf("updated = %v, want %v", s.Updated, want)
			}
		})
	}
}

// TestDecodeYAMLDirective: a state some YAML tool wrote with a directive
// first (%YAML 1.2, ---) reads as without it.
func TestDecodeYAMLDirective(t *testing.T) {
	for _, head := range []string{"%YAML 1.2\n---\n", "%TAG ! tag:example.com,2000:\n---\n", "---\n"} {
		s, err := decodeYAML([]byte(head + "version: 1\nstack: s\nupdated: 2026-01-02T03:04:05Z\n"))
		if err != nil {
			t.Fatalf("%q: %v", head, err)
		}
		if s.Stack != "s" || s.Updated.IsZero() {
			t.Errorf("%q: read %+v", head, s)
		}
	}
}

// TestDecodeDirectiveShapeProblems: a state with a directive first is
// checked for its shape as one without (every problem, and the hint of a
// newer gantry).
func TestDecodeDirectiveShapeProblems(t *testing.T) {
	_, err := Decode("s.state", []byte("%YAML 1.2\n---\nversion: 1\nstack: s\nfutureField: 1\n"))
	if err == nil || !strings.Contains(err.Error(), `s.state:5:1: the state is not valid: unknown field "futureField"`) || !strings.Contains(err.Error(), "a newer gantry may have written") {
		t.Fatalf("err = %v", err)
	}
}
