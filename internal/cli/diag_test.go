package cli

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// TestPrintWarningsBounded: a flood of warnings prints maxWarnings of them
// and then how many more there were; fewer print as they are.
func TestPrintWarningsBounded(t *testing.T) {
	for _, n := range []int{0, 1, maxWarnings, maxWarnings + 1, 50000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			var ds manifest.Diagnostics
			for i := range n {
				ds.Warnf(manifest.Pos{File: "hub.yaml", Line: i + 1, Col: 3}, "parameters", "parameter %q is qualified for unknown component %q", fmt.Sprint("p", i), "x")
			}
			var out bytes.Buffer
			printWarnings(&out, ds)
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if n == 0 {
				if out.Len() != 0 {
					t.Fatalf("no warnings printed %q", out.String())
				}
				return
			}
			shown := min(n, maxWarnings)
			if !strings.HasPrefix(lines[0], "hub.yaml:1:3: warning: parameters: parameter \"p0\"") {
				t.Errorf("first line %q", lines[0])
			}
			if n <= maxWarnings {
				if len(lines) != n {
					t.Errorf("%d lines for %d warnings", len(lines), n)
				}
				return
			}
			if len(lines) != shown+1 {
				t.Fatalf("%d lines for %d warnings, want %d and a count", len(lines), n, shown)
			}
			if want := fmt.Sprintf("warning: %d more warnings not shown (%d in all)", n-maxWarnings, n); lines[shown] != want {
				t.Errorf("last line %q, want %q", lines[shown], want)
			}
		})
	}
}
