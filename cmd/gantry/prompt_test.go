package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// ptySession runs gantry on a pseudo-terminal and collects what it shows.
type ptySession struct {
	t    *testing.T
	cmd  *exec.Cmd
	tty  *os.File
	mu   sync.Mutex
	seen bytes.Buffer
	done chan struct{}
}

func startPTY(t *testing.T, dir string, args ...string) *ptySession {
	t.Helper()
	return startPTYOut(t, dir, nil, args...)
}

// startPTYOut runs gantry on a pseudo-terminal with its stdout going to
// out instead when out is not nil (deploy > run.log).
func startPTYOut(t *testing.T, dir string, out *os.File, args ...string) *ptySession {
	t.Helper()
	return startPTYEnv(t, dir, out, append(os.Environ(), "NO_COLOR=1"), args...)
}

// startPTYEnv is startPTYOut with the environment env.
func startPTYEnv(t *testing.T, dir string, out *os.File, env []string, args ...string) *ptySession {
	t.Helper()
	bin, err := exec.LookPath("gantry")
	if err != nil {
		t.Fatalf("gantry is not on PATH: %v", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	if out != nil {
		cmd.Stdout = out
	}
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	s := &ptySession{t: t, cmd: cmd, tty: tty, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			s.mu.Lock()
			s.seen.Write(buf[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); tty.Close() })
	return s
}

// waitFor waits until the terminal has shown text.
func (s *ptySession) waitFor(text string) {
	s.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		ok := strings.Contains(s.seen.String(), text)
		s.mu.Unlock()
		if ok {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.t.Fatalf("the terminal never showed %q; it showed:\n%s", text, s.output())
}

func (s *ptySession) send(text string) {
	s.t.Helper()
	if _, err := io.WriteString(s.tty, text); err != nil {
		s.t.Fatal(err)
	}
}

func (s *ptySession) output() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen.String()
}

// wait waits for the process to end and returns its exit code.
func (s *ptySession) wait() int {
	err := s.cmd.Wait()
	<-s.done
	return exitCode(s.t, err)
}

// gantryIn runs gantry in dir and returns its output; a failure fails the
// test.
func gantryIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("gantry", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gantry %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	writeFilesIn(t, dir, files)
	return dir
}

// writeFilesIn writes files, by path relative to dir, into dir.
func writeFilesIn(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

const promptStack = `version: 1
kind: stack
meta: {name: prompts}
parameters:
  - name: region
    kind: user
    brief: Cloud region
  - name: db.password
    kind: user
  - name: replicas
    kind: user
    default: 3
`

// TestPromptOnTerminal checks that user parameters without a value are asked
// for on a terminal, that a secret is read without echo, and that parameters
// with a default are not asked for.
func TestPromptOnTerminal(t *testing.T) {
	dir := writeFiles(t, map[string]string{"hub.yaml": promptStack})
	s := startPTY(t, dir, "params", "hub.yaml", "--show-secrets")
	s.waitFor("db.password: ")
	s.send("hunter2-secret\r")
	s.waitFor("region (Cloud region): ")
	s.send("eu-west-1\r")
	if code := s.wait(); code != 0 {
		t.Fatalf("exit code %d; output:\n%s", code, s.output())
	}
	out := s.output()
	promptPart := out[:strings.Index(out, "NAME")]
	if strings.Contains(promptPart, "hunter2-secret") {
		t.Errorf("the secret was echoed:\n%s", out)
	}
	if !strings.Contains(promptPart, "eu-west-1") {
		t.Errorf("the ordinary answer was not echoed:\n%s", out)
	}
	if strings.Contains(out, "replicas:") {
		t.Errorf("a parameter with a default was asked for:\n%s", out)
	}
	for _, want := range []string{"db.password                    hunter2-secret  prompt", "region                         eu-west-1       prompt", "replicas                       3               default"} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// TestInterruptAtSecretPrompt: Ctrl-C or Ctrl-\ at a secret's prompt (read
// without echo) gives the terminal its echo back, says so and exits 130 —
// they killed gantry by SIGINT or SIGQUIT with the echo left off — and asks
// nothing more.
func TestInterruptAtSecretPrompt(t *testing.T) {
	for _, tc := range []struct{ name, key string }{{"ctrl-c", "\x03"}, {"ctrl-backslash", "\x1c"}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, map[string]string{"hub.yaml": promptStack})
			s := startPTY(t, dir, "deploy", "hub.yaml")
			s.waitFor("db.password: ")
			s.send("hun" + tc.key)
			code := s.wait()
			out := s.output()
			if code != 130 {
				t.Fatalf("exit code %d, want 130; output:\n%s", code, out)
			}
			if !strings.Contains(out, "gantry: interrupted at the prompt for db.password\r\n") {
				t.Errorf("no message of the interrupt:\n%s", out)
			}
			if strings.Contains(out, "region") || strings.Contains(out, "hun") {
				t.Errorf("asked on after the interrupt, or echoed the secret:\n%s", out)
			}
			tio, err := unix.IoctlGetTermios(int(s.tty.Fd()), unix.TCGETS)
			if err != nil {
				t.Fatal(err)
			}
			if tio.Lflag&unix.ECHO == 0 {
				t.Errorf("the terminal's echo is left off")
			}
			if _, err := os.Stat(filepath.Join(dir, "hub.yaml.state")); err == nil {
				t.Errorf("a state was written")
			}
		})
	}
}

// TestNoPromptWithoutTerminal checks that with stdin not a terminal gantry
// never asks and reports the missing values instead.
func TestNoPromptWithoutTerminal(t *testing.T) {
	dir := writeFiles(t, map[string]string{"hub.yaml": promptStack})
	cmd := exec.Command("gantry", "params", "hub.yaml")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader("eu-west-1\nhunter2\n")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Fatalf("want exit code 2, got %v:\n%s", err, out)
	}
	if strings.Contains(string(out), "region (Cloud region):") {
		t.Errorf("prompted without a terminal:\n%s", out)
	}
	if !strings.Contains(string(out), `parameter "region": no value`) {
		t.Errorf("missing value not reported:\n%s", out)
	}
}

