package landscape

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// parentEnv makes the test binary play gantry in TestChildDiesWithParent:
// it starts a spiff child, says its pid and keeps it busy.
const parentEnv = "GANTRY_TEST_SPIFF_PARENT"

// busy is a template that evaluates for minutes in little memory: neither
// bound stops it soon.
const busy = "x: (( sum[[1..20000]|0|s,i|-> s + sum[[1..20000]|0|t,j|-> t + j]] ))\n"

// TestSpiffParentHelper is the parent of TestChildDiesWithParent; it does
// nothing in a normal test run.
func TestSpiffParentHelper(t *testing.T) {
	if os.Getenv(parentEnv) != "1" {
		t.Skip("helper of TestChildDiesWithParent")
	}
	c, err := startChild()
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString(strconv.Itoa(c.cmd.Process.Pid) + "\n")
	req, _ := json.Marshal([]Job{{Template: Doc{Name: "busy.yaml", Data: []byte(busy)}}})
	_, err = c.serve(context.Background(), req, time.Hour)
	t.Fatalf("the busy template ended: %v", err)
}

// TestChildDiesWithParent: a gantry killed with -9 while its spiff child
// evaluates a template that runs for minutes takes the child with it.
func TestChildDiesWithParent(t *testing.T) {
	parent := exec.Command(os.Args[0], "-test.run=^TestSpiffParentHelper$")
	parent.Env = append(os.Environ(), parentEnv+"=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		_ = parent.Process.Kill()
		_ = parent.Wait()
		t.Fatalf("the parent said %q (%v)", line, err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	// The child is at work before its parent dies.
	waitFor(t, func() bool { return cpuTicks(pid) > 0 }, "the child to start evaluating")
	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	waitFor(t, func() bool { return !alive(pid) }, "the child to end with its parent")
}

// waitFor polls until cond holds. The bound only turns a hang into a
// failure: without the fix the child runs for minutes.
func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s", what)
		}
	}
}

// procStat is the fields of /proc/PID/stat after the command's name, nil
// when the process is gone.
func procStat(pid int) []string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	s := string(data)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}

// alive reports whether a process runs: not gone, not a zombie waiting to
// be reaped by whoever inherited it.
func alive(pid int) bool {
	f := procStat(pid)
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// cpuTicks is the user CPU time a process used, in clock ticks.
func cpuTicks(pid int) int {
	f := procStat(pid)
	if len(f) < 12 {
		return 0
	}
	n, _ := strconv.Atoi(f[11])
	return n
}
