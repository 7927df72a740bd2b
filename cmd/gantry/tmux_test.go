package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
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

// waitExit waits until gantry has exited, ends the test unless it exited
// 0, and returns the screen.
func (s *tmuxSession) waitExit() string {
	s.t.Helper()
	screen := s.waitScreen(`EXIT=\d+`)
	if !strings.Contains(screen, "EXIT=0") {
		s.t.Fatalf("deploy failed:\n%s", screen)
	}
	return screen
}

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

// normalizeScreen makes a screen comparable from run to run: run ids,
// durations and spinner frames replaced, trailing spaces and empty lines
// dropped (a terminal that rewraps on a resize, as tmux does, may leave a
// row of its own in the scrollback, which no program can erase), and the
// lines of components that finished at once sorted.
// cutAfterTimeRE is the cut end of a live header, after its elapsed time.
var cutAfterTimeRE = regexp.MustCompile(`(?m)^(.* · T · )\S*…$`)

func normalizeScreen(s string) string {
	s = runIDRE.ReplaceAllString(s, "RUN")
	s = durationRE.ReplaceAllString(s, "T")
	s = spinnerRE.ReplaceAllString(s, "*")
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimRight(l, " "); l != "" {
			lines = append(lines, l)
		}
	}
	// Runs of "✓ name  deployed  T" lines come in the order the components
	// finished.
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && strings.HasPrefix(lines[j], "✓ ") && !strings.HasPrefix(lines[j], "✓ pre-flight") {
			j++
		}
		sort.Strings(lines[i:j])
		i = j + 1
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestTTYDisplayInTmux runs a deploy in a real terminal (tmux) and looks at
// the screen as a person would: while a component runs, a live line with a
// spinner, its name, the time so far and its last output line, under the
// components that finished; after a resize, no line is garbled or repeated;
// at the end, the summary and where the logs are. The final screen is kept in
// testdata/tty-deploy.golden (go test -update rewrites it).
func TestTTYDisplayInTmux(t *testing.T) {
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
			"\t@while [ ! -e ../release ] && [ -e ../hub.yaml ]; do sleep 0.05; done\n\t@echo done\n",
		"web/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: web}\n",
		"web/Makefile":           "deploy:\n\t@echo serving\n",
	})
	s := startTmux(t, dir, 100, 24, "deploy", "hub.yaml", "--parallel", "2")

	// db ends on its own, api runs until released: wait for both, in
	// either order (on a loaded machine db's end may come after api's
	// second line), then look at one screen that has both.
	screen := s.waitScreen(`(?ms)^✓ db +deployed +\d.*api +\d+(\.\d+)?m?s +migrating schema`)
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

	touch(t, filepath.Join(dir, "release"))
	screen = s.waitExit()
	if spinnerRE.MatchString(screen) {
		t.Errorf("a live line was left on the screen:\n%s", screen)
	}
	compareGolden(t, "tty-deploy.golden", normalizeScreen(screen))
}

// startTmux starts gantry with args in a tmux terminal of width×height
// in dir, its exit code printed after it as EXIT=n.
func startTmux(t *testing.T, dir string, width, height int, args ...string) *tmuxSession {
	t.Helper()
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed: scripts/test.sh installs it (apt-get install tmux)")
	}
	gantry, err := exec.LookPath("gantry")
	if err != nil {
		t.Fatal(err)
	}
	s := &tmuxSession{t: t, tmux: tmux, socket: filepath.Join(t.TempDir(), "tmux.sock")}
	s.run("new-session", "-d", "-x", strconv.Itoa(width), "-y", strconv.Itoa(height), "-s", "g", "-c", dir,
		"env NO_COLOR=1 "+gantry+" "+strings.Join(args, " ")+"; echo EXIT=$?; sleep 60")
	t.Cleanup(func() { exec.Command(tmux, "-S", s.socket, "kill-server").Run() })
	return s
}

// headerRE matches the live area's header line.
var headerRE = regexp.MustCompile(`(?m)^\d+/\d+ done · \d+ running · \d+ waiting · \d+ failed`)

