package main

import (
	"encoding/json"
	"errors"
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

// crashRandomComponents is the size of the stack TestSIGKILLAtRandomInstants
// deploys, crashRandomParallel the --parallel it deploys it with.
const (
	crashRandomComponents = 500
	crashRandomParallel   = "8"
	crashRandomDAGSeed    = 20
)

// crashRandomStack is a stack of n components in a random DAG (a fixed seed:
// each depends on up to 3 earlier ones), all sharing the folder comp, and the
// names of the components in order.
func crashRandomStack(n int) (string, []string) {
	rng := rand.New(rand.NewSource(crashRandomDAGSeed))
	var hub strings.Builder
	hub.WriteString("version: 1\nkind: stack\nmeta: {name: crashes}\ncomponents:\n")
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("c%03d", i)
		fmt.Fprintf(&hub, "  - name: %s\n    source: {dir: comp}\n", names[i])
		seen := map[int]bool{}
		var deps []string
		for k := 0; k < 3 && i > 0; k++ {
			if j := rng.Intn(i); !seen[j] {
				seen[j] = true
				deps = append(deps, names[j])
			}
		}
		if len(deps) > 0 {
			fmt.Fprintf(&hub, "    depends: [%s]\n", strings.Join(deps, ", "))
		}
	}
	return hub.String(), names
}

