package steps

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/lines"
	"github.com/gantry-dev/gantry/internal/secret"
)

// A plugin may hand the same writer to its stdout and its stderr copiers:
// concurrent writes must neither race nor lose lines (run with -race).
func TestCaptureWriterConcurrentWrites(t *testing.T) {
	w := newCaptureWriter(io.Discard, secret.NewMasker(), map[string]bool{})
	var wg sync.WaitGroup
	for g := 0; g < 2; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 500; i++ {
				fmt.Fprintf(w, "writer %d line %d\n", g, i)
			}
		}(g)
	}
	wg.Wait()
	fmt.Fprint(w, "Outputs:\nresult = done\n")
	w.Flush()
	if got := w.capture.Outputs()["result"]; got != "done" {
		t.Errorf("output after concurrent writes = %q, want done", got)
	}
}

// Past the capture's bound, a secret output line is shown with its value
// hidden in the line, and the masker learns no more values: it would grow
// with whatever the component prints.
func TestCaptureWriterPastTheBound(t *testing.T) {
	var out strings.Builder
	m := secret.NewMasker()
	w := newCaptureWriter(&out, m, map[string]bool{})
	fmt.Fprint(w, "Outputs:\n")
	big := strings.Repeat("v", 60<<10)
	for i := 0; i < 1200; i++ { // 70 MiB of outputs
		fmt.Fprintf(w, "k%d = %s\n", i, big)
	}
	out.Reset()
	fmt.Fprint(w, "db.password = s3cr3t-value\n")
	w.Flush()
	if w.capture.Err() == nil {
		t.Fatal("the capture did not reach its bound")
	}
	if got := out.String(); got != "db.password = *****\n" {
		t.Errorf("shown %q", got)
	}
	if got := m.Text("s3cr3t-value"); got != "s3cr3t-value" {
		t.Errorf("the masker learnt the value past the bound: %q", got)
	}
}

// An output's value on a line longer than lines.MaxLine is read whole (a CA
// bundle in base64 on one line), whatever the writes it comes in; a secret
// one is known to the masker whole, and no piece of it is shown.
func TestCaptureWriterLongValues(t *testing.T) {
	var out strings.Builder
	m := secret.NewMasker()
	w := newCaptureWriter(&out, m, map[string]bool{"cert": true})
	secretValue := strings.Repeat("S3cr3t+", 30_000) // 210,000 bytes
	plain := strings.Repeat("p", 3*lines.MaxLine)
	text := "before\n" + strings.Repeat("x", 2*lines.MaxLine) + "\nOutputs:\ncert = " + secretValue + "\nplain = " + plain + "\n\n"
	for len(text) > 0 { // as a pipe hands it over
		n := min(len(text), 4096)
		fmt.Fprint(w, text[:n])
		text = text[n:]
	}
	w.Flush()
	if got := w.capture.Outputs()["cert"]; got != secretValue {
		t.Errorf("cert: %d bytes, want %d", len(got), len(secretValue))
	}
	if got := w.capture.Outputs()["plain"]; got != plain {
		t.Errorf("plain: %d bytes, want %d", len(got), len(plain))
	}
	// The stream it writes to masks what the masker knows.
	shown := m.Text(out.String())
	if strings.Contains(shown, "S3cr3t") {
		t.Errorf("a piece of the secret is shown")
	}
	if !strings.Contains(shown, "\ncert = *****\n") || !strings.Contains(shown, "\nplain = "+plain+"\n") {
		t.Errorf("the outputs are not shown as written: %.200q", shown)
	}
	if got := m.Text("x " + secretValue + " y"); got != "x ***** y" {
		t.Errorf("the masker does not know the whole secret: %.80q", got)
	}
}

