package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/state/pgstate/pgtest"
	"github.com/gantry-dev/gantry/internal/testenv"
)

// onWorkers is a stack's folder with the state in a database of its own and
// an engine on a task queue of its own, for tests that run plans on
// workers.
type onWorkers struct {
	t      *testing.T
	dir    string
	state  string
	engine string
}

func newOnWorkers(t *testing.T, files map[string]string) *onWorkers {
	t.Helper()
	addr := temporalServer(t)
	return &onWorkers{t: t, dir: writeStack(t, files), state: pgtest.Database(t), engine: temporalEngine(addr)}
}

// gantry is a gantry command in the stack's folder, on the workers.
func (w *onWorkers) gantry(args ...string) *exec.Cmd {
	cmd := exec.Command("gantry", args...)
	cmd.Dir = w.dir
	cmd.Env = append(os.Environ(), "NO_COLOR=1", "GANTRY_STATE="+w.state, "GANTRY_ENGINE="+w.engine)
	return cmd
}

// run runs a gantry command to its end and returns its output and exit
// code.
func (w *onWorkers) run(args ...string) (string, int) {
	w.t.Helper()
	out, err := w.gantry(args...).CombinedOutput()
	return string(out), exitCode(w.t, err)
}

// start starts a gantry command; its output collects in the buffer.
func (w *onWorkers) start(args ...string) (*exec.Cmd, *testenv.SyncBuffer) {
	w.t.Helper()
	cmd := w.gantry(args...)
	return cmd, startCmd(w.t, cmd)
}

// worker starts a worker on the stack's folder; the test's end stops it.
func (w *onWorkers) worker(name string, args ...string) *workerProcess {
	w.t.Helper()
	wp, err := startWorkerProcess(w.dir, w.engine, w.state, filepath.Join(w.dir, name+".log"), args...)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(wp.stop)
	return wp
}

// comparable is a state without what differs from run to run: times and
// run ids.
func comparable(st *state.State) *state.State {
	st = st.Clone()
	st.Updated, st.LastRun = time.Time{}, ""
	for _, c := range st.Components {
		c.Started, c.Finished, c.LastRun = time.Time{}, time.Time{}, ""
	}
	return st
}

// TestTemporalSameStateAsLocal: a 50-component stack — dependencies,
// outputs flowing down, capabilities provided and required — deployed by
// two workers ends in the same state as deployed by the local executor,
// from the same state: the same statuses, parameters, outputs, provides and
// fingerprints, but for times and run ids.
func TestTemporalSameStateAsLocal(t *testing.T) {
	r := rand.New(rand.NewSource(22))
	var stack strings.Builder
	stack.WriteString("version: 1\nkind: stack\nmeta: {name: fifty}\ncomponents:\n")
	var params strings.Builder
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&stack, "  - name: c%d\n    source: {dir: comp%d}\n", i, i)
		if i == 0 {
			fmt.Fprintf(&params, "  - name: in\n    component: c0\n    value: start\n")
			continue
		}
		dep := r.Intn(i)
		fmt.Fprintf(&stack, "    depends: [c%d]\n", dep)
		fmt.Fprintf(&params, "  - name: in\n    component: c%d\n    kind: link\n    value: \"${c%d:out}\"\n", i, dep)
	}
	stack.WriteString("parameters:\n" + params.String())
	stack.WriteString("outputs:\n  - name: c49:out\n")
	files := map[string]string{"hub.yaml": stack.String()}
	for k := 0; k < 50; k++ {
		provides := ""
		switch {
		case k == 7:
			provides = "provides: [queue]\n"
		case k > 7 && k%9 == 0:
			provides = "requires: [queue]\n"
		}
		files[fmt.Sprintf("comp%d/hub-component.yaml", k)] = fmt.Sprintf("version: 1\nkind: component\nmeta: {name: k%d}\n", k) + provides +
			"parameters:\n  - name: in\n    env: IN\noutputs:\n  - name: out\n"
		files[fmt.Sprintf("comp%d/deploy", k)] = "#!/bin/sh\nsleep 0.$((RANDOM % 3))\necho \"$COMPONENT_NAME from $IN\"\n" +
			"printf 'Outputs:\\nout = %s<%s\\n\\n' \"$COMPONENT_NAME\" \"$(printf %s \"$IN\" | cut -c1-40)\"\n"
	}
	w := newOnWorkers(t, files)
	local := pgtest.Database(t)
	// Both start from the same state: one component deployed, the
	// deployment's id the same.
	if out, code := w.run("deploy", "hub.yaml", "-c", "c0", "-s", local, "--engine", "local"); code != 0 {
		t.Fatalf("seed: exit %d\n%s", code, out)
	}
	if out, code := w.run("state", "migrate", local, w.state, "--force"); code != 0 {
		t.Fatalf("state migrate: exit %d\n%s", code, out)
	}
	if out, code := w.run("deploy", "hub.yaml", "-s", local, "--engine", "local", "--parallel", "8"); code != 0 {
		t.Fatalf("local deploy: exit %d\n%s", code, out)
	}
	w.worker("w1", "--parallel", "4")
	w.worker("w2", "--parallel", "4")
	out, code := w.run("deploy", "hub.yaml", "--parallel", "8")
	if code != 0 {
		t.Fatalf("deploy on workers: exit %d\n%s", code, out)
	}
	want := comparable(readStateAt(t, local, "fifty"))
	got := comparable(readStateAt(t, w.state, "fifty"))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the state on workers (+) against the local one (-):\n%s", diff)
	}
	if got.Outputs["c49:out"] == "" || len(got.Components) != 50 {
		t.Errorf("the state is not the stack's: %d components, outputs %v", len(got.Components), got.Outputs)
	}
}