// crashRandomWrite writes the stack into a new folder dir: its components'
// deploy, as its last action, creates done/<component>.
func crashRandomWrite(t *testing.T, dir, hub string) {
	t.Helper()
	files := map[string]string{
		"hub.yaml":                hub,
		"comp/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: comp}\n",
		"comp/deploy":             "#!/bin/sh\n: > '" + filepath.Join(dir, "done") + "'/\"$COMPONENT_NAME\"\n",
	}
	writeFilesIn(t, dir, files)
	if err := os.Chmod(filepath.Join(dir, "comp/deploy"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "done"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// crashRandomDeploy runs gantry deploy on the stack in dir to its end.
func crashRandomDeploy(dir string) ([]byte, error) {
	cmd := exec.Command("gantry", "deploy", "hub.yaml", "--parallel", crashRandomParallel)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

// crashRandomCounts counts the components of a state by status.
func crashRandomCounts(st *state.State) map[string]int {
	n := map[string]int{}
	if st == nil {
		return n
	}
	for _, c := range st.Components {
		n[c.Status]++
	}
	return n
}

// crashRandomStrays are the processes whose working folder is in dir: the
// components a killed gantry left running (they lead their own process
// groups, so SIGKILL of gantry does not reach them).
func crashRandomStrays(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || (cwd != dir && !strings.HasPrefix(cwd, dir+string(filepath.Separator))) {
			continue
		}
		if alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// crashRandomReap waits for the processes left in dir to end, so that the
// folder can be removed; they are one-line scripts and end on their own.
// Should one hang for minutes, it is killed with its group and said: this is
// cleanup, not a check.
func crashRandomReap(t *testing.T, dir string) {
	t.Helper()
	start := time.Now()
	for {
		pids := crashRandomStrays(dir)
		if len(pids) == 0 {
			return
		}
		if time.Since(start) > 2*time.Minute {
			t.Logf("cleanup: killing processes still running in %s after %s: %v", dir, time.Since(start).Round(time.Second), pids)
			for _, pid := range pids {
				_ = syscall.Kill(-pid, syscall.SIGKILL)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// crashRandomKeep copies what tells a failed trial's story (the stack, the
// state, its journal, gantry's output) to a folder that outlives the test,
// and returns it.
func crashRandomKeep(t *testing.T, dir string, trial int, outputs map[string]string) string {
	t.Helper()
	keep, err := os.MkdirTemp("", fmt.Sprintf("gantry-crash-trial%d-", trial))
	if err != nil {
		t.Logf("cannot keep the trial's files: %v", err)
		return ""
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "hub.yaml*"))
	for _, m := range matches {
		if data, err := os.ReadFile(m); err == nil {
			_ = os.WriteFile(filepath.Join(keep, filepath.Base(m)), data, 0o600)
		}
	}
	for name, out := range outputs {
		_ = os.WriteFile(filepath.Join(keep, name+".out"), []byte(out), 0o600)
	}
	done, _ := os.ReadDir(filepath.Join(dir, "done"))
	var names []string
	for _, d := range done {
		names = append(names, d.Name())
	}
	_ = os.WriteFile(filepath.Join(keep, "done.txt"), []byte(strings.Join(names, "\n")+"\n"), 0o600)
	return keep
}

// crashRandomExplain is the part of gantry explain --output json read here.
type crashRandomExplain struct {
	Stack      string `json:"stack"`
	Status     string `json:"status"`
	Components map[string]struct {
		Status string `json:"status"`
	} `json:"components"`
}

// TestSIGKILLAtRandomInstants deploys a stack of 500 components in a random
// DAG with --parallel 8 and kills gantry with SIGKILL at a random instant of
// the run, GANTRY_CRASH_TRIALS times (default 10). After each kill the state
// must parse (gantry explain and state.ReadFile agree on it), no component may
// be recorded deployed that did not finish (each leaves done/<name> as its
// last action), and a fresh deploy must complete the whole stack and leave no
// journal behind.
//
// The instants are drawn from [0, D], D being how long one whole deploy of
// the same stack takes on this machine, measured first; every eighth trial
// kills at once, and every eighth (from the fifth) draws from the last tenth
// of [0, D], where the run ends and compacts its journal. GANTRY_CRASH_SEED
// fixes the draw (it is logged); the instants, on a loaded machine, do not
// repeat.
func TestSIGKILLAtRandomInstants(t *testing.T) {
	if testing.Short() {
		t.Skip("deploys 500 components several times per trial")
	}
	trials := 10
	if s := os.Getenv("GANTRY_CRASH_TRIALS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			t.Fatalf("GANTRY_CRASH_TRIALS=%q: expected a positive number", s)
		}
		trials = n
	}
	seed := time.Now().UnixNano()
	if s := os.Getenv("GANTRY_CRASH_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("GANTRY_CRASH_SEED=%q: expected a number", s)
		}
		seed = n
	}
	rng := rand.New(rand.NewSource(seed))
	hub, names := crashRandomStack(crashRandomComponents)
	base := t.TempDir()

	// D: one whole deploy, not killed, of the same stack.
	dir := filepath.Join(base, "measure")
	crashRandomWrite(t, dir, hub)
	began := time.Now()
	if out, err := crashRandomDeploy(dir); err != nil {
		t.Fatalf("the deploy that measures D failed: %v\n%s", err, crashRandomExcerpt(string(out)))
	}
	d := time.Since(began)
	if st := readState(t, dir); crashRandomCounts(st)[state.StatusDeployed] != len(names) {
		t.Fatalf("the deploy that measures D deployed %d of %d components", crashRandomCounts(st)[state.StatusDeployed], len(names))
	}
	crashRandomReap(t, dir)
	_ = os.RemoveAll(dir)
	t.Logf("D = %s (one whole deploy of %d components, --parallel %s); %d trials, seed %d (GANTRY_CRASH_SEED)",
		d.Round(time.Millisecond), len(names), crashRandomParallel, trials, seed)

	kinds := map[string]int{}
	var explainNoState, explainJSON, failed, ran int
	var longest time.Duration
	for trial := range trials {
		// A trial costs up to two whole deploys and a kill: stop, and say so,
		// rather than run into go test's -timeout.
		if deadline, ok := t.Deadline(); ok && time.Until(deadline) < 3*longest+30*time.Second {
			t.Logf("stopping after %d of %d trials: go test's -timeout is near (run with -timeout 0 for more)", ran, trials)
			break
		}
		var delay time.Duration
		switch trial % 8 {
		case 0: // at once
		case 4:
			delay = d - time.Duration(rng.Int63n(int64(d)/10+1))
		default:
			delay = time.Duration(rng.Int63n(int64(d) + 1))
		}
		began := time.Now()
		kind, ok := crashRandomTrial(t, base, hub, names, trial, delay)
		longest = max(longest, time.Since(began))
		ran++
		if !ok {
			failed++ // crashRandomTrial said what failed; the next trials still run
			continue
		}
		kinds[kind]++
		if kind == "before the first write" {
			explainNoState++
		} else {
			explainJSON++
		}
	}
	var summary []string
	for k, n := range kinds {
		summary = append(summary, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(summary)
	t.Logf("summary: %d trials (%d failed), D = %s, longest trial %s: kills %s; explain: %d said no state, %d gave JSON",
		ran, failed, d.Round(time.Millisecond), longest.Round(time.Millisecond), strings.Join(summary, ", "), explainNoState, explainJSON)
}

// crashRandomExcerpt is what a message shows of gantry's output: from a Go
// runtime's fatal error or panic on, else the last lines (the trial's files
// keep all of it).
func crashRandomExcerpt(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	from := max(0, len(lines)-40)
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "fatal error:") || strings.HasPrefix(strings.TrimSpace(l), "panic:") {
			from = i
			break
		}
	}
	to := min(len(lines), from+60)
	excerpt := strings.Join(lines[from:to], "\n")
	if from > 0 || to < len(lines) {
		excerpt = fmt.Sprintf("(lines %d-%d of %d)\n%s", from+1, to, len(lines), excerpt)
	}
	return excerpt
}

// crashRandomTrial runs one trial: deploy, SIGKILL after delay, check the
// state, deploy again. It returns where the kill landed, and false when the
// trial failed (it said why).
func crashRandomTrial(t *testing.T, base, hub string, names []string, trial int, delay time.Duration) (string, bool) {
	t.Helper()
	dir := filepath.Join(base, fmt.Sprintf("trial%03d", trial))
	crashRandomWrite(t, dir, hub)
	statePath := filepath.Join(dir, "hub.yaml.state")
	outputs := map[string]string{}
	where := fmt.Sprintf("kill drawn at %.1f ms", float64(delay.Microseconds())/1000)
	fail := func(format string, args ...any) (string, bool) {
		t.Helper()
		keep := crashRandomKeep(t, dir, trial, outputs)
		t.Errorf("trial %d (%s): %s\nthe trial's files are kept in %s", trial, where, fmt.Sprintf(format, args...), keep)
		crashRandomReap(t, dir)
		return "", false
	}

	// The run to kill.
	cmd := exec.Command("gantry", "deploy", "hub.yaml", "--parallel", crashRandomParallel)
	cmd.Dir = dir
	out := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var werr error
	var at time.Duration
	timer := time.NewTimer(delay)
	select {
	case werr = <-exited:
		timer.Stop()
		at = time.Since(started)
	case <-timer.C:
		at = time.Since(started)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Fatal(err)
		}
		werr = <-exited
	}
	outputs["killed-deploy"] = out.String()
	where = fmt.Sprintf("kill at %.1f ms, drawn %.1f ms", float64(at.Microseconds())/1000, float64(delay.Microseconds())/1000)
	killed := false
	var ee *exec.ExitError
	if errors.As(werr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			killed = true
		}
	}
	if !killed && werr != nil {
		return fail("the deploy to kill ended on its own and failed: %v\n%s", werr, crashRandomExcerpt(out.String()))
	}

	// 1. gantry explain --output json: JSON, or no state and says so.
	_, statErr := os.Stat(statePath)
	hasState := statErr == nil
	explain := exec.Command("gantry", "explain", "--output", "json")
	explain.Dir = dir
	var stdout, stderr strings.Builder
	explain.Stdout, explain.Stderr = &stdout, &stderr
	eerr := explain.Run()
	outputs["explain"] = stdout.String() + stderr.String()
	var ex crashRandomExplain
	switch {
	case !hasState && !errors.Is(statErr, os.ErrNotExist):
		return fail("stat %s: %v", statePath, statErr)
	case !hasState:
		if eerr == nil || !strings.Contains(stderr.String(), "no state at") {
			return fail("no state file, yet gantry explain (%v) did not say there is no state:\n%s%s", eerr, stdout.String(), stderr.String())
		}
		if _, err := os.Stat(state.JournalPath(statePath)); err == nil {
			return fail("a journal without a snapshot")
		}
	case eerr != nil:
		return fail("gantry explain --output json failed: %v\n%s%s", eerr, stdout.String(), stderr.String())
	default:
		if err := json.Unmarshal([]byte(stdout.String()), &ex); err != nil {
			return fail("gantry explain --output json is not JSON: %v\n%s", err, stdout.String())
		}
	}

	// 2. The state parses, agrees with explain, and records deployed only
	// what finished.
	st, err := state.ReadFile(statePath)
	if err != nil {
		return fail("state.ReadFile after SIGKILL: %v", err)
	}
	if hasState != (st != nil) {
		return fail("the state file exists: %v, yet state.ReadFile gave a state: %v", hasState, st != nil)
	}
	counts := crashRandomCounts(st)
	if st != nil {
		if len(ex.Components) != len(st.Components) {
			return fail("explain shows %d components, the state holds %d", len(ex.Components), len(st.Components))
		}
		for name, c := range st.Components {
			if got := ex.Components[name].Status; got != c.Status {
				return fail("explain says %s is %q, the state says %q", name, got, c.Status)
			}
		}
		known := map[string]bool{}
		for _, n := range names {
			known[n] = true
		}
		var bad []string
		for name, c := range st.Components {
			switch {
			case !known[name]:
				bad = append(bad, fmt.Sprintf("%s: not in the stack (%q)", name, c.Status))
			case c.Status == state.StatusDeployed:
				if _, err := os.Stat(filepath.Join(dir, "done", name)); err != nil {
					bad = append(bad, fmt.Sprintf("%s: deployed, but its deploy never finished (no done/%s)", name, name))
				}
			case c.Status != state.StatusIncomplete:
				bad = append(bad, fmt.Sprintf("%s: %q (%s) — nothing in this stack fails", name, c.Status, c.Reason))
			}
		}
		if len(bad) > 0 {
			sort.Strings(bad)
			return fail("after SIGKILL the state is wrong about %d component(s):\n  %s", len(bad), strings.Join(bad, "\n  "))
		}
	}
	_, jerr := os.Stat(state.JournalPath(statePath))
	journalLeft := jerr == nil
	strays := len(crashRandomStrays(dir))

	var kind string
	switch {
	case !killed:
		kind = "after the run ended"
	case st == nil:
		kind = "before the first write"
	case counts[state.StatusDeployed] == len(names):
		kind = "at the end (all deployed)"
	case counts[state.StatusDeployed] >= len(names)*9/10:
		kind = "near the end (90% deployed)"
	default:
		kind = "mid-run"
	}

	where = fmt.Sprintf("kill at %.1f ms, %s: %d deployed, %d incomplete", float64(at.Microseconds())/1000, kind, counts[state.StatusDeployed], counts[state.StatusIncomplete])

	// 3. A fresh deploy completes the stack and compacts the journal away.
	again := time.Now()
	out2, err := crashRandomDeploy(dir)
	tookAgain := time.Since(again)
	outputs["second-deploy"] = string(out2)
	if err != nil {
		return fail("the deploy after SIGKILL failed: %v\n%s", err, crashRandomExcerpt(string(out2)))
	}
	after, err := state.ReadFile(statePath)
	if err != nil {
		return fail("state.ReadFile after the second deploy: %v", err)
	}
	if after == nil {
		return fail("no state after the second deploy")
	}
	var missing []string
	for _, n := range names {
		if got := statusOf(after, n); got != state.StatusDeployed {
			missing = append(missing, n+": "+got)
		}
	}
	if len(missing) > 0 {
		return fail("after the second deploy %d component(s) are not deployed:\n  %s\n%s", len(missing), strings.Join(missing, "\n  "), crashRandomExcerpt(string(out2)))
	}
	if after.Status != state.StatusDeployed {
		return fail("after the second deploy the stack is %q\n%s", after.Status, crashRandomExcerpt(string(out2)))
	}
	if _, err := os.Stat(state.JournalPath(statePath)); !errors.Is(err, os.ErrNotExist) {
		return fail("the journal is left after a finished deploy (stat: %v)", err)
	}
	total := 0
	if st != nil {
		total = len(st.Components)
	}
	waited := strings.Contains(string(out2), "process group(s) running; waiting")
	litter, _ := filepath.Glob(filepath.Join(dir, "hub.yaml.state?*"))
	var extra []string
	for _, l := range litter {
		if b := filepath.Base(l); b != "hub.yaml.state.lock" {
			extra = append(extra, b)
		}
	}

	t.Logf("trial %2d: kill at %7.1f ms (drawn %7.1f ms): %-29s deployed %3d, incomplete %d, other %d; journal left %-5v; %d process(es) left running; next run took %s, waited for leftovers: %v%s",
		trial, float64(at.Microseconds())/1000, float64(delay.Microseconds())/1000, kind+";",
		counts[state.StatusDeployed], counts[state.StatusIncomplete],
		total-counts[state.StatusDeployed]-counts[state.StatusIncomplete],
		journalLeft, strays, tookAgain.Round(time.Millisecond), waited, crashRandomLitter(extra))
	crashRandomReap(t, dir)
	_ = os.RemoveAll(dir)
	return kind, true
}

func crashRandomLitter(extra []string) string {
	if len(extra) == 0 {
		return ""
	}
	return "; files left next to the state: " + strings.Join(extra, ", ")
}