// TestTTYLiveAreaBoundedInTmux deploys 30 components, 20 at once, in a
// terminal of 60×15: the live area shows the header and as many running
// components as fit in two thirds of the height, counting the others; the
// scrollback never holds a frame — while the run goes on, the screen and
// its history hold one header and no more live lines than fit; at the end
// none at all — and the final screen (testdata/tty-bounded.golden, go test
// -update rewrites it) has a line per component and the summary.
func TestTTYLiveAreaBoundedInTmux(t *testing.T) {
	files := map[string]string{
		"comp/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: comp}\n",
		"comp/deploy":             "#!/bin/sh\necho working on $COMPONENT_NAME\nwhile [ ! -e ../release ] && [ -e ../hub.yaml ]; do sleep 0.05; done\n",
	}
	var hub strings.Builder
	hub.WriteString("version: 1\nkind: stack\nmeta: {name: thirty}\ncomponents:\n")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&hub, "  - name: c%02d\n    source: {dir: comp}\n", i)
	}
	files["hub.yaml"] = hub.String()
	dir := writeStack(t, files)
	s := startTmux(t, dir, 60, 15, "deploy", "hub.yaml", "--parallel", "20")
	// Every running component has said what it works on.
	re := `(?s)0/30 done · 20 running · 10 waiting · 0 failed`
	for i := 1; i <= 8; i++ {
		re += fmt.Sprintf(`.*working on c%02d\n`, i)
	}
	screen := s.waitScreen(re + `  \+12 more running`)
	live := normalizeScreen(screen)
	if n := len(headerRE.FindAllString(screen, -1)); n != 1 {
		t.Errorf("%d headers on the screen and in its scrollback, want 1:\n%s", n, screen)
	}
	if n := len(spinnerRE.FindAllString(screen, -1)); n != 8 {
		t.Errorf("%d live lines on the screen and in its scrollback, want 8 (10 rows of 15: the header, 8, the count):\n%s", n, screen)
	}
	// The header is cut at the terminal's width: how much of what comes
	// after the elapsed time shows depends on the time's length (9s,
	// 10s), which the machine's speed decides.
	live = cutAfterTimeRE.ReplaceAllString(live, "$1…")
	wantLive := "0/30 done · 20 running · 10 waiting · 0 failed · T · …\n"
	for i := 1; i <= 8; i++ {
		wantLive += fmt.Sprintf("* c%02d  T  working on c%02d\n", i, i)
	}
	wantLive += "  +12 more running\n"
	if live != wantLive {
		t.Errorf("live screen:\n%s\nwant:\n%s", live, wantLive)
	}

	touch(t, filepath.Join(dir, "release"))
	screen = s.waitExit()
	if spinnerRE.MatchString(screen) || headerRE.MatchString(screen) || strings.Contains(screen, "more running") {
		t.Errorf("a frame of the live area was left on the screen or in its scrollback:\n%s", screen)
	}
	for i := 1; i <= 30; i++ {
		if n := len(regexp.MustCompile(fmt.Sprintf(`(?m)^✓ c%02d +deployed`, i)).FindAllString(screen, -1)); n != 1 {
			t.Errorf("c%02d finished %d times on the screen:\n%s", i, n, screen)
		}
	}
	compareGolden(t, "tty-bounded.golden", normalizeScreen(screen))
}

// compareGolden compares got with testdata/name (go test -update writes it).
func compareGolden(t *testing.T, name, got string) {
	t.Helper()
	golden := filepath.Join("testdata", name)
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
		t.Errorf("screen differs from %s:\n--- want\n%s--- got\n%s", golden, want, got)
	}
}

// TestTTYProbeAttemptsLiveInTmux: while a probe waits, the component's live
// line shows the probe and its attempts as they fail — not the last line
// of the step before it — and the step's label shows the values it was
// given (${…} expanded).
func TestTTYProbeAttemptsLiveInTmux(t *testing.T) {
	dir := writeStack(t, map[string]string{
		"hub.yaml": `version: 1
kind: stack
meta: {name: probing}
components:
  - name: api
    source: {dir: api}
parameters:
  - name: api.flag
    value: ../ready
`,
		"api/hub-component.yaml": `version: 1
kind: component
meta: {name: api}
parameters:
  - name: api.flag
lifecycle:
  quality_probe:
    steps:
      - probe: {plugin: exec, arguments: {command: "test -e ${api.flag}", interval: 0.2}, timeout: 120}
`,
		"api/deploy": "#!/bin/sh\necho the verb said goodbye\n",
	})
	s := startTmux(t, dir, 120, 20, "deploy", "hub.yaml")
	first := s.waitScreen(`api +[\d.]+m?s +probe exec run_wait test -e \.\./ready: attempt \d+ failed \(\d+s of 2m0s\): test -e \.\./ready`)
	if strings.Contains(first, "goodbye") {
		t.Errorf("the live line shows the last line of the verb:\n%s", first)
	}
	n := attemptOf(t, first)
	// The attempts go on, in the same live line.
	later := s.waitScreen(fmt.Sprintf(`attempt (%s) failed`, strings.Join(nextNumbers(n, 50), "|")))
	if c := strings.Count(later, "probe exec run_wait"); c != 1 {
		t.Errorf("the probe shows %d times:\n%s", c, later)
	}
	touch(t, filepath.Join(dir, "ready"))
	if screen := s.waitExit(); spinnerRE.MatchString(screen) {
		t.Errorf("a live line was left on the screen:\n%s", screen)
	}
}