// killFiles is a stack whose component v waits until a worker running it is
// killed; every component notes its starts and ends, and notes an overlap
// when it starts while its last start still runs.
func killFiles(idempotent bool) map[string]string {
	comp := "version: 1\nkind: component\nmeta: {name: comp}\noutputs:\n  - name: out\n"
	if idempotent {
		comp += "lifecycle: {idempotent: true}\n"
	}
	script := `#!/bin/sh
j=../journal
echo "start $COMPONENT_NAME $$" >> $j
if [ -f ../running-$COMPONENT_NAME ] && kill -0 "$(cat ../running-$COMPONENT_NAME)" 2>/dev/null; then
  echo "OVERLAP $COMPONENT_NAME" >> $j
fi
echo $$ > ../running-$COMPONENT_NAME
if [ "$COMPONENT_NAME" = v ] && [ ! -e ../killed ]; then
  echo $PPID > ../victim.tmp && mv ../victim.tmp ../victim
  sleep 600
fi
sleep 0.3
echo "end $COMPONENT_NAME $$" >> $j
printf 'Outputs:\nout = %s\n\n' "$COMPONENT_NAME"
`
	return map[string]string{
		"hub.yaml": `version: 1
kind: stack
meta: {name: killed}
components:
  - name: a
    source: {dir: comp}
  - name: v
    source: {dir: comp}
    depends: [a]
  - name: b
    source: {dir: comp}
    depends: [a]
  - name: z
    source: {dir: comp}
    depends: [v, b]
`,
		"comp/hub-component.yaml": comp,
		"comp/deploy":             script,
	}
}

// deployAndKill deploys killFiles(idempotent) on two workers and, once v
// runs, marks it killed and sends the worker running it sig.
func deployAndKill(t *testing.T, idempotent bool, sig syscall.Signal) (*onWorkers, *exec.Cmd, *testenv.SyncBuffer) {
	t.Helper()
	w := newOnWorkers(t, killFiles(idempotent))
	w.worker("w1", "--parallel", "2")
	w.worker("w2", "--parallel", "2")
	cmd, out := w.start("deploy", "hub.yaml", "--parallel", "4")
	pid := waitPID(t, filepath.Join(w.dir, "victim"))
	touch(t, filepath.Join(w.dir, "killed"))
	if err := syscall.Kill(pid, sig); err != nil {
		t.Fatalf("signal the worker %d: %v", pid, err)
	}
	return w, cmd, out
}

