package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// tmuxSession drives a tmux server of its own (its own socket), so that the
// display is tested in a real terminal.
type tmuxSession struct {
	t      *testing.T
	tmux   string
	socket string
}

func (s *tmuxSession) run(args ...string) string {
	s.t.Helper()
	out, err := exec.Command(s.tmux, append([]string{"-S", s.socket}, args...)...).CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// capture returns the pane with its history (lines scrolled off the top).
func (s *tmuxSession) capture() string { return s.run("capture-pane", "-p", "-S", "-", "-t", "g") }

// waitScreen waits until the pane shows a line matching re.
func (s *tmuxSession) waitScreen(re string) string {
	s.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		last = s.capture()
		if rx.MatchString(last) {
			return last
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.t.Fatalf("the screen never matched %q; it showed:\n%s", re, last)
	return ""
}

var (
	durationRE = regexp.MustCompile(`\b\d+(\.\d+)?(ms|s)\b`)
	runIDRE    = regexp.MustCompile(`\d{8}T\d{6}Z-[0-9a-f]{6}`)
	spinnerRE  = regexp.MustCompile(`[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]`)
)

func normalizeScreen(s string) string {
	s = runIDRE.ReplaceAllString(s, "RUN")
	s = durationRE.ReplaceAllString(s, "T")
	s = spinnerRE.ReplaceAllString(s, "*")
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		lines = append(lines, strings.TrimRight(l, " "))
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n") + "\n"
}

// TestTTYDisplayInTmux runs a deploy in a real terminal (tmux) and looks at
// the screen as a person would: while a component runs, a live line with a
// spinner, its name, the time so far and its last output line, under the
// components that finished; after a resize, no line is garbled or repeated;
// at the end, the summary and where the logs are. The final screen is kept in
// testdata/tty-deploy.golden (go test -update rewrites it).
func TestTTYDisplayInTmux(t *testing.T) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed: scripts/test.sh installs it (apt-get install tmux)")
	}
	gantry, err := exec.LookPath("gantry")
	if err != nil {
		t.Fatal(err)
	}
	dir := writeFiles(t, map[string]string{
		"hub.yaml": `version: 1
kind: stack
meta: {name: live}
components:
  - name: db
    source: {dir: db}
  - name: api
    source: {dir: api}
  - name: web
    source: {dir: web}
    depends: [api]
`,
		"db/hub-component.yaml":  "version: 1\nkind: component\nmeta: {name: db}\n",
		"db/Makefile":            "deploy:\n\t@echo database ready\n",
		"api/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: api}\n",
		"api/Makefile": "deploy:\n\t@echo connecting\n\t@echo migrating schema, a line long enough to be cut when the terminal gets narrow\n" +
			"\t@while [ ! -e ../release ]; do sleep 0.05; done\n\t@echo done\n",
		"web/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: web}\n",
		"web/Makefile":           "deploy:\n\t@echo serving\n",
	})
	s := &tmuxSession{t: t, tmux: tmux, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	s.run("new-session", "-d", "-x", "100", "-y", "24", "-s", "g", "-c", dir,
		"env NO_COLOR=1 "+gantry+" deploy hub.yaml --parallel 2; echo EXIT=$?; sleep 60")
	t.Cleanup(func() { exec.Command(tmux, "-S", s.socket, "kill-server").Run() })

	screen := s.waitScreen(`api +\d+(\.\d+)?m?s +migrating schema`)
	if !regexp.MustCompile(`(?m)^✓ db +deployed +\d`).MatchString(screen) {
		t.Errorf("the finished component is not shown above the live line:\n%s", screen)
	}
	if !regexp.MustCompile(`(?m)^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] api +\d`).MatchString(screen) {
		t.Errorf("no spinner on the running component's line:\n%s", screen)
	}

	s.run("resize-window", "-t", "g", "-x", "60")
	// The display redraws at its next tick: wait until the pane fits.
	fits := func(screen string) bool {
		for _, l := range strings.Split(screen, "\n") {
			if len([]rune(l)) > 60 {
				return false
			}
		}
		return strings.Count(screen, " api ") == 1
	}
	deadline := time.Now().Add(30 * time.Second)
	for screen = s.capture(); !fits(screen) && time.Now().Before(deadline); screen = s.capture() {
		time.Sleep(50 * time.Millisecond)
	}
	if n := strings.Count(screen, " api "); n != 1 {
		t.Errorf("after the resize the live line shows %d times:\n%s", n, screen)
	}
	for _, l := range strings.Split(screen, "\n") {
		if len([]rune(l)) > 60 {
			t.Errorf("a line wider than the terminal: %q", l)
		}
	}
	if strings.Count(screen, "✓ db") != 1 || strings.Count(screen, "✓ pre-flight") != 1 {
		t.Errorf("finished lines repeated or lost after the resize:\n%s", screen)
	}

	if err := os.WriteFile(filepath.Join(dir, "release"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	screen = s.waitScreen(`EXIT=\d+`)
	if !strings.Contains(screen, "EXIT=0") {
		t.Fatalf("deploy failed:\n%s", screen)
	}
	if spinnerRE.MatchString(screen) {
		t.Errorf("a live line was left on the screen:\n%s", screen)
	}
	got := normalizeScreen(screen)
	golden := filepath.Join("testdata", "tty-deploy.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if string(want) != got {
		t.Errorf("final screen differs from %s:\n--- want\n%s--- got\n%s", golden, want, got)
	}
}
