package main

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/testenv"
)

// waitPath waits for a file to exist.
func waitPath(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", path)
}

// waitFileLine waits for a file to hold a whole line and returns it: the
// shell creates a file before it writes to it, so a file that exists may
// still be empty. The wait is long: on a loaded machine a step on a worker
// may take a while to start.
func waitFileLine(t *testing.T, path string) string {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.TrimSpace(string(b))
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("%s never held a line", path)
	return ""
}

// waitPID waits for a pid file (waitFileLine) and returns the pid.
func waitPID(t *testing.T, path string) int {
	t.Helper()
	line := waitFileLine(t, path)
	pid, err := strconv.Atoi(line)
	if err != nil || pid <= 0 {
		t.Fatalf("%s holds %q, not a pid", path, line)
	}
	return pid
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// gatedStack writes a chain a → b → c whose components mark when they start
// and wait for a release file before they finish (or until the test's folder
// goes: a test that fails leaves no process behind). Each also notes its
// start and its end in the file order, in the order they happen.
func gatedStack(t *testing.T) string {
	t.Helper()
	files := map[string]string{
		"hub.yaml": `version: 1
kind: stack
meta: {name: gated}
components:
  - name: a
    source: {dir: comp}
  - name: b
    source: {dir: comp}
    depends: [a]
  - name: c
    source: {dir: comp}
    depends: [b]
`,
		"comp/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: comp}\n",
		"comp/Makefile": "deploy:\n\t@echo start $(COMPONENT_NAME) >> ../order\n\t@touch ../started-$(COMPONENT_NAME)\n" +
			"\t@while [ ! -e ../release-$(COMPONENT_NAME) ] && [ -e ../hub.yaml ]; do sleep 0.01; done\n" +
			"\t@echo end $(COMPONENT_NAME) >> ../order\n" +
			"\t@printf 'Outputs:\\nat = %s\\n\\n' $(COMPONENT_NAME)\n",
	}
	return writeFiles(t, files)
}

// startDeploy starts gantry deploy hub.yaml in dir; its output collects in
// the buffer.
func startDeploy(t *testing.T, dir string) (*exec.Cmd, *testenv.SyncBuffer) {
	t.Helper()
	cmd := exec.Command("gantry", "deploy", "hub.yaml")
	cmd.Dir = dir
	return cmd, startCmd(t, cmd)
}

func readState(t *testing.T, dir string) *state.State {
	t.Helper()
	st, err := state.ReadFile(filepath.Join(dir, "hub.yaml.state"))
	if err != nil {
		data, _ := os.ReadFile(filepath.Join(dir, "hub.yaml.state"))
		t.Fatalf("state does not parse after SIGKILL: %v\n%s", err, data)
	}
	return st
}

func statusOf(st *state.State, comp string) string {
	if st == nil {
		return "(no state)"
	}
	if c, ok := st.Components[comp]; ok {
		return c.Status
	}
	return "(none)"
}

// TestSIGKILLLeavesValidState kills gantry deploy with SIGKILL before, during
// and after components, and checks after each kill that the state parses,
// shows incomplete where a component was in flight, and that a fresh deploy
// completes the stack.
func TestSIGKILLLeavesValidState(t *testing.T) {
	points := []struct {
		name string
		// at waits for the moment to kill; it may release components.
		at   func(t *testing.T, dir string)
		want map[string]string
	}{
		{"before any component", func(t *testing.T, dir string) {}, nil},
		{"during a", func(t *testing.T, dir string) {
			waitPath(t, filepath.Join(dir, "started-a"))
		}, map[string]string{"a": state.StatusIncomplete, "b": "(none)"}},
		{"after a, during b", func(t *testing.T, dir string) {
			waitPath(t, filepath.Join(dir, "started-a"))
			touch(t, filepath.Join(dir, "release-a"))
			waitPath(t, filepath.Join(dir, "started-b"))
		}, map[string]string{"a": state.StatusDeployed, "b": state.StatusIncomplete, "c": "(none)"}},
		{"after b, before c finishes", func(t *testing.T, dir string) {
			touch(t, filepath.Join(dir, "release-a"))
			touch(t, filepath.Join(dir, "release-b"))
			waitPath(t, filepath.Join(dir, "started-c"))
		}, map[string]string{"a": state.StatusDeployed, "b": state.StatusDeployed, "c": state.StatusIncomplete}},
	}
	for _, pt := range points {
		t.Run(pt.name, func(t *testing.T) {
			dir := gatedStack(t)
			cmd, _ := startDeploy(t, dir)
			pt.at(t, dir)
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			st := readState(t, dir)
			for comp, want := range pt.want {
				if got := statusOf(st, comp); got != want {
					t.Errorf("after SIGKILL %s: %s is %q, want %q", pt.name, comp, got, want)
				}
			}
			// Let every component finish, then a fresh deploy completes the stack.
			for _, c := range []string{"a", "b", "c"} {
				touch(t, filepath.Join(dir, "release-"+c))
			}
			again := exec.Command("gantry", "deploy", "hub.yaml")
			again.Dir = dir
			out, err := again.CombinedOutput()
			if err != nil {
				t.Fatalf("deploy after SIGKILL failed: %v\n%s", err, out)
			}
			st = readState(t, dir)
			for _, c := range []string{"a", "b", "c"} {
				if got := statusOf(st, c); got != state.StatusDeployed {
					t.Errorf("after the fresh deploy %s is %q\n%s", c, got, out)
				}
			}
			if st.Status != state.StatusDeployed {
				t.Errorf("stack status %q", st.Status)
			}
		})
	}
}

// killedWithLeftover deploys the gated stack and kills gantry with SIGKILL
// while a's process runs: the process goes on alone, a leftover.
func killedWithLeftover(t *testing.T) string {
	t.Helper()
	dir := gatedStack(t)
	first, _ := startDeploy(t, dir)
	waitPath(t, filepath.Join(dir, "started-a"))
	// Killed once the run noted a's start in its registry, which it does
	// just after the start: TestNextRunWaitsForWhatAKilledRunLeft takes
	// the line away itself for the case of a run killed before it.
	waitRegistryStart(t, filepath.Join(dir, ".gantry", "hub.yaml.state.running"))
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	if err := os.Remove(filepath.Join(dir, "started-a")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// waitRegistryStart waits until the run registry at path notes a start.
func waitRegistryStart(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		data, _ := os.ReadFile(path)
		if strings.HasPrefix(string(data), "+ ") || strings.Contains(string(data), "\n+ ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the registry %s never noted a start:\n%s", path, data)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// releaseLeftover lets the killed run's leftover a end, and waits until
// its output keeper said so in a's log: then nothing of that run writes
// into dir any more, which the test's cleanup removes (it failed with
// "directory not empty" when the leftover and the keeper wrote meanwhile).
func releaseLeftover(t *testing.T, dir string) {
	t.Helper()
	touch(t, filepath.Join(dir, "release-a"))
	deadline := time.Now().Add(time.Minute)
	for !strings.Contains(readLogs(t, dir, "a.log"), "ended without saying goodbye") {
		if time.Now().After(deadline) {
			t.Fatalf("the killed run's keeper did not say its leftover ended:\n%s", readLogs(t, dir, "a.log"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitLeftoverWait waits until a run says it waits for a leftover.
func waitLeftoverWait(t *testing.T, out *testenv.SyncBuffer) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "left 1 process group(s) running; waiting") {
		if time.Now().After(deadline) {
			t.Fatalf("the run did not wait for the leftover:\n%s", out)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestNextRunWaitsForWhatAKilledRunLeft: SIGKILL leaves the component's
// process running on its own. The next deploy must not run the same work
// next to it: it says what it waits for, waits, and then goes on. It finds
// the process by its registry line, or by the run's mark in its environment
// when the run was killed before it wrote the line (the process had just
// started).
func TestNextRunWaitsForWhatAKilledRunLeft(t *testing.T) {
	for _, noted := range []bool{true, false} {
		t.Run(fmt.Sprintf("noted=%v", noted), func(t *testing.T) {
			dir := killedWithLeftover(t)
			if !noted {
				forgetStarts(t, filepath.Join(dir, ".gantry", "hub.yaml.state.running"))
			}
			waitsForLeftover(t, dir)
		})
	}
}

// TestPlanShowsTheLeftoverWait: after a kill, gantry plan and deploy
// --dry-run show the wait the run will begin with (they left it out, and
// the run then waited for the leftover first).
func TestPlanShowsTheLeftoverWait(t *testing.T) {
	dir := killedWithLeftover(t)
	defer releaseLeftover(t, dir)
	for _, args := range [][]string{{"plan", "hub.yaml"}, {"deploy", "hub.yaml", "--dry-run"}} {
		if out := gantryIn(t, dir, args...); !strings.Contains(out, "wait for 1 process group(s) the killed run left") {
			t.Errorf("gantry %v does not show the wait:\n%s", args, out)
		}
	}
}

// TestPlanDuringALiveRun: a run going on has processes in its registry
// too: they are not a killed run's leftovers, and the plan does not say so.
func TestPlanDuringALiveRun(t *testing.T) {
	dir := gatedStack(t)
	cmd, out := startDeploy(t, dir)
	waitPath(t, filepath.Join(dir, "started-a"))
	if plan := gantryIn(t, dir, "plan", "hub.yaml"); strings.Contains(plan, "killed run") {
		t.Errorf("the plan took the live run's process for a leftover:\n%s", plan)
	}
	for _, c := range []string{"a", "b", "c"} {
		touch(t, filepath.Join(dir, "release-"+c))
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the run failed: %v\n%s", err, out)
	}
}

// forgetStarts drops the "+" lines of a process registry, as if the run had
// been killed before it wrote them.
func forgetStarts(t *testing.T, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if !strings.HasPrefix(line, "+ ") {
			kept = append(kept, line)
		}
	}
	if len(kept) == strings.Count(string(data), "\n")+1 {
		t.Fatalf("the registry notes no start:\n%s", data)
	}
	if err := os.WriteFile(path, []byte(strings.Join(kept, "")), 0o600); err != nil {
		t.Fatal(err)
	}
}

// waitsForLeftover deploys the gated stack killed with a leftover again:
// the run waits for the leftover, then deploys everything; a starts again
// only after the killed run's a ended.
func waitsForLeftover(t *testing.T, dir string) {
	t.Helper()
	waitsForLeftoverOn(t, dir, "hub.yaml.state")
}

// waitsForLeftoverOn is waitsForLeftover with the deploy on the state file
// stateFile (-s).
func waitsForLeftoverOn(t *testing.T, dir, stateFile string) {
	t.Helper()
	cmd := exec.Command("gantry", "deploy", "hub.yaml", "-s", stateFile)
	cmd.Dir = dir
	again, out := cmd, startCmd(t, cmd)
	waitLeftoverWait(t, out)
	for _, c := range []string{"a", "b", "c"} {
		touch(t, filepath.Join(dir, "release-"+c))
	}
	if err := again.Wait(); err != nil {
		t.Fatalf("the next run failed: %v\n%s", err, out)
	}
	order, err := os.ReadFile(filepath.Join(dir, "order"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "start a\nend a\nstart a\nend a\nstart b\nend b\nstart c\nend c\n"; string(order) != want {
		t.Errorf("starts and ends:\n%s\nwant (the killed run's a, then the next run's):\n%s\n%s", order, want, out)
	}
	st, err := state.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != state.StatusDeployed {
		t.Errorf("stack status %q:\n%s", st.Status, out)
	}
}

// TestLeftoverWaitedForOnAnotherState: the processes a killed run left are
// waited for by the next run of the stack from its folder on any state:
// here the state moved to another file (state migrate) after the kill. The
// registry was named after the state file, and the run on the moved state
// started a next to the killed run's a.
func TestLeftoverWaitedForOnAnotherState(t *testing.T) {
	dir := killedWithLeftover(t)
	gantryIn(t, dir, "state", "migrate", "hub.yaml.state", "moved.state")
	waitsForLeftoverOn(t, dir, "moved.state")
}

// TestInterruptedWaitKeepsTheLeftovers: a run interrupted while it waits for
// what a killed run left ends (130) without running anything, and the next
// run still knows of the leftover and waits for it too.
func TestInterruptedWaitKeepsTheLeftovers(t *testing.T) {
	dir := killedWithLeftover(t)
	second, out := startDeploy(t, dir)
	waitLeftoverWait(t, out)
	if err := second.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := second.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("the interrupted wait: %v\n%s", err, out)
	}
	if !strings.Contains(out.String(), "interrupted before any component ran; nothing was run") {
		t.Errorf("the interrupted wait should say nothing ran:\n%s", out)
	}
	third, out := startDeploy(t, dir)
	waitLeftoverWait(t, out)
	for _, c := range []string{"a", "b", "c"} {
		touch(t, filepath.Join(dir, "release-"+c))
	}
	if err := third.Wait(); err != nil {
		t.Fatalf("the third run failed: %v\n%s", err, out)
	}
	if st := readState(t, dir); st.Status != state.StatusDeployed {
		t.Errorf("stack status %q:\n%s", st.Status, out)
	}
}

// TestSIGINTStopsEveryChild interrupts a run whose component started a
// background child: gantry exits 130, records the interruption, and no child
// process survives.
func TestSIGINTStopsEveryChild(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"hub.yaml":                "version: 1\nkind: stack\nmeta: {name: int}\ncomponents:\n  - name: long\n    source: {dir: long}\n  - name: after\n    source: {dir: long}\n    depends: [long]\n",
		"long/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: long}\n",
		"long/deploy":             "#!/bin/sh\nsleep 300 &\necho $! > ../child.pid\necho $$ > ../leader.pid\nsleep 300\n",
	})
	if err := os.Chmod(filepath.Join(dir, "long/deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd, out := startDeploy(t, dir)
	interruptOnceStarted(t, cmd, out, dir, "leader.pid", "child.pid")
	st := readState(t, dir)
	if c := st.Components["long"]; c == nil || c.Status != state.StatusFailed || !strings.Contains(c.Reason, "interrupted") {
		t.Errorf("state of long: %+v", c)
	}
	if got := statusOf(st, "after"); got != state.StatusSkipped {
		t.Errorf("after is %q, want skipped", got)
	}
	if !strings.Contains(out.String(), "interrupted") {
		t.Errorf("no word of the interruption:\n%s", out.String())
	}
	// It stopped for the interrupt: --force would not have gone on.
	if strings.Contains(out.String(), "--force goes on") {
		t.Errorf("the summary says the run stopped after a failure:\n%s", out.String())
	}
}

// TestSIGINTDuringPluginList interrupts a run in the middle of a plugin list
// whose parallel branches each started a process with a background child:
// gantry exits 130, no process of either branch survives, the component is
// recorded failed (interrupted), the entry after the branches never runs, and
// the process registry is gone (a clean end leaves no leftovers).
func TestSIGINTDuringPluginList(t *testing.T) {
	long := func(name string) string {
		return fmt.Sprintf("      - exec: {key: %[1]s, args: [sh, -c, 'sleep 300 & echo $! > ../%[1]s-child.pid; echo $$ > ../%[1]s.pid; sleep 300']}\n", name)
	}
	dir := writeFiles(t, map[string]string{
		"hub.yaml": "version: 1\nkind: stack\nmeta: {name: lists}\ncomponents:\n  - name: app\n    source: {dir: app}\n",
		"app/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: app}\nplugins:\n  - parallel:\n" +
			long("left") + long("right") + "  - exec: [touch, ../after-ran]\n",
	})
	cmd := exec.Command("gantry", "deploy", "hub.yaml", "--parallel", "2")
	cmd.Dir = dir
	out := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	interruptOnceStarted(t, cmd, out, dir, "left.pid", "left-child.pid", "right.pid", "right-child.pid")
	if _, err := os.Stat(filepath.Join(dir, "after-ran")); err == nil {
		t.Error("the entry after the interrupted ones ran")
	}
	st := readState(t, dir)
	if c := st.Components["app"]; c == nil || c.Status != state.StatusFailed || !strings.Contains(c.Reason, "interrupted") {
		t.Errorf("state of app: %+v", c)
	}
	if _, err := os.Stat(filepath.Join(dir, ".gantry", "hub.yaml.state.running")); !os.IsNotExist(err) {
		t.Errorf("the process registry is left after a clean interrupt: %v", err)
	}
}

// TestSIGHUPIsAnInterrupt: closing the terminal stops a run as Ctrl-C does:
// exit 130, no process left, the run finished in its events, and no process
// registry left behind.
func TestSIGHUPIsAnInterrupt(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"hub.yaml":                "version: 1\nkind: stack\nmeta: {name: hup}\ncomponents:\n  - name: long\n    source: {dir: long}\n",
		"long/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: long}\n",
		"long/deploy":             "#!/bin/sh\necho $$ > ../leader.pid\nsleep 300\n",
	})
	if err := os.Chmod(filepath.Join(dir, "long/deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd, out := startDeploy(t, dir)
	pid := waitPID(t, filepath.Join(dir, "leader.pid"))
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v, want code 130\n%s", err, out)
	}
	if alive(pid) {
		t.Errorf("the component's process %d survived the hangup", pid)
	}
	events, _ := filepath.Glob(filepath.Join(dir, ".gantry/runs/*/events.jsonl"))
	if len(events) != 1 {
		t.Fatalf("events: %v", events)
	}
	data, _ := os.ReadFile(events[0])
	if !strings.Contains(string(data), `"event":"run_finished"`) || !strings.Contains(string(data), `"status":"interrupted"`) {
		t.Errorf("the run did not finish as interrupted:\n%s", data)
	}
	if _, err := os.Stat(filepath.Join(dir, ".gantry/hub.yaml.state.running")); !os.IsNotExist(err) {
		t.Errorf("the process registry was left: %v", err)
	}
}

// TestSecondInterruptCutsTheGrace: a process that ignores SIGTERM keeps a run
// waiting through its grace period — an hour here — after the first Ctrl-C;
// the second Ctrl-C kills it at once.
func TestSecondInterruptCutsTheGrace(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"hub.yaml":                "version: 1\nkind: stack\nmeta: {name: stubborn}\ncomponents:\n  - name: mule\n    source: {dir: mule}\n",
		"mule/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: mule}\n",
		"mule/deploy":             "#!/bin/sh\ntrap 'touch ../got-term' TERM\necho $$ > ../mule.pid\nwhile :; do sleep 0.05; done\n",
	})
	if err := os.Chmod(filepath.Join(dir, "mule/deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("gantry", "deploy", "hub.yaml")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GANTRY_STOP_GRACE=1h")
	out := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	pid := waitPID(t, filepath.Join(dir, "mule.pid"))
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waitPath(t, filepath.Join(dir, "got-term"))
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
			t.Fatalf("exit: %v, want code 130\n%s", err, out)
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("the second interrupt did not cut the hour of grace:\n%s", out)
	}
	if !strings.Contains(out.String(), "interrupt again to stop them at once") || !strings.Contains(out.String(), "stopping every process now") {
		t.Errorf("the interrupts were not explained:\n%s", out)
	}
	if alive(pid) {
		t.Errorf("the stubborn process %d survived", pid)
	}
}

// interruptOnceStarted waits until the processes have written their pid
// files, interrupts gantry (SIGINT), and checks that it exits 130 and that
// none of the processes survived.
func interruptOnceStarted(t *testing.T, cmd *exec.Cmd, out *testenv.SyncBuffer, dir string, pidFiles ...string) {
	t.Helper()
	for _, f := range pidFiles {
		waitPID(t, filepath.Join(dir, f))
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v, want code 130\n%s", err, out.String())
	}
	for _, f := range pidFiles {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if pid <= 0 {
			t.Errorf("%s holds no pid", f)
		} else if alive(pid) {
			t.Errorf("%s %d survived the interrupt", f, pid)
		}
	}
}

func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !strings.Contains(string(st), ") Z ")
}

// TestParallelRandomDAG deploys random DAGs of 200 components with
// --parallel 8; each component records when it started and ended. No component
// may start before all its dependencies ended, and no more than 8 may run at
// once.
func TestParallelRandomDAG(t *testing.T) {
	if testing.Short() {
		t.Skip("200 processes per round")
	}
	rng := rand.New(rand.NewSource(42))
	for round := 0; round < 2; round++ {
		const n, par = 200, 8
		var hub strings.Builder
		hub.WriteString("version: 1\nkind: stack\nmeta: {name: random}\ncomponents:\n")
		deps := make([][]int, n)
		for i := 0; i < n; i++ {
			fmt.Fprintf(&hub, "  - name: c%03d\n    source: {dir: comp}\n", i)
			seen := map[int]bool{}
			for k := 0; k < 3 && i > 0; k++ {
				j := rng.Intn(i)
				if !seen[j] {
					seen[j] = true
					deps[i] = append(deps[i], j)
				}
			}
			if len(deps[i]) > 0 {
				var names []string
				for _, j := range deps[i] {
					names = append(names, fmt.Sprintf("c%03d", j))
				}
				fmt.Fprintf(&hub, "    depends: [%s]\n", strings.Join(names, ", "))
			}
		}
		dir := writeFiles(t, map[string]string{
			"hub.yaml":                hub.String(),
			"comp/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: comp}\n",
			"comp/deploy":             "#!/bin/sh\necho \"start $COMPONENT_NAME $(date +%s%N)\" >> ../times.log\nsleep 0.0$(( $$ % 3 + 1 ))\necho \"end $COMPONENT_NAME $(date +%s%N)\" >> ../times.log\n",
		})
		os.Chmod(filepath.Join(dir, "comp/deploy"), 0o755)
		cmd := exec.Command("gantry", "deploy", "hub.yaml", "--parallel", strconv.Itoa(par))
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("deploy: %v\n%s", err, out)
		}
		data, err := os.ReadFile(filepath.Join(dir, "times.log"))
		if err != nil {
			t.Fatal(err)
		}
		start, end := map[string]int64{}, map[string]int64{}
		type ev struct {
			at    int64
			delta int
		}
		var evs []ev
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			f := strings.Fields(line)
			at, _ := strconv.ParseInt(f[2], 10, 64)
			if f[0] == "start" {
				start[f[1]] = at
				evs = append(evs, ev{at, 1})
			} else {
				end[f[1]] = at
				evs = append(evs, ev{at, -1})
			}
		}
		if len(start) != n || len(end) != n {
			t.Fatalf("%d starts and %d ends, want %d", len(start), len(end), n)
		}
		for i, ds := range deps {
			me := fmt.Sprintf("c%03d", i)
			for _, j := range ds {
				dep := fmt.Sprintf("c%03d", j)
				if start[me] < end[dep] {
					t.Errorf("%s started %dµs before its dependency %s ended", me, (end[dep]-start[me])/1000, dep)
				}
			}
		}
		// Ends sort before starts at the same instant: a slot freed and taken.
		sort.Slice(evs, func(i, j int) bool {
			if evs[i].at != evs[j].at {
				return evs[i].at < evs[j].at
			}
			return evs[i].delta < evs[j].delta
		})
		running, peak := 0, 0
		for _, e := range evs {
			running += e.delta
			peak = max(peak, running)
		}
		if peak > par {
			t.Errorf("%d components ran at once with --parallel %d", peak, par)
		}
		if peak < 2 {
			t.Errorf("no parallelism at all (peak %d)", peak)
		}
	}
}

// TestSIGKILLInAHookBeforeTheVerb: a run killed while a component's
// pre_component step runs leaves it incomplete (it stayed deployed, and
// --resume skipped it, so what the hook began never got its post steps),
// and the next deploy --resume runs it again, post steps included.
func TestSIGKILLInAHookBeforeTheVerb(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"hub.yaml": "version: 1\nkind: stack\nmeta: {name: hooked}\ncomponents:\n  - name: a\n    source: {dir: a}\n",
		"a/hub-component.yaml": `version: 1
kind: component
meta: {name: a}
lifecycle:
  pre_component:
    steps:
      - exec:
          arguments: [sh, -c, "touch ../drained; if [ -e ../hold ]; then touch ../in-hook; while [ -e ../hold ] && [ -e ../hub.yaml ]; do sleep 0.01; done; fi"]
          label: drain
  post_component:
    steps:
      - exec:
          arguments: [sh, -c, "rm -f ../drained"]
          label: undrain
`,
		"a/Makefile": "deploy:\n\t@echo deployed a\n",
	})
	gantryIn(t, dir, "deploy", "hub.yaml")
	touch(t, filepath.Join(dir, "hold"))
	cmd, _ := startDeploy(t, dir)
	waitPath(t, filepath.Join(dir, "in-hook"))
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if got := statusOf(readState(t, dir), "a"); got != state.StatusIncomplete {
		t.Errorf("after SIGKILL in the hook a is %q, want incomplete", got)
	}
	if err := os.Remove(filepath.Join(dir, "hold")); err != nil {
		t.Fatal(err)
	}
	out := gantryIn(t, dir, "deploy", "hub.yaml", "--resume")
	if _, err := os.Stat(filepath.Join(dir, "drained")); err == nil {
		t.Errorf("the post step never ran:\n%s", out)
	}
	if got := statusOf(readState(t, dir), "a"); got != state.StatusDeployed {
		t.Errorf("after the next deploy a is %q:\n%s", got, out)
	}
}

// TestInterruptAfterTheVerbRan: a component whose deploy ended before the
// interrupt ran: it is not "not started", though the post_instance_create
// step after the one interrupted (which on_fail lets pass) was not. The
// summary and the state say what ran and what did not.
func TestInterruptAfterTheVerbRan(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"hub.yaml": "version: 1\nkind: stack\nmeta: {name: int}\ncomponents:\n  - name: a\n    source: {dir: a}\n",
		"a/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: a}\nlifecycle:\n  post_instance_create:\n    steps:\n" +
			"      - exec: {arguments: [sh, -c, \"echo $$ > ../leader.pid; while :; do sleep 0.05; done\"], on_fail: [warn, next]}\n" +
			"      - exec: [sh, -c, \"echo post > ../post-ran\"]\n",
		"a/deploy": "#!/bin/sh\necho changed > ../marker\n",
	})
	if err := os.Chmod(filepath.Join(dir, "a/deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd, out := startDeploy(t, dir)
	interruptOnceStarted(t, cmd, out, dir, "leader.pid")
	if _, err := os.Stat(filepath.Join(dir, "marker")); err != nil {
		t.Fatalf("the deploy did not finish its work: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "post-ran")); err == nil {
		t.Fatalf("the step after the interrupted one ran\n%s", out)
	}
	want := "deploy a ran, then the run was interrupted before"
	if s := out.String(); !strings.Contains(s, want) || strings.Contains(s, "a  deploy  skipped") {
		t.Errorf("the summary should say a's deploy ran (%q):\n%s", want, s)
	}
	c := readState(t, dir).Components["a"]
	if c == nil || c.Status != state.StatusFailed || !strings.Contains(c.Reason, want) {
		t.Errorf("state of a: %+v, want failed with %q", c, want)
	}
}

// TestInterruptedVerbThatExitsZero: a deploy told of the interrupt that
// ends its work and exits 0 was stopped all the same (it may not have
// finished): failed, never deployed, so that the next deploy and --resume
// run it again; its post_instance_create step does not run.
func TestInterruptedVerbThatExitsZero(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"hub.yaml":             "version: 1\nkind: stack\nmeta: {name: int}\ncomponents:\n  - name: a\n    source: {dir: a}\n",
		"a/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: a}\nlifecycle:\n  post_instance_create: {steps: [{exec: [sh, -c, \"echo post > ../post-ran\"]}]}\n",
		"a/deploy":             "#!/bin/sh\ntrap 'echo changed > ../marker; exit 0' TERM\necho $$ > ../leader.pid\nwhile :; do sleep 0.05; done\n",
	})
	if err := os.Chmod(filepath.Join(dir, "a/deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd, out := startDeploy(t, dir)
	interruptOnceStarted(t, cmd, out, dir, "leader.pid")
	if _, err := os.Stat(filepath.Join(dir, "post-ran")); err == nil {
		t.Fatalf("post_instance_create ran after the interrupt\n%s", out)
	}
	want := "interrupted: " + filepath.Join(dir, "a/deploy") + " was stopped: it exited with status 0 on SIGTERM, which does not say it finished"
	if s := out.String(); !strings.Contains(s, want) {
		t.Errorf("the summary should say a's deploy was stopped (%q):\n%s", want, s)
	}
	c := readState(t, dir).Components["a"]
	if c == nil || c.Status != state.StatusFailed || !strings.Contains(c.Reason, want) {
		t.Errorf("state of a: %+v, want failed with %q", c, want)
	}
}