// TestTemporalWorkerKilledMidStep: a worker killed with SIGKILL while it
// runs a step — its reaper kills the step's processes at once — or stopped
// with SIGTERM — it stops them, and says so. A component that declares
// lifecycle.idempotent starts over on the other worker and the stack
// completes; no step ran beside its retry. One that does not is left
// incomplete and the run stops, as after a crash.
func TestTemporalWorkerKilledMidStep(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run("idempotent, "+sig.String(), func(t *testing.T) { startsOver(t, sig) })
	}
	t.Run("not idempotent", func(t *testing.T) {
		w, cmd, out := deployAndKill(t, false, syscall.SIGKILL)
		err := cmd.Wait()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			t.Fatalf("deploy: %v, want exit 1\n%s", err, out.String())
		}
		if !strings.Contains(out.String(), "v is left incomplete: it does not declare lifecycle.idempotent") {
			t.Errorf("the display does not say why v stopped:\n%s", out.String())
		}
		st := readStateAt(t, w.state, "killed")
		if rc := st.Components["v"]; rc == nil || rc.Status != state.StatusIncomplete {
			t.Errorf("v: %+v, want incomplete", rc)
		}
		if rc := st.Components["z"]; rc != nil && rc.Status == state.StatusDeployed {
			t.Errorf("z ran after v was lost: %+v", rc)
		}
		journal, _ := os.ReadFile(filepath.Join(w.dir, "journal"))
		if n := bytes.Count(journal, []byte("start v ")); n != 1 {
			t.Errorf("v started %d times, want 1:\n%s", n, journal)
		}
		// Its process died with its worker.
		if pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(w.dir, "running-v")))); err == nil {
			if syscall.Kill(pid, 0) == nil {
				t.Errorf("v's process %d outlived its worker", pid)
			}
		}
	})
}