var attemptRE = regexp.MustCompile(`attempt (\d+) failed`)

func attemptOf(t *testing.T, screen string) int {
	t.Helper()
	m := attemptRE.FindStringSubmatch(screen)
	if m == nil {
		t.Fatalf("no attempt on the screen:\n%s", screen)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// nextNumbers are the k numbers after n.
func nextNumbers(n, k int) []string {
	out := make([]string, k)
	for i := range out {
		out[i] = strconv.Itoa(n + 1 + i)
	}
	return out
}

// TestTTYShowQueueInTmux: with --show-queue the live area lists the
// components waiting, each with what it waits for: the components it runs
// after that have not ended, or a free slot.
func TestTTYShowQueueInTmux(t *testing.T) {
	dir := writeStack(t, map[string]string{
		"hub.yaml": `version: 1
kind: stack
meta: {name: queue}
components:
  - name: db
    source: {dir: comp}
  - name: cache
    source: {dir: comp}
  - name: api
    source: {dir: comp}
    depends: [db, cache]
  - name: web
    source: {dir: comp}
    depends: [api]
`,
		"comp/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: comp}\n",
		"comp/deploy":             "#!/bin/sh\nwhile [ ! -e ../release ] && [ -e ../hub.yaml ]; do sleep 0.05; done\n",
	})
	s := startTmux(t, dir, 80, 20, "deploy", "hub.yaml", "--show-queue")
	screen := s.waitScreen(`0/4 done · 1 running · 3 waiting`)
	for _, want := range []string{
		`(?m)^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] db  `,
		`(?m)^· cache  waiting for a free slot \(--parallel\)$`,
		`(?m)^· api  after db, cache$`,
		`(?m)^· web  after api$`,
	} {
		if !regexp.MustCompile(want).MatchString(screen) {
			t.Errorf("no line matches %q:\n%s", want, screen)
		}
	}
	touch(t, filepath.Join(dir, "release"))
	if screen = s.waitExit(); strings.Contains(screen, "· web") {
		t.Errorf("the queue was left on the screen:\n%s", screen)
	}
}

// TestTTYStderrAboveTheLiveArea interrupts a deploy run with -v in a real
// terminal (tmux) whose component outlives SIGTERM: what gantry writes to
// stderr while the live area is drawn — the -v logs, the interrupt's
// message — is printed above the live area, not drawn over by the next
// frame, and leaves no copy of the live area in the scrollback; while the
// run stops, the header says so and what another interrupt does.
func TestTTYStderrAboveTheLiveArea(t *testing.T) {
	dir := writeStack(t, map[string]string{
		"hub.yaml":                "version: 1\nkind: stack\nmeta: {name: stubborn}\ncomponents:\n  - name: slow\n    source: {dir: slow}\n",
		"slow/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: slow}\n",
		"slow/deploy": "#!/bin/sh\ntrap 'echo got TERM, going on' TERM\necho working\n" +
			"while [ ! -e ../release ] && [ -e ../hub.yaml ]; do sleep 0.05; done\necho released\n",
	})
	s := startTmux(t, dir, 150, 14, "-v", "deploy", "hub.yaml")
	s.waitScreen(`slow +\d+(\.\d+)?m?s +working`)
	s.run("send-keys", "-t", "g", "C-c")
	screen := s.waitScreen(`(?m)^0/1 done · 1 running · .* · stopping \(interrupt again to stop at once\) · deploy stubborn$`)
	const message = "gantry: interrupted: stopping the running steps"
	if !strings.Contains(screen, message) {
		t.Errorf("the interrupt's message is not on the screen:\n%s", screen)
	}
	touch(t, filepath.Join(dir, "release"))
	screen = s.waitScreen(`EXIT=\d+`)
	if !strings.Contains(screen, "EXIT=130") {
		t.Errorf("exit code not 130:\n%s", screen)
	}
	if n := strings.Count(screen, message); n != 1 {
		t.Errorf("the interrupt's message shows %d times on the screen and in its scrollback, want 1:\n%s", n, screen)
	}
	if !regexp.MustCompile(`(?m) DBG process started pid=\d+ program=deploy `).MatchString(screen) {
		t.Errorf("the -v log of the process that started is lost:\n%s", screen)
	}
	if !regexp.MustCompile(`(?m) DBG process ended pid=\d+ `).MatchString(screen) {
		t.Errorf("the -v log of the process that ended during the live display is lost:\n%s", screen)
	}
	if spinnerRE.MatchString(screen) || headerRE.MatchString(screen) {
		t.Errorf("a frame of the live area was left on the screen or in its scrollback:\n%s", screen)
	}
}