const gateStack = `version: 1
kind: stack
meta: {name: gates}
components:
  - name: app
    source: {dir: app}
lifecycle:
  pre_flight:
    steps:
      - gate: "Ready to ship?"
`

var gateFiles = map[string]string{
	"hub.yaml":               gateStack,
	"app/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: app}\n",
	"app/Makefile":           "deploy:\n\t@echo shipping app\n",
}

// TestGateOnTerminal answers a gate on a real terminal: yes lets the run go
// on, anything else stops it before any component runs.
func TestGateOnTerminal(t *testing.T) {
	for _, tt := range []struct {
		answer   string
		wantCode int
		shipped  bool
	}{{"y", 0, true}, {"n", 1, false}} {
		t.Run(tt.answer, func(t *testing.T) {
			dir := writeFiles(t, gateFiles)
			s := startPTY(t, dir, "deploy", "hub.yaml")
			// The prompt names the group that asks.
			s.waitFor("[pre-flight] Ready to ship? [y/N]")
			s.send(tt.answer + "\r")
			if code := s.wait(); code != tt.wantCode {
				t.Fatalf("exit code %d, want %d:\n%s", code, tt.wantCode, s.output())
			}
			shipped := regexp.MustCompile(`(?m)^app +deploy +deployed`).MatchString(s.output())
			if got := shipped; got != tt.shipped {
				t.Errorf("app ran: %v, want %v:\n%s", got, tt.shipped, s.output())
			}
		})
	}
}