// startsOver: a worker running an idempotent component's step killed with
// sig (SIGTERM stops it, SIGKILL kills it): the component starts over on
// the other worker and the stack completes, no step beside its retry.
func startsOver(t *testing.T, sig syscall.Signal) {
	w, cmd, out := deployAndKill(t, true, sig)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("deploy: %v\n%s", err, out.String())
	}
	journal, _ := os.ReadFile(filepath.Join(w.dir, "journal"))
	if bytes.Contains(journal, []byte("OVERLAP")) {
		t.Errorf("a step ran beside its retry:\n%s", journal)
	}
	if n := bytes.Count(journal, []byte("start v ")); n != 2 {
		t.Errorf("v started %d times, want 2:\n%s", n, journal)
	}
	if !strings.Contains(out.String(), "starting it over on another worker") {
		t.Errorf("the display does not say v started over:\n%s", out.String())
	}
	st := readStateAt(t, w.state, "killed")
	for _, c := range []string{"a", "v", "b", "z"} {
		if rc := st.Components[c]; rc == nil || rc.Status != state.StatusDeployed {
			t.Errorf("%s: %+v", c, rc)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// chainAB is a stack of two components, b after a, both running deploy.
func chainAB(stack, deploy string) map[string]string {
	return map[string]string{
		"hub.yaml":                "version: 1\nkind: stack\nmeta: {name: " + stack + "}\ncomponents:\n  - name: a\n    source: {dir: comp}\n  - name: b\n    source: {dir: comp}\n    depends: [a]\n",
		"comp/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: comp}\n",
		"comp/deploy":             deploy,
	}
}

// TestTemporalClientKilledAndSecondDeploy: while a run is attached, a second
// deploy of the stack — on workers or local — is refused (exit 3) naming
// it; the client killed with SIGKILL, the run goes on, and the next deploy
// attaches to it, shows it from its start and exits with its outcome.
func TestTemporalClientKilledAndSecondDeploy(t *testing.T) {
	script := "#!/bin/sh\ntouch ../started-$COMPONENT_NAME\nwhile [ ! -e ../go-$COMPONENT_NAME ] && [ -e ../hub.yaml ]; do sleep 0.05; done\necho \"$COMPONENT_NAME done\"\n"
	w := newOnWorkers(t, chainAB("attach", script))
	w.worker("w1", "--parallel", "2")
	first, _ := w.start("deploy", "hub.yaml")
	waitPath(t, filepath.Join(w.dir, "started-a"))
	second, code := w.run("deploy", "hub.yaml")
	if code != 3 || !strings.Contains(second, "is locked by gantry deploy") || !strings.Contains(second, "on Temporal workers (workflow gantry:") {
		t.Errorf("a second deploy on workers: exit %d\n%s", code, second)
	}
	local, code := w.run("deploy", "hub.yaml", "--engine", "local")
	if code != 3 || !strings.Contains(local, "is locked by") {
		t.Errorf("a local deploy: exit %d\n%s", code, local)
	}
	// The client dies; the run goes on.
	_ = first.Process.Kill()
	_ = first.Wait()
	touch(t, filepath.Join(w.dir, "go-a"))
	waitPath(t, filepath.Join(w.dir, "started-b"))
	again, out2 := w.start("deploy", "hub.yaml")
	// b goes on once the new client is attached: the run is still going.
	for deadline := time.Now().Add(3 * time.Minute); !strings.Contains(out2.String(), "attached to the stack's run"); {
		if time.Now().After(deadline) {
			t.Fatalf("the next deploy did not attach:\n%s", out2.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	touch(t, filepath.Join(w.dir, "go-b"))
	if err := again.Wait(); err != nil {
		t.Fatalf("the deploy that attached: %v\n%s", err, out2.String())
	}
	text := out2.String()
	for _, want := range []string{`attached to the stack's run`, `\[a\] deploy a\n\[a\] a done\n\[a\] ✓ deploy a`, `\[b\] b done`, `a +deploy +deployed`, `b +deploy +deployed`} {
		if !regexp.MustCompile(want).MatchString(text) {
			t.Errorf("the attached deploy does not show %s:\n%s", want, text)
		}
	}
	// The run's total counts from its start, not from the attach: it was
	// shorter than a's deploy alone, which ran before it.
	aTook := regexp.MustCompile(`(?m)^a +deploy +deployed +(\S+)`).FindStringSubmatch(text)
	total := regexp.MustCompile(`(?m)^total: .* in (\S+)$`).FindStringSubmatch(text)
	if aTook == nil || total == nil {
		t.Fatalf("no durations in the summary:\n%s", text)
	}
	if a, err1 := time.ParseDuration(aTook[1]); err1 != nil {
		t.Errorf("a's duration %q: %v", aTook[1], err1)
	} else if all, err2 := time.ParseDuration(total[1]); err2 != nil || all < a {
		t.Errorf("the run's total %s (%v) is shorter than a's deploy %s:\n%s", total[1], err2, a, text)
	}
	st := readStateAt(t, w.state, "attach")
	if st.Status != state.StatusDeployed {
		t.Errorf("state: %s", st.Status)
	}
}

// TestTemporalGateAnsweredByTheClient: a gate of a step on a worker asks
// the person at the client's terminal; new steps wait meanwhile; the answer
// goes back to the step.
func TestTemporalGateAnsweredByTheClient(t *testing.T) {
	w := newOnWorkers(t, map[string]string{
		"hub.yaml": `version: 1
kind: stack
meta: {name: gated}
components:
  - name: a
    source: {dir: comp}
`,
		"comp/hub-component.yaml": `version: 1
kind: component
meta: {name: comp}
lifecycle:
  pre_instance_create:
    steps:
      - gate: "really deploy a?"
`,
		"comp/deploy": "#!/bin/sh\necho deployed after the gate\n",
	})
	w.worker("w1")
	t.Setenv("GANTRY_STATE", w.state)
	t.Setenv("GANTRY_ENGINE", w.engine)
	s := startPTY(t, w.dir, "deploy", "hub.yaml")
	s.waitFor("really deploy a? [y/N]")
	s.send("y\r")
	s.waitFor("deployed after the gate")
	if code := s.wait(); code != 0 {
		t.Fatalf("exit %d:\n%s", code, s.output())
	}
	if !strings.Contains(s.output(), `gate "really deploy a?" approved`) {
		t.Errorf("the gate's approval is not shown:\n%s", s.output())
	}
}

// TestTemporalInterrupt: an interrupt of the client stops the run on the
// workers as it stops a local one: the running step's processes are
// stopped, the rest is not started, the client exits 130.
func TestTemporalInterrupt(t *testing.T) {
	w := newOnWorkers(t, chainAB("interrupted", "#!/bin/sh\necho $$ > ../pid-$COMPONENT_NAME.tmp && mv ../pid-$COMPONENT_NAME.tmp ../pid-$COMPONENT_NAME\nexec sleep 600\n"))
	w.worker("w1")
	cmd, out := w.start("deploy", "hub.yaml")
	pid := waitPID(t, filepath.Join(w.dir, "pid-a"))
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("deploy: %v, want exit 130\n%s", err, out.String())
	}
	if syscall.Kill(pid, 0) == nil {
		t.Errorf("a's process %d still runs after the interrupt", pid)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "pid-b")); err == nil {
		t.Errorf("b started after the interrupt")
	}
	if !strings.Contains(out.String(), "interrupted") {
		t.Errorf("the display does not say the run was interrupted:\n%s", out.String())
	}
}

// TestTemporalStaleWorkflowLock: a workflow terminated on the server leaves
// the stack's lock to a run that is gone; a local run is refused naming it,
// and the next deploy on workers finds it gone, gives the lock back and
// runs.
func TestTemporalStaleWorkflowLock(t *testing.T) {
	w := newOnWorkers(t, map[string]string{
		"hub.yaml":                "version: 1\nkind: stack\nmeta: {name: stale}\ncomponents:\n  - name: a\n    source: {dir: comp}\n",
		"comp/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: comp}\n",
		"comp/deploy":             "#!/bin/sh\ntouch ../started\nwhile [ ! -e ../go ] && [ -e ../hub.yaml ]; do sleep 0.05; done\necho a ran\n",
	})
	w.worker("w1")
	first, _ := w.start("deploy", "hub.yaml")
	waitPath(t, filepath.Join(w.dir, "started"))
	_ = first.Process.Kill()
	_ = first.Wait()
	c, err := client.Dial(client.Options{HostPort: temporalServer(t), Logger: sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	wf := "gantry:" + action.StateIdentity(w.state, "stale")
	if err := c.TerminateWorkflow(context.Background(), wf, "", "a test terminates it"); err != nil {
		t.Fatal(err)
	}
	out, code := w.run("deploy", "hub.yaml", "--engine", "local")
	if code != 3 || !strings.Contains(out, "on Temporal workers (workflow "+wf+")") || !strings.Contains(out, "gives the lock back if its workflow is gone") {
		t.Errorf("a local deploy: exit %d\n%s", code, out)
	}
	touch(t, filepath.Join(w.dir, "go"))
	out, code = w.run("deploy", "hub.yaml")
	if code != 0 || !strings.Contains(out, "is no longer running but held the state's lock: released") || !strings.Contains(out, "a ran") {
		t.Errorf("the next deploy: exit %d\n%s", code, out)
	}
}

// waitOutput waits until a running command's output matches re.
func waitOutput(t *testing.T, out *testenv.SyncBuffer, re string, within time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(within); !regexp.MustCompile(re).MatchString(out.String()); {
		if time.Now().After(deadline) {
			t.Fatalf("the output never showed %s:\n%s", re, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitExit waits for a command to end within a bound, and returns its exit
// code; one still running then is killed and the test fails.
func waitExit(t *testing.T, cmd *exec.Cmd, out *testenv.SyncBuffer, within time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return exitCode(t, err)
	case <-time.After(within):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("%s still ran after %s:\n%s", cmd, within, out.String())
		return 0
	}
}

// TestTemporalClientWithoutWorker: a client whose run no worker serves
// says so, and can be stopped: a second interrupt — or, after one, the
// grace period and a margin without news of the run — ends it with exit
// 130, naming the workflow that was asked to cancel and holds the lock.
// A worker started then ends the run and gives the lock back: the next
// deploy runs.
func TestTemporalClientWithoutWorker(t *testing.T) {
	for _, interrupts := range []int{2, 1} {
		t.Run(fmt.Sprintf("%d interrupts", interrupts), func(t *testing.T) {
			w := newOnWorkers(t, chainAB("unserved", "#!/bin/sh\necho $COMPONENT_NAME ran\n"))
			cmd := w.gantry("deploy", "hub.yaml")
			cmd.Env = append(cmd.Env, "GANTRY_STOP_GRACE=1s")
			out := startCmd(t, cmd)
			waitOutput(t, out, `no worker serves task queue test-\w+ on .*: the run waits for one; start .gantry worker --engine temporal://`, time.Minute)
			for i := 0; i < interrupts; i++ {
				if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
				waitOutput(t, out, "interrupted", 10*time.Second)
				time.Sleep(200 * time.Millisecond)
			}
			within := 10 * time.Second
			if interrupts == 1 {
				within = time.Minute // the grace period (1s) and the margin
			}
			if code := waitExit(t, cmd, out, within); code != 130 {
				t.Fatalf("exit %d, want 130:\n%s", code, out.String())
			}
			wf := "gantry:" + action.StateIdentity(w.state, "unserved")
			if !strings.Contains(out.String(), "its workflow "+wf+" was asked to cancel") || !strings.Contains(out.String(), "holds the stack's lock until it ends") {
				t.Errorf("the client does not say what became of the run:\n%s", out.String())
			}
			t.Logf("the client:\n%s", out.String())
			w.worker("w1")
			for deadline := time.Now().Add(time.Minute); ; {
				text, code := w.run("deploy", "hub.yaml")
				if code == 0 {
					if !strings.Contains(text, "b ran") {
						t.Errorf("the next deploy:\n%s", text)
					}
					break
				}
				// 3: the lock is not given back yet; 130: attached to the
				// run while it ended, cancelled.
				if code != 3 && code != 130 || time.Now().After(deadline) {
					t.Fatalf("the next deploy: exit %d\n%s", code, text)
				}
				time.Sleep(200 * time.Millisecond)
			}
		})
	}
}

// TestTemporalOtherCommandDoesNotAttach: while the workflow of a deploy
// whose client was killed runs on, an undeploy, or a deploy of another
// selection, does not attach to it (and exit with the deploy's outcome):
// it is refused with exit 3 naming the workflow and what differs, as a
// local run is; so is a deploy whose -e gives a stack parameter another
// value. The same deploy attaches; the undeploy runs once it ended.
func TestTemporalOtherCommandDoesNotAttach(t *testing.T) {
	files := chainAB("other", "#!/bin/sh\ntouch ../started-$COMPONENT_NAME\nwhile [ ! -e ../go-$COMPONENT_NAME ] && [ -e ../hub.yaml ]; do sleep 0.05; done\necho \"$COMPONENT_NAME deployed\"\n")
	files["hub.yaml"] += "parameters:\n  - name: zone\n    kind: user\n    fromEnv: ZONE\n    default: eu\n"
	files["comp/undeploy"] = "#!/bin/sh\necho \"$COMPONENT_NAME undeployed\"\n"
	w := newOnWorkers(t, files)
	w.worker("w1", "--parallel", "2")
	first, _ := w.start("deploy", "hub.yaml", "-e", "ZONE=us")
	waitPath(t, filepath.Join(w.dir, "started-a"))
	_ = first.Process.Kill()
	_ = first.Wait()
	wf := "gantry:" + action.StateIdentity(w.state, "other")
	for _, tc := range []struct {
		args []string
		why  string
	}{
		{[]string{"undeploy", "hub.yaml", "-e", "ZONE=us"}, "it runs deploy, this command undeploy"},
		{[]string{"deploy", "hub.yaml", "-e", "ZONE=us", "-c", "b"}, "it runs every component, this command -c b"},
		{[]string{"deploy", "hub.yaml", "-e", "ZONE=us", "--resume"}, "its --resume is false, this command's true"},
		{[]string{"deploy", "hub.yaml"}, "its parameters differ from this command's: zone"},
	} {
		// Bounded: one that attached would wait for the deploy's end.
		cmd, buf := w.start(tc.args...)
		code := waitExit(t, cmd, buf, time.Minute)
		out := buf.String()
		if code != 3 || !strings.Contains(out, "is locked by gantry deploy") || !strings.Contains(out, "(workflow "+wf+")") ||
			!strings.Contains(out, "that run is not the one this command asks for ("+tc.why+")") {
			t.Errorf("%s: exit %d, want 3 naming the workflow and %q:\n%s", strings.Join(tc.args, " "), code, tc.why, out)
		}
		if strings.Contains(out, "attached") || strings.Contains(out, "undeployed") {
			t.Errorf("%s attached or ran:\n%s", strings.Join(tc.args, " "), out)
		}
	}
	// The same deploy attaches; the run goes on only once it has (a run
	// that ended first would leave it a lock to take, and a run its own).
	same, buf := w.start("deploy", "hub.yaml", "-e", "ZONE=us")
	waitOutput(t, buf, "attached to the stack's run", time.Minute)
	touch(t, filepath.Join(w.dir, "go-a"))
	touch(t, filepath.Join(w.dir, "go-b"))
	if code := waitExit(t, same, buf, time.Minute); code != 0 || !strings.Contains(buf.String(), "b deployed") {
		t.Fatalf("the same deploy: exit %d\n%s", code, buf.String())
	}
	out, code := w.run("undeploy", "hub.yaml")
	if code != 0 || !strings.Contains(out, "a undeployed") || strings.Contains(out, "attached") {
		t.Errorf("the undeploy after the deploy ended: exit %d\n%s", code, out)
	}
	if st := readStateAt(t, w.state, "other"); st.Status != state.StatusUndeployed {
		t.Errorf("state: %s", st.Status)
	}
}

// TestTemporalWorkerRefusedByTheDatabase: a worker whose credentials the
// run's database refuses fails the run at once, saying how to give it
// credentials, and the client ends in seconds — the lock's release is not
// retried for minutes — saying the lock was not given back; the next
// deploy, with a worker the database takes, gives it back and runs.
func TestTemporalWorkerRefusedByTheDatabase(t *testing.T) {
	w := newOnWorkers(t, chainAB("refused", "#!/bin/sh\necho $COMPONENT_NAME ran\n"))
	u, err := url.Parse(w.state)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "not-the-password")
	bad, err := startWorkerProcess(w.dir, w.engine, u.String(), filepath.Join(w.dir, "bad.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bad.stop)
	cmd, out := w.start("deploy", "hub.yaml")
	code := waitExit(t, cmd, out, time.Minute)
	if code != 1 || !strings.Contains(out.String(), "SQLSTATE 28P01") ||
		!strings.Contains(out.String(), "this worker has no credentials the run's database takes: its -s/GANTRY_STATE") ||
		!strings.Contains(out.String(), "could not give the stack's lock back") {
		t.Errorf("deploy: exit %d\n%s", code, out.String())
	}
	bad.stop()
	w.worker("good")
	text, code := w.run("deploy", "hub.yaml")
	if code != 0 || !strings.Contains(text, "is no longer running but held the state's lock: released") || !strings.Contains(text, "b ran") {
		t.Errorf("the next deploy: exit %d\n%s", code, text)
	}
}
