package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// eventSchema is docs/events.md: for each event, the fields it must have and
// those it may have, with their JSON types.
var eventSchema = map[string]struct{ required, optional []string }{
	"run_started":   {[]string{"time", "event", "run", "stack", "verb", "components", "log_dir"}, nil},
	"step_started":  {[]string{"time", "event", "run", "step", "kind", "label"}, []string{"component"}},
	"step_finished": {[]string{"time", "event", "run", "step", "kind", "label", "status", "duration_ms"}, []string{"component", "reason", "warning"}},
	"log":           {[]string{"time", "event", "run", "step", "line"}, []string{"component"}},
	"output":        {[]string{"time", "event", "run", "step", "component", "name", "value"}, []string{"secret"}},
	"run_finished":  {[]string{"time", "event", "run", "stack", "verb", "status", "duration_ms", "components", "log_dir"}, nil},
}

var fieldTypes = map[string]string{
	"time": "string", "event": "string", "run": "string", "stack": "string", "verb": "string", "step": "string",
	"kind": "string", "label": "string", "component": "string", "status": "string", "duration_ms": "number",
	"reason": "string", "warning": "string", "line": "string", "name": "string", "value": "string",
	"secret": "bool", "components": "array", "log_dir": "string",
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}

// TestJSONEventsShape checks every line of deploy --output json against the
// shape docs/events.md documents, and that the file in the run folder holds
// the same events.
func TestJSONEventsShape(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"hub.yaml": `version: 1
kind: stack
meta: {name: events}
components:
  - name: db
    source: {dir: db}
  - name: cache
    source: {dir: broken}
  - name: app
    source: {dir: db}
    depends: [cache]
lifecycle:
  optional: [cache, app]
`,
		"db/hub-component.yaml":     "version: 1\nkind: component\nmeta: {name: db}\noutputs:\n  - name: host\n  - name: db.password\n",
		"db/Makefile":               "deploy:\n\t@echo hello\n\t@printf 'Outputs:\\nhost = h\\ndb.password = pw-123456\\n\\n'\n",
		"broken/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: broken}\n",
		"broken/Makefile":           "deploy:\n\t@exit 3\n",
	})
	cmd := exec.Command("gantry", "deploy", "hub.yaml", "--output", "json")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("deploy: %v\n%s", err, out)
	}
	seen := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	n := 0
	for sc.Scan() {
		n++
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %d is not JSON: %v\n%s", n, err, sc.Text())
		}
		name, _ := ev["event"].(string)
		schema, ok := eventSchema[name]
		if !ok {
			t.Fatalf("line %d: unknown event %q", n, name)
		}
		seen[name]++
		allowed := map[string]bool{}
		for _, f := range append(append([]string{}, schema.required...), schema.optional...) {
			allowed[f] = true
		}
		for _, f := range schema.required {
			if _, ok := ev[f]; !ok {
				t.Errorf("line %d (%s): missing %q: %s", n, name, f, sc.Text())
			}
		}
		for f, v := range ev {
			if !allowed[f] {
				t.Errorf("line %d (%s): undocumented field %q", n, name, f)
			}
			if got := jsonType(v); got != fieldTypes[f] {
				t.Errorf("line %d (%s): %s is a %s, documented as %s", n, name, f, got, fieldTypes[f])
			}
		}
		if ts, _ := ev["time"].(string); ts != "" {
			if _, err := time.Parse(time.RFC3339Nano, ts); err != nil {
				t.Errorf("line %d: time %q is not RFC 3339", n, ts)
			}
		}
		if name == "output" && ev["name"] == "db.password" && (ev["value"] != "*****" || ev["secret"] != true) {
			t.Errorf("secret output not masked: %s", sc.Text())
		}
		if comps, ok := ev["components"].([]any); ok {
			for _, c := range comps {
				m := c.(map[string]any)
				for _, f := range []string{"name", "verb", "status", "duration_ms"} {
					if _, ok := m[f]; !ok {
						t.Errorf("line %d: a component lacks %q: %v", n, f, m)
					}
				}
			}
		}
	}
	for _, e := range []string{"run_started", "step_started", "step_finished", "log", "output", "run_finished"} {
		if seen[e] == 0 {
			t.Errorf("no %s event in:\n%s", e, out)
		}
	}
	if seen["run_started"] != 1 || seen["run_finished"] != 1 {
		t.Errorf("want one run_started and one run_finished, got %v", seen)
	}
	if strings.Contains(string(out), "pw-123456") {
		t.Errorf("a secret leaked into the events")
	}
	files, _ := filepath.Glob(filepath.Join(dir, ".gantry/runs/*/events.jsonl"))
	if len(files) != 1 {
		t.Fatalf("want one events.jsonl, got %v", files)
	}
	saved, _ := os.ReadFile(files[0])
	if bytes.Count(saved, []byte("\n")) != n {
		t.Errorf("events.jsonl has %d events, stdout %d", bytes.Count(saved, []byte("\n")), n)
	}
}

