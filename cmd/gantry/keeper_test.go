package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/testenv"
)

// printingStack writes a stack whose one component prints a line, with a
// secret in it, every 100 ms until a release file exists (or the test's
// folder goes), and writes the number of each line it printed into the
// file count; it notes its start, its end and its exit status in the file
// order.
func printingStack(t *testing.T) string {
	t.Helper()
	dir := writeFiles(t, map[string]string{
		"hub.yaml": "version: 1\nkind: stack\nmeta: {name: printing}\ncomponents:\n  - name: a\n    source: {dir: comp}\n",
		"comp/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: comp}\n" +
			"parameters:\n  - name: db.password\n    value: Sup3rS3cretValue\n    env: PW\n",
		"comp/Makefile": "deploy:\n\t@sh ./run.sh; echo \"exit $$?\" >> ../order\n",
		"comp/run.sh": "echo start >> ../order\ni=0\n" +
			"while [ ! -e ../release ] && [ -e ../hub.yaml ]; do\n" +
			"  echo \"line $i: connecting with $PW\"\n  echo $i > ../count.new && mv ../count.new ../count\n  i=$((i+1)); sleep 0.1\ndone\n" +
			"echo end >> ../order\n",
	})
	return dir
}

// startTagged starts gantry deploy with a tag in its environment, which its
// keeper inherits: keepersTagged finds it by it.
func startTagged(t *testing.T, dir, tag string) (*exec.Cmd, *testenv.SyncBuffer) {
	t.Helper()
	cmd := exec.Command("gantry", "deploy", "hub.yaml")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GANTRY_TEST_TAG="+tag)
	return cmd, startCmd(t, cmd)
}

// keepersTagged lists the live output keepers started by a gantry with the
// tag.
func keepersTagged(tag string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		vars := strings.Split(string(env), "\x00")
		has := func(kv string) bool {
			for _, v := range vars {
				if v == kv {
					return true
				}
			}
			return false
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if args := strings.Split(string(cmdline), "\x00"); len(args) > 2 && args[1] == "output-keeper" &&
			has("GANTRY_OUTPUT_KEEPER="+args[2]) && has("GANTRY_TEST_TAG="+tag) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitCount waits until the component of printingStack printed its line
// numbered at least n, and returns the number.
func waitCount(t *testing.T, dir string, n int) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(filepath.Join(dir, "count")); err == nil {
			if got, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && got >= n {
				return got
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("the component did not print its line %d", n)
	return 0
}

// TestKilledRunsProcessGoesOn: a run killed with SIGKILL while its
// component prints leaves the component running: it goes on printing (its
// output, which only the killed gantry read, is read to its end by the
// run's output keeper), the next run waits for it in its leftovers step,
// and it ends by itself with status 0. It died at its next line before
// (SIGPIPE), so that the next run found nothing to wait for. The killed
// run's log says what became of the output, without any of it (it holds
// a secret no one could mask any more). A run that ends normally leaves no
// keeper behind; the killed run's keeper exits once it drained the
// component.
func TestKilledRunsProcessGoesOn(t *testing.T) {
	dir := printingStack(t)
	tag := strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	first, _ := startTagged(t, dir, tag+"-killed")
	printed := waitCount(t, dir, 0)
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	// It goes on printing: two more lines.
	waitCount(t, dir, printed+2)
	again, out := startTagged(t, dir, tag+"-next")
	waitLeftoverWait(t, out)
	touch(t, filepath.Join(dir, "release"))
	if err := again.Wait(); err != nil {
		t.Fatalf("the next run failed: %v\n%s", err, out)
	}
	order, err := os.ReadFile(filepath.Join(dir, "order"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "start\nend\nexit 0\nstart\nend\nexit 0\n"; string(order) != want {
		t.Errorf("starts, ends and statuses:\n%s\nwant the killed run's a ended well, then the next run's:\n%s\n%s", order, want, out)
	}
	if st := readState(t, dir); st.Status != state.StatusDeployed {
		t.Errorf("stack status %q:\n%s", st.Status, out)
	}
	if left := keepersTagged(tag + "-next"); len(left) > 0 {
		t.Errorf("the run that ended normally left its keeper running: %v", left)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(keepersTagged(tag+"-killed")) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the killed run's keeper did not exit: %v", keepersTagged(tag+"-killed"))
		}
		time.Sleep(5 * time.Millisecond)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, ".gantry", "runs", "*", "a.log"))
	said := 0
	for _, path := range logs {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), "Sup3rS3cretValue") {
			t.Errorf("%s holds the secret:\n%s", path, data)
		}
		if strings.Contains(string(data), "gantry: the gantry that ran this ended without saying goodbye (killed or crashed) at ") &&
			strings.Contains(string(data), "make (pid ") && strings.Contains(string(data), ") was not kept") &&
			strings.Contains(string(data), ", as its secrets could not be masked\n") {
			said++
		}
	}
	if said != 1 {
		for _, path := range logs {
			data, _ := os.ReadFile(path)
			t.Logf("%s:\n%s", path, data)
		}
		t.Errorf("%d of the logs say that the killed run's output was not kept, want 1", said)
	}
}
