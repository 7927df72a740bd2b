package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/ui"
)

// TestStderrLinesGoToTheLiveDisplay: while a live display is on stderr's
// terminal, what is written to stderr reaches the display a whole line at
// a time (a line written in pieces is one line; the blank line before the
// interrupt's message is left out) and nothing is written where the cursor
// is; once detached, the start of a line never ended goes to stderr, and
// stderr is written to again.
func TestStderrLinesGoToTheLiveDisplay(t *testing.T) {
	var screen, raw bytes.Buffer
	tty := ui.NewTTY(&screen, ui.Style{}, ui.NewTracker(plan.New("s", plan.VerbDeploy)), func() (int, int) { return 100, 20 }, ui.TTYOptions{})
	s := &stderrStream{w: &raw, live: tty}
	for _, w := range []string{"\ngantry: interrupted\n", "WRN a warn", "ing\r\n", "DBG one\nDBG two\n", "no end"} {
		if n, err := s.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", w, n, err)
		}
	}
	if raw.Len() != 0 {
		t.Errorf("written to stderr during the live display: %q", raw.String())
	}
	tty.Stop()
	s.detach()
	s.Write([]byte(" after\n"))
	var lines []string
	for _, l := range strings.Split(strings.ReplaceAll(screen.String(), "\x1b[K\n", "\n"), "\n") {
		if l != "" && !strings.HasPrefix(l, "\x1b") {
			lines = append(lines, l)
		}
	}
	want := []string{"gantry: interrupted", "WRN a warning", "DBG one", "DBG two"}
	if strings.Join(lines, "|") != strings.Join(want, "|") {
		t.Errorf("lines on the display: %q, want %q", lines, want)
	}
	if raw.String() != "no end after\n" {
		t.Errorf("stderr after the live display: %q, want %q", raw.String(), "no end after\n")
	}
}

// TestSameFile: stderr is routed to the live display only when it is the
// very terminal stdout is, whichever descriptor names it.
func TestSameFile(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	fd, err := unix.Dup(int(w.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	dup := os.NewFile(uintptr(fd), "dup")
	defer dup.Close()
	other, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for _, tc := range []struct {
		name string
		a, b *os.File
		want bool
	}{
		{"the same descriptor", w, w, true},
		{"a copy of the descriptor", w, dup, true},
		{"another file", w, other, false},
	} {
		if got := sameFile(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: sameFile = %v, want %v", tc.name, got, tc.want)
		}
	}
}
