package ui

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/procstat"
)

// TestReadRunKilled: a run killed before it finished says how far each
// component got from its steps' events; run_started listed them all waiting
// ("6 waiting" for a run whose 5 components had finished).
func TestReadRunKilled(t *testing.T) {
	events := []string{
		`{"time":"2026-11-30T10:00:00Z","event":"run_started","run":"r","verb":"deploy","components":[{"name":"pre-flight","verb":"deploy","status":"waiting","duration_ms":0},{"name":"a","verb":"deploy","status":"waiting","duration_ms":0},{"name":"b","verb":"deploy","status":"waiting","duration_ms":0},{"name":"c","verb":"deploy","status":"waiting","duration_ms":0},{"name":"d","verb":"deploy","status":"waiting","duration_ms":0},{"name":"e","verb":"deploy","status":"waiting","duration_ms":0},{"name":"f","verb":"deploy","status":"waiting","duration_ms":0},{"name":"g","verb":"deploy","status":"waiting","duration_ms":0}]}`,
		`{"time":"2026-11-30T10:00:00Z","event":"step_started","run":"r","step":"pre-flight/step/0","kind":"exec"}`,
		`{"time":"2026-11-30T10:00:00Z","event":"step_finished","run":"r","step":"pre-flight/step/0","kind":"exec","status":"ok"}`,
		`{"time":"2026-11-30T10:00:00Z","event":"step_started","run":"r","step":"a/begin","component":"a"}`,
		`{"time":"2026-11-30T10:00:00Z","event":"step_finished","run":"r","step":"a/begin","component":"a","status":"ok"}`,
		`{"time":"2026-11-30T10:00:00Z","event":"step_started","run":"r","step":"a/deploy","component":"a"}`,
		`{"time":"2026-11-30T10:00:00Z","event":"step_finished","run":"r","step":"a/deploy","component":"a","status":"ok"}`,
		`{"time":"2026-11-30T10:00:00Z","event":"step_started","run":"r","step":"a/end","component":"a"}`,
		`{"time":"2026-11-30T10:00:00Z","event":"step_finished","run":"r","step":"a/end","component":"a","status":"ok"}`,
		// f was killed after its verb's step, before its end recorded it.
		`{"time":"2026-11-30T10:00:00Z","event":"step_started","run":"r","step":"f/begin","component":"f"}`,
		`{"time":"2026-11-30T10:00:00Z","event":"step_finished","run":"r","step":"f/begin","component":"f","status":"ok"}`,
		`{"time":"2026-11-30T10:00:00Z","event":"step_started","run":"r","step":"f/deploy","component":"f"}`,
		`{"time":"2026-11-30T10:00:00Z","event":"step_finished","run":"r","step":"f/deploy","component":"f","status":"ok"}`,
		// g was unchanged: one step, no begin or end.
		`{"time":"2026-11-30T10:00:00Z","event":"step_started","run":"r","step":"g/deploy","component":"g"}`,
		`{"time":"2026-11-30T10:00:00Z","event":"step_finished","run":"r","step":"g/deploy","component":"g","status":"ok"}`,
		`{"time":"2026-11-30T10:00:00Z","event":"step_started","run":"r","step":"b/deploy","component":"b"}`,
		`{"time":"2026-11-30T10:00:00Z","event":"step_finished","run":"r","step":"b/deploy","component":"b","status":"failed","reason":"exit 1"}`,
		`{"time":"2026-11-30T10:00:00Z","event":"step_started","run":"r","step":"c/deploy","component":"c"}`,
		`{"time":"2026-11-30T10:00:00Z","event":"step_started","run":"r","step":"d/deploy","component":"d"}`,
		`{"time":"2026-11-30T10:00:00Z","event":"step_finished","run":"r","step":"d/deploy","component":"d","status":"skipped"}`,
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "events.jsonl"), []byte(strings.Join(events, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ri := ReadRun(dir)
	got := map[string]string{}
	for _, c := range ri.Components {
		got[c.Name] = c.Status
	}
	want := map[string]string{"pre-flight": Done, "a": Deployed, "b": Failed, "c": Running, "d": Skipped, "e": Waiting, "f": Running, "g": Deployed}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if ri.Status != "unfinished" {
		t.Errorf("status %q, want unfinished", ri.Status)
	}
}

// TestLatestSkipsNestedRuns: a run inside another (gantry invoke from a
// component) is never "the latest run", however recent; with nothing but
// nested runs there is none.
func TestLatestSkipsNestedRuns(t *testing.T) {
	run := func(id, parent string) RunInfo { return RunInfo{ID: id, Tag: RunTag{Parent: parent}} }
	for _, tc := range []struct {
		name string
		runs []RunInfo
		want string // "" for none
	}{
		{"none", nil, ""},
		{"own run first", []RunInfo{run("b", ""), run("a", "")}, "b"},
		{"nested run newest", []RunInfo{run("c", "b"), run("b", ""), run("a", "")}, "b"},
		{"several nested", []RunInfo{run("d", "b"), run("c", "b"), run("b", ""), run("a", "")}, "b"},
		{"only nested", []RunInfo{run("c", "x"), run("d", "x")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Latest(tc.runs)
			if ok != (tc.want != "") || got.ID != tc.want {
				t.Errorf("Latest = %q, %v; want %q", got.ID, ok, tc.want)
			}
		})
	}
}

// TestRunTagRunning: a run's gantry runs while a process of its pid, its
// boot and its start does; a pid reused by another process (another start,
// or another boot of the machine) is not it. A tag without a start (an
// older gantry's) is taken at its pid; another host's is taken as running.
func TestRunTagRunning(t *testing.T) {
	host, _ := os.Hostname()
	self := procstat.Self()
	if self.Start == 0 {
		t.Skip("no /proc/self/stat here")
	}
	pid := os.Getpid()
	boot := procstat.BootID()
	for _, tc := range []struct {
		name string
		tag  RunTag
		want bool
	}{
		{"this process", RunTag{PID: pid, Host: host, Boot: boot, Started: self.Start}, true},
		{"its pid, started later", RunTag{PID: pid, Host: host, Boot: boot, Started: self.Start + 1}, false},
		{"its pid, started earlier", RunTag{PID: pid, Host: host, Boot: boot, Started: self.Start - 1}, false},
		{"its pid and start, another boot", RunTag{PID: pid, Host: host, Boot: "another-boot", Started: self.Start}, false},
		{"an older gantry's tag", RunTag{PID: pid, Host: host}, true},
		{"no pid", RunTag{Host: host}, false},
		{"another host", RunTag{PID: pid, Host: host + "-elsewhere", Boot: "another-boot", Started: 1}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.tag.Running(); got != tc.want {
				t.Errorf("Running() = %v, want %v", got, tc.want)
			}
		})
	}
	// A process that ended and is not reaped yet (a zombie: its pid and
	// start still read) is not running.
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	var zombie procstat.Stat
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		st, ok := procstat.Read(cmd.Process.Pid)
		if ok && st.State == 'Z' {
			zombie = st
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("true (pid %d) did not end within a minute: %+v", cmd.Process.Pid, st)
		}
	}
	if (RunTag{PID: cmd.Process.Pid, Host: host, Boot: boot, Started: zombie.Start}).Running() {
		t.Errorf("an ended process's tag, its pid and start those of the zombie, reads as running")
	}
}