// A secret output's line longer than the capture keeps is shown as its name
// and the mask, and none of its later pieces.
func TestCaptureWriterSecretPastTheBoundInPieces(t *testing.T) {
	var out strings.Builder
	w := newCaptureWriter(&out, secret.NewMasker(), map[string]bool{"cert": true})
	fmt.Fprint(w, "Outputs:\ncert = ")
	piece := strings.Repeat("S3cr3t+", 1<<14)
	for written := 0; written <= component.MaxCaptured+2*lines.MaxLine; written += len(piece) {
		fmt.Fprint(w, piece)
	}
	fmt.Fprint(w, "\nafter = 1\n\n")
	w.Flush()
	if w.capture.Err() == nil {
		t.Fatal("the capture did not reach its bound")
	}
	if got := out.String(); got != "Outputs:\ncert = *****\nafter = 1\n\n" {
		t.Errorf("shown %.200q", got)
	}
}

// Text outside Outputs: blocks is passed on as it came, however long its
// lines and however it is cut into writes: a line longer than lines.MaxLine
// goes on as one line (its pieces unended), so that the stream behind tells
// the masker they are one line and a secret across a cut stays masked.
func TestCaptureWriterPassesLongLinesOn(t *testing.T) {
	for _, tc := range []struct {
		name, text string
	}{
		{"one long line", strings.Repeat("x", 3*lines.MaxLine+5) + "\n"},
		{"long lines and short", "a\n" + strings.Repeat("y", lines.MaxLine) + "\nb\n" + strings.Repeat("z", 2*lines.MaxLine-1) + "\n"},
		{"a secret across the cut", strings.Repeat("x", lines.MaxLine-4) + "Sup3rS3cretValue tail\n"},
		{"no newline at the end", strings.Repeat("w", lines.MaxLine+3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, size := range []int{1000, 4096, lines.MaxLine, 1 << 20} {
				var out strings.Builder
				w := newCaptureWriter(&out, secret.NewMasker(), map[string]bool{})
				for text := tc.text; len(text) > 0; {
					n := min(len(text), size)
					fmt.Fprint(w, text[:n])
					text = text[n:]
				}
				w.Flush()
				want := tc.text
				if !strings.HasSuffix(want, "\n") {
					want += "\n"
				}
				if got := out.String(); got != want {
					t.Errorf("writes of %d: passed on %d bytes with %d newlines, want %d with %d",
						size, len(got), strings.Count(got, "\n"), len(want), strings.Count(want, "\n"))
				}
			}
		})
	}
}

// A secret output whose value takes several lines (a terraform map) is
// shown as its name and the mask, none of its lines; the masker then knows
// the value and each value inside it. A plain one is shown as printed, and
// the lines inside a value teach the masker nothing.
func TestCaptureWriterSecretOverSeveralLines(t *testing.T) {
	var out strings.Builder
	m := secret.NewMasker()
	w := newCaptureWriter(&out, m, map[string]bool{"conn": true})
	fmt.Fprint(w, "Apply complete!\n\nOutputs:\n\nconn = {\n  \"pass\" = \"p4ss-w0rd-x\"\n  \"user\" = \"admin-user\"\n}\n"+
		"plain = {\n  \"password\" = \"not-a-secret\"\n}\nnotes = <<EOT\nsecret-looking = nothing\nEOT\n\nlater p4ss-w0rd-x\n")
	w.Flush()
	want := "Apply complete!\n\nOutputs:\n\nconn = *****\n" +
		"plain = {\n  \"password\" = \"not-a-secret\"\n}\nnotes = <<EOT\nsecret-looking = nothing\nEOT\n\nlater p4ss-w0rd-x\n"
	if got := out.String(); got != want {
		t.Errorf("shown:\n%s\nwant:\n%s", got, want)
	}
	if got := m.Text("later p4ss-w0rd-x and admin-user; not-a-secret, nothing"); got != "later ***** and *****; not-a-secret, nothing" {
		t.Errorf("masked %q", got)
	}
	if got, _ := w.capture.Output("conn"); got != "{\n  \"pass\" = \"p4ss-w0rd-x\"\n  \"user\" = \"admin-user\"\n}" {
		t.Errorf("conn = %q", got)
	}
}

