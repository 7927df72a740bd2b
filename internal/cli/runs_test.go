package cli

import (
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/ui"
)

// TestRecentRuns: explain --runs' limit counts runs of their own, so that
// the runs a deploy invoked from its components (newer than it) never hide
// it; a nested run older than the last run listed is left out with its
// parent.
func TestRecentRuns(t *testing.T) {
	// runs lists runs by spec, the latest first: "d1" a run of its own,
	// "n1<d1" a run nested in d1.
	runs := func(spec string) []ui.RunInfo {
		var out []ui.RunInfo
		for _, f := range strings.Fields(spec) {
			id, parent, _ := strings.Cut(f, "<")
			out = append(out, ui.RunInfo{ID: id, Tag: ui.RunTag{Parent: parent}})
		}
		return out
	}
	ids := func(rs []ui.RunInfo) string {
		var out []string
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		name, runs string
		limit      int
		want       string
	}{
		{"under the limit", "d3 d2 d1", 5, "d3 d2 d1"},
		{"own runs only", "d3 d2 d1", 2, "d3 d2"},
		{"nested runs do not count", "n3<d2 n2<d2 n1<d2 d2 d1 d0", 2, "n3<d2 n2<d2 n1<d2 d2 d1"},
		{"nested in a run not listed", "d3 d2 n1<d1 d1", 2, "d3 d2"},
		{"only nested runs", "n2<d1 n1<d1", 1, "n2 n1"},
		{"no limit", "n1<d1 d1 d0", 0, "n1 d1 d0"},
	} {
		want := ids(runs(tc.want))
		if got := ids(recentRuns(runs(tc.runs), tc.limit)); got != want {
			t.Errorf("%s: listed %q, want %q", tc.name, got, want)
		}
	}
}