// TestGateWithStdoutRedirected: with the display going to a file
// (deploy > run.log), a gate's question is asked on the terminal (stderr),
// where the person sees it; the log has it too.
func TestGateWithStdoutRedirected(t *testing.T) {
	dir := writeFiles(t, gateFiles)
	out, err := os.Create(filepath.Join(dir, "run.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	s := startPTYOut(t, dir, out, "deploy", "hub.yaml")
	s.waitFor("[pre-flight] Ready to ship? [y/N]")
	s.send("y\r")
	if code := s.wait(); code != 0 {
		t.Fatalf("exit code %d:\n%s", code, s.output())
	}
	log, err := os.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "[pre-flight] Ready to ship? [y/N]") || !regexp.MustCompile(`(?m)^app +deploy +deployed`).Match(log) {
		t.Errorf("the run's output lacks the question or the deploy:\n%s", log)
	}
}

// TestComponentGateNamesItsComponent: a component's gate asks on the
// terminal with the component's name before its message, the message's
// values expanded, while another component's live line stood aside.
func TestComponentGateNamesItsComponent(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"hub.yaml": `version: 1
kind: stack
meta: {name: gates}
components:
  - name: db
    source: {dir: db}
  - name: app
    source: {dir: app}
    depends: [db]
parameters:
  - name: app.schema
    value: v42
`,
		"db/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: db}\n",
		"db/Makefile":           "deploy:\n\t@echo db up\n",
		"app/hub-component.yaml": `version: 1
kind: component
meta: {name: app}
parameters:
  - name: app.schema
lifecycle:
  pre_instance_create:
    steps:
      - gate: "Migrate to ${app.schema}?"
`,
		"app/Makefile": "deploy:\n\t@echo shipping app\n",
	})
	s := startPTY(t, dir, "deploy", "hub.yaml")
	s.waitFor("[app] Migrate to v42? [y/N]")
	s.send("y\r")
	if code := s.wait(); code != 0 {
		t.Fatalf("exit code %d:\n%s", code, s.output())
	}
	if !regexp.MustCompile(`(?m)^app +deploy +deployed`).MatchString(s.output()) {
		t.Errorf("app did not deploy:\n%s", s.output())
	}
}