// terraform's plan shows the outputs it knows under "Changes to Outputs:",
// before the apply: a secret one (declared, or named so) is shown as its
// name and the mask, over several lines too, and the masker learns its
// value; others are shown as printed.
func TestCaptureWriterTerraformPlanOutputs(t *testing.T) {
	var out strings.Builder
	m := secret.NewMasker()
	w := newCaptureWriter(&out, m, map[string]bool{"conn": true})
	fmt.Fprint(w, "Changes to Outputs:\n"+
		"  + admin_password = \"INITVAL-abc123\"\n"+
		"  ~ conn           = \"user:old-pw-1\" -> \"user:new-pw-2\"\n"+
		"  + db_password    = {\n      + api_token = \"tok-3\"\n      + nested    = [\n          + \"item-4\",\n        ]\n    }\n"+
		"  + cert_key       = <<-EOT\n        key-line-5\n    EOT\n"+
		"  + plain          = \"shown\"\n"+
		"  + token          = (sensitive value)\n"+
		"\nplain_after = \"x\"\n")
	w.Flush()
	want := "Changes to Outputs:\n" +
		"  + admin_password = *****\n" +
		"  ~ conn = *****\n" +
		"  + db_password = *****\n" +
		"  + cert_key = *****\n" +
		"  + plain          = \"shown\"\n" +
		"  + token = *****\n" +
		"\nplain_after = \"x\"\n"
	if got := out.String(); got != want {
		t.Errorf("shown:\n%s\nwant:\n%s", got, want)
	}
	for _, v := range []string{"INITVAL-abc123", "user:old-pw-1", "user:new-pw-2", "tok-3", "item-4", "key-line-5"} {
		if got := m.Text("x " + v + " y"); got != "x ***** y" {
			t.Errorf("the masker does not know %q: %q", v, got)
		}
	}
}

// A secret's value over several lines ends where terraform's rendering
// does, at the next line no deeper than its entry: brackets in its text
// (a config's "}", an unbalanced "{"), jsonencode(…) and a heredoc inside a
// map never end it early or late. Only quoted text and heredoc lines with
// a letter or digit are learned: a "}" is not a secret.
func TestCaptureWriterTerraformPlanShapes(t *testing.T) {
	var out strings.Builder
	m := secret.NewMasker()
	w := newCaptureWriter(&out, m, map[string]bool{"cfg": true, "js": true})
	fmt.Fprint(w, "Changes to Outputs:\n"+
		"  + cfg    = {\n"+
		"      + cert = <<-EOT\n"+
		"            line1\n"+
		"            }\n"+
		"            LEAKCFG-1 {\n"+
		"        EOT\n"+
		"    }\n"+
		"  ~ js     = jsonencode(\n"+
		"      ~ {\n"+
		"          ~ login = \"user:LEAKJS-1\" -> \"user:LEAKJS-2\"\n"+
		"            # (1 unchanged attribute hidden)\n"+
		"        }\n"+
		"    )\n"+
		"  + tags   = {\n"+
		"      + team = \"net\"\n"+
		"    }\n"+
		"\n"+
		"Apply complete!\n")
	w.Flush()
	want := "Changes to Outputs:\n" +
		"  + cfg = *****\n" +
		"  ~ js = *****\n" +
		"  + tags   = {\n" +
		"      + team = \"net\"\n" +
		"    }\n" +
		"\n" +
		"Apply complete!\n"
	if got := out.String(); got != want {
		t.Errorf("shown:\n%s\nwant:\n%s", got, want)
	}
	for _, v := range []string{"LEAKCFG-1 {", "user:LEAKJS-1", "user:LEAKJS-2"} {
		if got := m.Text("x " + v + " y"); got != "x ***** y" {
			t.Errorf("the masker does not know %q: %q", v, got)
		}
	}
	for _, s := range []string{"a } b", "a ] b", "EOT", "jsonencode(", "# (1 unchanged attribute hidden)", `{"team":"net"}`} {
		if got := m.Text(s); got != s {
			t.Errorf("the masker learned junk: %q shown as %q", s, got)
		}
	}
}
