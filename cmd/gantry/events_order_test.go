package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// eventsStack has a bit of everything a stream must keep in order: six
// components logging at once, an optional one that fails, one skipped after
// it, a step whose failure on_fail lets pass, and a mandatory one that fails
// under --force.
var eventsStack = map[string]string{
	"st/hub.yaml": `version: 1
kind: stack
meta: {name: ordered}
components:
  - name: a
    source: {dir: chatty}
  - name: b
    source: {dir: chatty}
  - name: c
    source: {dir: chatty}
  - name: broken
    source: {dir: broken}
  - name: after-broken
    source: {dir: chatty}
    depends: [broken]
  - name: warned
    source: {dir: warned}
  - name: fatal
    source: {dir: broken}
  - name: after-fatal
    source: {dir: chatty}
    depends: [fatal]
lifecycle:
  optional: [broken, after-broken]
`,
	"st/chatty/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: chatty}\n",
	"st/chatty/Makefile":           "deploy:\n\t@for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do echo line $$i; done\nundeploy:\n\t@echo bye\n",
	"st/broken/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: broken}\n",
	"st/broken/Makefile":           "deploy:\n\t@echo about to fail\n\t@exit 3\nundeploy:\n\t@true\n",
	"st/warned/hub-component.yaml": `version: 1
kind: component
meta: {name: warned}
lifecycle:
  post_instance_create:
    steps:
      - exec: {arguments: [sh, -c, "echo checking; exit 4"], on_fail: [warn, next]}
`,
	"st/warned/Makefile": "deploy:\n\t@echo warned up\nundeploy:\n\t@true\n",
}

// TestJSONEventsOrder reads the event stream of real runs — a deploy with
// failures, skips and a warning, a --resume that skips what is unchanged,
// an undeploy — on stdout and in the run folder, and checks the promises
// of docs/events.md: a step_started before every step_finished of the
// same step (skips included), one of each per step, times that never go
// backwards in stream order, and log_dir relative to the working
// directory.
func TestJSONEventsOrder(t *testing.T) {
	root := writeFiles(t, eventsStack)
	run := func(dir string, wantCode int, args ...string) []byte {
		t.Helper()
		cmd := exec.Command("gantry", append(args, "--output", "json")...)
		cmd.Dir = dir
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if code := exitCode(t, err); code != wantCode {
			t.Fatalf("gantry %v: exit %d, want %d\n%s%s", args, code, wantCode, out, stderr.String())
		}
		return out
	}
	for _, tt := range []struct {
		name     string
		dir      string
		logDir   string // log_dir up to the run id
		wantCode int
		args     []string
		skipped  bool // the run must skip steps
	}{
		{"deploy from the stack's folder", "st", ".gantry/runs/", 1, []string{"deploy", "hub.yaml", "--parallel", "4", "--force"}, true},
		{"resume from above it", ".", "st/.gantry/runs/", 1, []string{"deploy", "st/hub.yaml", "--parallel", "4", "--force", "--resume"}, true},
		{"undeploy", "st", ".gantry/runs/", 0, []string{"undeploy", "hub.yaml", "--parallel", "4"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := run(filepath.Join(root, tt.dir), tt.wantCode, tt.args...)
			runID := checkEventOrder(t, "stdout", out, tt.logDir, tt.skipped)
			saved, err := os.ReadFile(filepath.Join(root, "st/.gantry/runs", runID, "events.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			checkEventOrder(t, "events.jsonl", saved, tt.logDir, tt.skipped)
		})
	}
}

// checkEventOrder checks one stream and returns its run id.
func checkEventOrder(t *testing.T, name string, stream []byte, logDir string, wantSkips bool) string {
	t.Helper()
	var last time.Time
	started := map[string]bool{}
	finished := map[string]bool{}
	skipped := 0
	runID := ""
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(make([]byte, 1<<16), 1<<22)
	for n := 1; sc.Scan(); n++ {
		var ev struct {
			Time   time.Time `json:"time"`
			Event  string    `json:"event"`
			Run    string    `json:"run"`
			Step   string    `json:"step"`
			Status string    `json:"status"`
			LogDir string    `json:"log_dir"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%s line %d: %v", name, n, err)
		}
		if ev.Time.Before(last) {
			t.Errorf("%s line %d: time %s goes back from %s: %s", name, n, ev.Time.Format(time.RFC3339Nano), last.Format(time.RFC3339Nano), sc.Text())
		}
		last = ev.Time
		runID = ev.Run
		switch ev.Event {
		case "run_started", "run_finished":
			if want := logDir + ev.Run; ev.LogDir != want {
				t.Errorf("%s line %d: log_dir %q, want %q", name, n, ev.LogDir, want)
			}
		case "step_started":
			if started[ev.Step] {
				t.Errorf("%s line %d: %s started twice", name, n, ev.Step)
			}
			started[ev.Step] = true
		case "step_finished":
			if !started[ev.Step] {
				t.Errorf("%s line %d: %s finished (%s) without a step_started before it", name, n, ev.Step, ev.Status)
			}
			if finished[ev.Step] {
				t.Errorf("%s line %d: %s finished twice", name, n, ev.Step)
			}
			finished[ev.Step] = true
			if ev.Status == "skipped" {
				skipped++
			}
		case "log", "output":
			if ev.Step != "" && (!started[ev.Step] || finished[ev.Step]) {
				t.Errorf("%s line %d: %s of %s outside its step: %s", name, n, ev.Event, ev.Step, sc.Text())
			}
		}
	}
	for s := range started {
		if !finished[s] {
			t.Errorf("%s: %s started and never finished", name, s)
		}
	}
	if wantSkips && skipped == 0 {
		t.Errorf("%s: no step was skipped; the stream does not test skips:\n%s", name, stream)
	}
	if !strings.HasPrefix(runID, "20") {
		t.Fatalf("%s: no run id in:\n%s", name, stream)
	}
	return runID
}
