package state

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSplitLocations: a Hub CLI state list splits at its commas, but for
// those of a postgres:// URL's hosts (libpq's host list), which come
// before the URL's path.
func TestSplitLocations(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"hub.yaml.state", []string{"hub.yaml.state"}},
		{"a.state,b.state", []string{"a.state", "b.state"}},
		{"a.state, ,b.state,", []string{"a.state", "b.state"}},
		{"postgres://u:p@h1,h2:5433/db?stack=x", []string{"postgres://u:p@h1,h2:5433/db?stack=x"}},
		{"postgres://u:p@h1,h2/db,file://a.state", []string{"postgres://u:p@h1,h2/db", "file://a.state"}},
		// A query's commas are the URL's: a file after it is written
		// file://PATH (or listed first).
		{"postgres://u@h/db?options=-c%20search_path%3Dpublic,other", []string{"postgres://u@h/db?options=-c%20search_path%3Dpublic,other"}},
		{"postgres://u@h/db?password=pa,ss", []string{"postgres://u@h/db?password=pa,ss"}},
		{"postgres:///db?host=/tmp,/var/run/postgresql&user=g", []string{"postgres:///db?host=/tmp,/var/run/postgresql&user=g"}},
		{"postgres://u:p@h1,h2/db,a.state", []string{"postgres://u:p@h1,h2/db,a.state"}},
		{"postgres://u:p@h/db,postgresql://v:q@k/db2&stack=m", []string{"postgres://u:p@h/db", "postgresql://v:q@k/db2&stack=m"}},
		{"a.state,postgres://u:p@h1,h2/db", []string{"a.state", "postgres://u:p@h1,h2/db"}},
		{"postgres://u:p@h1,h2", []string{"postgres://u:p@h1,h2"}},
	} {
		if got := SplitLocations(tc.in); !cmp.Equal(got, tc.want) {
			t.Errorf("SplitLocations(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestRedactList: every password of a list is hidden, not the first only.
func TestRedactList(t *testing.T) {
	got := Redact("postgres://u:first-pw@h/db,postgres://v:second-pw@k/db2?stack=m,a.state")
	if strings.Contains(got, "first-pw") || strings.Contains(got, "second-pw") {
		t.Errorf("Redact left a password: %s", got)
	}
	if want := "postgres://u:*****@h/db,postgres://v:*****@k/db2?stack=m,a.state"; got != want {
		t.Errorf("Redact = %s, want %s", got, want)
	}
}
