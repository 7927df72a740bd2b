package terraform

import (
	"strings"
	"testing"
)

// The watcher sees terraform's "Backend configuration changed" however the
// output is cut into writes, and passes the output on unchanged.
func TestPhraseWatcher(t *testing.T) {
	text := "Initializing the backend...\n\nError: Backend configuration changed\n\nA change in the backend configuration has been detected\n"
	for _, tc := range []struct {
		name string
		text string
		want bool
	}{
		{"the error", text, true},
		{"other output", "Initializing the backend...\nError: Failed to get existing workspaces\n", false},
	} {
		for size := 1; size <= len(tc.text); size++ {
			var out strings.Builder
			w := &phraseWatcher{next: &out, phrase: backendChanged}
			for rest := tc.text; len(rest) > 0; {
				n := min(size, len(rest))
				if _, err := w.Write([]byte(rest[:n])); err != nil {
					t.Fatal(err)
				}
				rest = rest[n:]
			}
			if w.Seen() != tc.want {
				t.Errorf("%s, writes of %d: seen %v, want %v", tc.name, size, w.Seen(), tc.want)
			}
			if out.String() != tc.text {
				t.Errorf("%s, writes of %d: passed on %q", tc.name, size, out.String())
			}
		}
	}
}
