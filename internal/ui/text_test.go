package ui

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
)

func TestSanitize(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "hello world", "hello world"},
		{"unterminated colour", "\x1b[41mred background", "red background"},
		{"colour and reset", "\x1b[1;32mok\x1b[0m done", "ok done"},
		{"256 and true colour", "\x1b[38;5;196ma\x1b[48;2;1;2;3mb", "ab"},
		{"cursor moves and clears", "\x1b[2J\x1b[H\x1b[5Aup\x1b[K", "up"},
		{"private modes", "\x1b[?25lhidden cursor\x1b[?1049h", "hidden cursor"},
		{"title with BEL", "\x1b]0;my title\x07text", "text"},
		{"hyperlink with ST", "\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\", "link"},
		{"unterminated OSC", "before\x1b]0;title", "before"},
		{"DCS", "\x1bPq#0;2;0;0;0\x1b\\after", "after"},
		{"charset and keypad", "\x1b(B\x1b=\x1b7x\x1b8", "x"},
		{"lone ESC at end", "text\x1b", "text"},
		{"ESC cut in a CSI", "text\x1b[1;3", "text"},
		{"8-bit CSI", "\u009b31mred", "red"},
		{"8-bit OSC", "\u009d0;title\u009cafter", "after"},
		{"controls", "a\x07b\x08c\x00d\x7fe\x0ef", "abcdef"},
		{"tab", "a\tb", "a b"},
		{"carriage return", "progress 10%\rprogress 20%\rdone", "done"},
		{"CRLF", "line\r\n", "line"},
		{"trailing CR", "line\r", "line"},
		{"invalid UTF-8", "a\xffb\x9bc", "a\uFFFDb\uFFFDc"},
		{"unicode kept", "✓ déjà 日本 🚀", "✓ déjà 日本 🚀"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Sanitize(tc.in); got != tc.want {
				t.Errorf("Sanitize(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestWidth(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
	}{
		{"abc", 3},
		{"\x1b[31mabc\x1b[0m", 3},
		{"⠋ ✓ …", 5},
		{"日本", 4},
		{"🚀x", 3},
		{"e\u0301", 1}, // combining accent
		{"", 0},
	} {
		if got := Width(tc.in); got != tc.want {
			t.Errorf("Width(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"a longer line", 6, "a lon…"},
		{"日本語テキスト", 5, "日本…"},
		{"日本語テキスト", 6, "日本…"},
		// escapes take no columns, are never cut, and a cut line resets
		{"\x1b[31mred text here\x1b[0m", 6, "\x1b[31mred t…\x1b[0m"},
		{"\x1b[31mred\x1b[0m", 3, "\x1b[31mred\x1b[0m"},
		{"anything", 0, "anything"},
	} {
		got := Truncate(tc.in, tc.n)
		if got != tc.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
		if tc.n > 0 && Width(got) > tc.n {
			t.Errorf("Truncate(%q, %d) is %d columns wide", tc.in, tc.n, Width(got))
		}
	}
}

// TestTTYStripsComponentEscapes feeds the live display a component's line
// with an unterminated colour and cursor controls: what reaches the terminal
// holds none of them, the live line fits the width counted in columns, and
// no attribute stays set after the display stops.
func TestTTYStripsComponentEscapes(t *testing.T) {
	p := plan.New("s", plan.VerbDeploy)
	n := &plan.Node{ID: "api/deploy", Kind: "component", Label: "deploy api", Component: "api", Group: "api", Verb: plan.VerbDeploy}
	end := &plan.Node{ID: "api/end", Kind: "end", Label: "end api", Component: "api", Group: "api", Hidden: true}
	p.Nodes = append(p.Nodes, n, end)
	tracker := NewTracker(p)
	var buf bytes.Buffer
	const width = 40
	tty := NewTTY(&buf, Style{}, tracker, func() (int, int) { return width, 20 }, TTYOptions{})
	obs := Multi{tracker, tty}
	obs.StepStarted(n, time.Now())
	raw := "\x1b[41m\x1b]0;pwned\x07日本語 migrating\x1b[2J a line long enough to be cut at the terminal's width"
	obs.Log(n, raw, time.Now())
	tty.render(true)
	tty.Paused(true)
	obs.Log(n, "\x1b[31mprompt line", time.Now())
	tty.Paused(false)
	obs.StepFinished(n, plan.Result{Status: plan.Failed, Reason: "\x1b[41mexit 1"}, time.Now(), time.Now())
	obs.StepFinished(end, plan.Result{Status: plan.Skipped, Reason: "failed"}, time.Now(), time.Now())
	tty.Stop()

	out := buf.String()
	// Only the display's own controls: cursor up/clear/hide/show and a reset.
	own := regexp.MustCompile(`\x1b\[(\d+A|J|K|2K|B|\?25[lh]|0m)`)
	if rest := own.ReplaceAllString(out, ""); strings.ContainsAny(rest, "\x1b\x07") {
		t.Errorf("component escapes reached the terminal: %q", rest)
	}
	if !strings.HasSuffix(out, "\x1b[0m\x1b[?25h") {
		t.Errorf("the display does not end with an attribute reset: %q", out)
	}
	var live string
	for _, l := range strings.Split(own.ReplaceAllString(out, ""), "\n") {
		if strings.Contains(l, "migrating") {
			live = strings.TrimPrefix(l, "\r")
		}
	}
	if live == "" {
		t.Fatalf("no live line with the component's last line: %q", out)
	}
	if w := Width(live); w > width-1 {
		t.Errorf("live line is %d columns wide, the terminal %d: %q", w, width, live)
	}
	if !strings.HasSuffix(live, "…") || !strings.Contains(live, "日本語 migrating") {
		t.Errorf("live line not cut as expected: %q", live)
	}
	if !strings.Contains(out, "prompt line\n") || !regexp.MustCompile(`✗ api +failed .*  exit 1(\x1b\[K)?\n`).MatchString(out) {
		t.Errorf("paused output or failure reason lost: %q", out)
	}
	var sum bytes.Buffer
	WriteSummary(&sum, tracker.Components(), time.Second)
	if strings.Contains(sum.String(), "\x1b") || !strings.Contains(sum.String(), "exit 1") {
		t.Errorf("the summary holds escapes: %q", sum.String())
	}
}
