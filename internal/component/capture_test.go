package component

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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

// Values over several lines, as terraform prints maps, lists and multi-line
// strings: each is one output, read whole; the lines inside ("pass" = …)
// are not outputs of their own. testdata/terraform-outputs.txt is what
// terraform 1.11.4's apply printed from "Outputs:" on, for this module:
//
//	output "conn" { value = { user = "admin", pass = "p4ss-word" } }
//	output "list" { value = ["a", "b"] }
//	output "m" { value = tomap({ a = "x", b = "y" }) }
//	output "nested" { value = { l = [1, 2], o = { k = "v" }, s = "multi\nline\n" } }
//	output "heredoc" { value = "line one\n  line two\nline three\n" }
//	output "objs" { value = [{ a = 1 }, { a = 2 }] }
//	output "empty" { value = {} }
//	output "plain" { value = "x" }
//	output "set" { value = toset(["q", "r"]) }
func TestCaptureMultilineValues(t *testing.T) {
	data, err := os.ReadFile("testdata/terraform-outputs.txt")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, text string
		want       map[string]string
	}{
		{"terraform 1.11", string(data), map[string]string{
			"conn":    "{\n  \"pass\" = \"p4ss-word\"\n  \"user\" = \"admin\"\n}",
			"empty":   "{}",
			"heredoc": "line one\n  line two\nline three\n",
			"list":    "[\n  \"a\",\n  \"b\",\n]",
			"m":       "tomap({\n  \"a\" = \"x\"\n  \"b\" = \"y\"\n})",
			"nested":  "{\n  \"l\" = [\n    1,\n    2,\n  ]\n  \"o\" = {\n    \"k\" = \"v\"\n  }\n  \"s\" = <<-EOT\n  multi\n  line\n  \n  EOT\n}",
			"objs":    "[\n  {\n    \"a\" = 1\n  },\n  {\n    \"a\" = 2\n  },\n]",
			"plain":   "x",
			"set":     "toset([\n  \"q\",\n  \"r\",\n])",
		}},
		{"an indented heredoc loses its indentation", "Outputs:\nh = <<-EOT\n    a\n      b\n\n    EOT\nafter = 1\n",
			map[string]string{"h": "a\n  b\n", "after": "1"}},
		{"a heredoc holds blank lines and what looks like outputs", "Outputs:\nh = <<EOT\nk = v\n\nOutputs:\nEOT\nafter = 1\n",
			map[string]string{"h": "k = v\n\nOutputs:", "after": "1"}},
		{"a value ending in a bracket is one line", "Outputs:\ncss = body {\nnext = 2\n", map[string]string{"css": "body {", "next": "2"}},
		{"a map that never closes ends with its block", "Outputs:\nm = {\n  \"a\" = 1\n\nafter = ignored\n",
			map[string]string{"m": "{\n  \"a\" = 1"}},
		{"a header ends a map that never closed", "Outputs:\nm = [\n  1,\nOutputs:\nb = 2\n",
			map[string]string{"m": "[\n  1,", "b": "2"}},
		{"output that ends inside a value keeps what was read", "Outputs:\nh = <<EOT\npartial\n",
			map[string]string{"h": "partial"}},
		{"colours", "Outputs:\n\x1b[1mm\x1b[0m = {\n  \x1b[32m\"a\"\x1b[0m = 1\n}\n",
			map[string]string{"m": "{\n  \"a\" = 1\n}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCapture()
			for _, l := range strings.Split(strings.TrimSuffix(tt.text, "\n"), "\n") {
				c.Line(l)
			}
			if diff := cmp.Diff(tt.want, c.Outputs()); diff != "" {
				t.Errorf("outputs (-want +got):\n%s", diff)
			}
		})
	}
}