// TestGateQuestionStaysLast: while a component's gate waits for an answer
// on a terminal, another component running alongside goes on printing, but
// only to its log and live line: the question stays the last line on the
// screen, the answer is typed under it, and the other component's lines
// that finish meanwhile come after the answer.
func TestGateQuestionStaysLast(t *testing.T) {
	dir := writeStack(t, map[string]string{
		"hub.yaml": "version: 1\nkind: stack\nmeta: {name: gates}\nlifecycle:\n  parallel: 2\ncomponents:\n" +
			"  - name: chatty\n    source: {dir: chatty}\n  - name: gated\n    source: {dir: gated}\n",
		"chatty/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: chatty}\n",
		// chatty prints until the question was asked, then a little more:
		// it runs before the gate asks (a pause holds back steps not
		// started yet) and ends while it waits, however slow the machine.
		"chatty/deploy": "#!/bin/sh\ntouch ../chatty-started\ni=0\nwhile [ ! -e ../asked ]; do echo chatty line $i; i=$((i+1)); sleep 0.05; done\n" +
			"for i in 1 2 3; do echo chatty after $i; sleep 0.05; done\n",
		"gated/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: gated}\nlifecycle:\n  pre_instance_create:\n    steps:\n" +
			"      - exec: [sh, -c, \"while [ ! -e ../chatty-started ]; do sleep 0.01; done\"]\n      - gate: \"Migrate the database now?\"\n",
		"gated/deploy": "#!/bin/sh\necho migrated\n",
	})
	s := startPTY(t, dir, "deploy", "hub.yaml")
	const question = "[gated] Migrate the database now? [y/N]"
	s.waitFor(question)
	touch(t, filepath.Join(dir, "asked"))
	// chatty ends while the question waits (its log says so).
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(readLogs(t, dir, "chatty.log"), "<== deploy chatty: ok") {
		if time.Now().After(deadline) {
			t.Fatalf("chatty did not end while the gate waited:\n%s", s.output())
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // three frames of the display
	if after := s.output()[strings.Index(s.output(), question)+len(question):]; strings.TrimSpace(after) != "" {
		t.Errorf("printed under the question while it waited: %q", after)
	}
	s.send("y\r")
	if code := s.wait(); code != 0 {
		t.Fatalf("exit code %d:\n%s", code, s.output())
	}
	out := s.output()
	if !regexp.MustCompile(`(?s)` + regexp.QuoteMeta(question) + `\r\ny\r\n.*✓ chatty +deployed`).MatchString(out) {
		t.Errorf("the answer is not under the question, or chatty's line not after it:\n%q", out)
	}
	if strings.Contains(out, "now?: Migrate") {
		t.Errorf("the live line says the gate's label twice:\n%q", out)
	}
}

// readLogs is the text of the run log name of the run in dir ("" when there
// is none yet).
func readLogs(t *testing.T, dir, name string) string {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(dir, ".gantry", "runs", "*", name))
	var sb strings.Builder
	for _, m := range matches {
		b, _ := os.ReadFile(m)
		sb.Write(b)
	}
	return sb.String()
}

const pauseStack = `version: 1
kind: stack
meta: {name: pauses}
components:
  - name: app
    source: {dir: app}
  - name: web
    source: {dir: web}
    depends: [app]
`

// pauseFiles is a stack whose app has a failing step with the given on_fail.
func pauseFiles(onFail string) map[string]string {
	return map[string]string{
		"hub.yaml": pauseStack,
		"app/hub-component.yaml": `version: 1
kind: component
meta: {name: app}
lifecycle:
  post_instance_create:
    steps:
      - exec:
          arguments: [sh, -c, "echo checking; exit 4"]
          label: check app
          on_fail: ` + onFail + `
`,
		"app/Makefile":           "deploy:\n\t@echo app deployed\n",
		"web/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: web}\n",
		"web/Makefile":           "deploy:\n\t@echo web deployed\n",
	}
}

// TestPauseOnTerminal fails a step whose on_fail has pause: the run stops
// and asks. Abort stops the run; continue goes on where the step would have
// without the pause: past it with next, down the failure path without.
func TestPauseOnTerminal(t *testing.T) {
	for _, tt := range []struct {
		onFail, answer string
		wantCode       int
		webRan         bool
	}{
		{"[pause, next]", "c", 0, true},
		{"[pause, next]", "a", 1, false},
		{"[pause]", "c", 1, false},
	} {
		t.Run(tt.onFail+" "+tt.answer, func(t *testing.T) {
			dir := writeFiles(t, pauseFiles(tt.onFail))
			s := startPTY(t, dir, "deploy", "hub.yaml")
			s.waitFor("paused after check app failed: continue or abort? [c/a]")
			s.send(tt.answer + "\r")
			if code := s.wait(); code != tt.wantCode {
				t.Fatalf("exit code %d, want %d:\n%s", code, tt.wantCode, s.output())
			}
			webRan := regexp.MustCompile(`(?m)^web +deploy +deployed`).MatchString(s.output())
			if got := webRan; got != tt.webRan {
				t.Errorf("web ran: %v, want %v:\n%s", got, tt.webRan, s.output())
			}
		})
	}
}

// TestPauseWithoutTerminal: with no terminal to ask, a pause aborts, and
// --yes continues as it approves a gate.
func TestPauseWithoutTerminal(t *testing.T) {
	for _, tt := range []struct {
		args     []string
		wantCode int
		want     string
		webRan   bool
	}{
		{[]string{"deploy", "hub.yaml"}, 1, "no terminal to ask (--yes continues): aborting", false},
		{[]string{"deploy", "hub.yaml", "--yes"}, 0, "no terminal to ask, --yes continues", true},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			dir := writeFiles(t, pauseFiles("[pause, next]"))
			cmd := exec.Command("gantry", tt.args...)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if code := exitCode(t, err); code != tt.wantCode {
				t.Fatalf("exit code %d, want %d:\n%s", code, tt.wantCode, out)
			}
			if !strings.Contains(string(out), tt.want) || strings.Contains(string(out), "web deployed") != tt.webRan {
				t.Errorf("unexpected output:\n%s", out)
			}
			// What let it go on was the pause (said on_fail: warn).
			if tt.webRan && !strings.Contains(string(out), "failed; going on (on_fail: pause, continued)") {
				t.Errorf("the going on does not name the pause:\n%s", out)
			}
		})
	}
}
