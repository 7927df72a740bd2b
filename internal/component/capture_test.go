package component

import (
	"fmt"
	"strings"
	"testing"
)

// TestCaptureIsBounded: a component that prints outputs or capabilities
// without end fills no more than the bounds, in linear time, and the
// capture says which bound it crossed.
func TestCaptureIsBounded(t *testing.T) {
	c := NewCapture()
	c.Line("Outputs:")
	big := strings.Repeat("v", 60<<10)
	for i := 0; i < 2000; i++ { // 120 MiB of values
		c.Line(fmt.Sprintf("k%d = %s", i, big))
	}
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") {
		t.Fatalf("got %v", err)
	}
	if n := len(c.Outputs()); n >= 2000 || n == 0 {
		t.Errorf("kept %d outputs", n)
	}

	// Overwriting one output again and again stays within the bound.
	c = NewCapture()
	c.Line("Outputs:")
	for i := 0; i < 2000; i++ {
		c.Line("k = " + big)
	}
	if err := c.Err(); err != nil {
		t.Errorf("rewriting one output: %v", err)
	}

	// Capabilities: a million distinct ones end at the bound (quadratic
	// duplicate checks would take minutes here).
	c = NewCapture()
	c.Line("Provides:")
	for i := 0; i < 1_000_000; i++ {
		c.Line(fmt.Sprintf("- cap%d", i))
	}
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "more than 10000 capabilities") {
		t.Fatalf("got %v", err)
	}
	if n := len(c.Provides()); n != MaxProvides {
		t.Errorf("kept %d capabilities", n)
	}
}

// FuzzCapture feeds arbitrary output to the Outputs:/Provides: parser: no
// panics, and what it keeps is well formed — keys trimmed, without "=" and
// not empty; capabilities without separators and each once.
func FuzzCapture(f *testing.F) {
	for _, s := range []string{
		"Outputs:\n\na = 1\nb = \"two\"\n\nc = 3\n",
		"Outputs:\nprovides = x, y\nProvides:\n- z\n- x\n",
		"\x1b[1mOutputs:\x1b[0m\n\x1b[32mkey\x1b[0m = 'v'\n",
		"Outputs:\n = empty key\nnoequals\nk = \"bad \\q quote\"\n",
		"Provides:\n,,, ,\t\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, out string) {
		lines := strings.Split(out, "\n")
		c := NewCapture()
		for _, l := range lines {
			c.Line(l)
		}
		outs, provides := c.Outputs(), c.Provides()
		for k := range outs {
			if k == "" || k != strings.TrimSpace(k) || strings.Contains(k, "=") {
				t.Errorf("output key %q", k)
			}
		}
		seen := map[string]bool{}
		for _, p := range provides {
			if p == "" || strings.ContainsAny(p, ", \t") || seen[p] {
				t.Errorf("capability %q (seen before: %v)", p, seen[p])
			}
			seen[p] = true
		}
		if got := c.Outputs(); len(got) != len(outs) {
			t.Errorf("Outputs changed between calls: %v, %v", got, outs)
		}
	})
}