// TestResumeHundredComponentsStartsNoProcess redeploys an unchanged stack of
// 100 components with --resume: not one process starts.
func TestResumeHundredComponentsStartsNoProcess(t *testing.T) {
	var hub strings.Builder
	hub.WriteString("version: 1\nkind: stack\nmeta: {name: hundred}\ncomponents:\n")
	for i := 0; i < 100; i++ {
		fmt.Fprintf(&hub, "  - name: c%03d\n    source: {dir: comp}\n", i)
		if i > 0 {
			fmt.Fprintf(&hub, "    depends: [c%03d]\n", i-1)
		}
	}
	dir := writeFiles(t, map[string]string{
		"hub.yaml":                hub.String(),
		"comp/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: comp}\n",
		"comp/deploy":             "#!/bin/sh\necho $COMPONENT_NAME >> ../started.txt\n",
	})
	os.Chmod(filepath.Join(dir, "comp/deploy"), 0o755)
	run := func(args ...string) string { return gantryIn(t, dir, args...) }
	run("deploy", "hub.yaml", "--parallel", "8")
	data, _ := os.ReadFile(filepath.Join(dir, "started.txt"))
	if got := strings.Count(string(data), "\n"); got != 100 {
		t.Fatalf("the first deploy started %d processes, want 100", got)
	}
	os.Remove(filepath.Join(dir, "started.txt"))
	out := run("deploy", "hub.yaml", "--resume", "--parallel", "8")
	if _, err := os.Stat(filepath.Join(dir, "started.txt")); err == nil {
		data, _ := os.ReadFile(filepath.Join(dir, "started.txt"))
		t.Fatalf("--resume of an unchanged stack started processes:\n%s", data)
	}
	if got := regexp.MustCompile(`(?m)^c\d+ +deploy +unchanged`).FindAllString(out, -1); len(got) != 100 {
		t.Errorf("%d components reported unchanged, want 100", len(got))
	}
}

// TestDumbTerminalGetsPlainLines deploys on a terminal whose TERM says it
// cannot move the cursor (dumb, or no TERM: Emacs' shell, a serial
// console): it gets the plain lines, without any escape sequence — no
// cursor moves, no colours —, as when stdout is not a terminal; a terminal
// that can (xterm) gets the live display.
func TestDumbTerminalGetsPlainLines(t *testing.T) {
	dir := writeStack(t, map[string]string{
		"hub.yaml":               "version: 1\nkind: stack\nmeta: {name: dumb}\ncomponents:\n  - name: app\n    source: {dir: app}\n",
		"app/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: app}\n",
		"app/deploy":             "#!/bin/sh\necho starting\nsleep 0.3\necho ready\n",
	})
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TERM=") && !strings.HasPrefix(kv, "NO_COLOR=") {
			env = append(env, kv)
		}
	}
	for _, tc := range []struct {
		name, term string // term "" leaves TERM unset
		live       bool
	}{
		{"TERM=dumb", "dumb", false},
		{"no TERM", "", false},
		{"TERM=xterm", "xterm", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := env
			if tc.term != "" {
				e = append(e[:len(e):len(e)], "TERM="+tc.term)
			}
			s := startPTYEnv(t, dir, nil, e, "-v", "deploy", "hub.yaml")
			if code := s.wait(); code != 0 {
				t.Fatalf("exit %d:\n%s", code, s.output())
			}
			out := s.output()
			if tc.live {
				if !strings.Contains(out, "\x1b[") {
					t.Errorf("no live display on a terminal that has one:\n%q", out)
				}
				return
			}
			if strings.Contains(out, "\x1b") {
				t.Errorf("escape sequences on a dumb terminal:\n%q", out)
			}
			for _, want := range []string{"[app] starting", "[app] ready", "DBG process started"} {
				if !strings.Contains(out, want) {
					t.Errorf("no %q among the plain lines:\n%s", want, out)
				}
			}
		})
	}
}
