package temporal

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/component"
)

// ownGroupEnv makes this test program a step's descendant that leaves the
// step's process group for one of its own: it writes its pid to the file
// the variable names, then sleeps.
const ownGroupEnv = "GANTRY_TEST_OWN_GROUP"

func init() {
	if path := os.Getenv(ownGroupEnv); path != "" {
		_ = syscall.Setpgid(0, 0)
		if os.WriteFile(path+".tmp", []byte(strconv.Itoa(os.Getpid())), 0o600) == nil {
			_ = os.Rename(path+".tmp", path)
		}
		time.Sleep(10 * time.Minute)
		os.Exit(0)
	}
}

// stalledWatcher is a reaper whose worker is descheduled between a
// process's start and the news of its group: Started waits for release.
type stalledWatcher struct {
	*reaper
	reached chan struct{}
	release chan struct{}
}

func (s *stalledWatcher) Started(mark string, pgid int) {
	close(s.reached)
	<-s.release
	s.reaper.Started(mark, pgid)
}

// TestReaperKillsProcessesItHasNoGroupOf: a worker that dies after a
// step's process started but before it told its reaper of the process's
// group (descheduled there, on a busy machine) leaves nothing running: the
// reaper finds the process by its mark and kills it, its group, and a
// descendant that left the group. The processes of a step that ended are
// left alone.
func TestReaperKillsProcessesItHasNoGroupOf(t *testing.T) {
	r, err := startReaper()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.close)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()

	// A step that ended left a process of its own group behind.
	ended := exec.Command(self)
	mark := r.Starting()
	ended.Env = append(os.Environ(), ownGroupEnv+"="+filepath.Join(dir, "ended.pid"), mark)
	if err := ended.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ended.Process.Kill(); _ = ended.Wait() })
	r.Started(mark, ended.Process.Pid)
	r.Ended(mark, ended.Process.Pid)
	waitPIDFile(t, filepath.Join(dir, "ended.pid"))

	// A step runs: its shell, a sleep in its group, a descendant in a
	// group of its own.
	s := &stalledWatcher{reaper: r, reached: make(chan struct{}), release: make(chan struct{})}
	ctx := component.WithWatcher(context.Background(), s)
	script := `sleep 600 & echo $! > sleep.pid; "$HELPER" & wait`
	done := make(chan error, 1)
	go func() {
		done <- component.Run(ctx, component.Process{
			Args: []string{"/bin/sh", "-c", script}, Dir: dir,
			Env: append(os.Environ(), "HELPER="+self, ownGroupEnv+"="+filepath.Join(dir, "own.pid")),
		})
	}()
	select {
	case <-s.reached:
	case err := <-done:
		t.Fatalf("the step ended before it started: %v", err)
	}
	sleepPID := waitPIDFile(t, filepath.Join(dir, "sleep.pid"))
	ownPID := waitPIDFile(t, filepath.Join(dir, "own.pid"))
	t.Cleanup(func() {
		_ = syscall.Kill(sleepPID, syscall.SIGKILL)
		_ = syscall.Kill(ownPID, syscall.SIGKILL)
	})

	// The worker dies before it tells of the step's group: its end of the
	// pipe closes. close returns once the reaper is done.
	r.close()
	close(s.release)
	select {
	case err := <-done:
		var ee *component.ExitError
		if !errors.As(err, &ee) || ee.Signal != "SIGKILL (killed)" {
			t.Errorf("the step's process: %v, want it killed", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the step's process outlived its worker")
	}
	for name, pid := range map[string]int{"the sleep in its group": sleepPID, "its descendant in a group of its own": ownPID} {
		if !waitDead(pid, time.Minute) {
			t.Errorf("%s (pid %d) outlived its worker", name, pid)
		}
	}

	// The ended step's process was not killed by the reaper: a SIGTERM
	// sent now is what ends it.
	_ = ended.Process.Signal(syscall.SIGTERM)
	err = ended.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("the ended step's process: %v", err)
	}
	if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("the ended step's process: %v, want it ended by the SIGTERM sent after the reaper", err)
	}
}

// waitPIDFile waits for a file to hold a process id.
func waitPIDFile(t *testing.T, path string) int {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; {
		if b, err := os.ReadFile(path); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				return pid
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no process id in %s", path)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitDead waits for a process that is not this one's child to be gone or
// a zombie (whoever adopted it may not reap it).
func waitDead(pid int, timeout time.Duration) bool {
	for deadline := time.Now().Add(timeout); ; {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return true
		}
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 && len(b) > i+2 && (b[i+2] == 'Z' || b[i+2] == 'X') {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestReaperMarkerCopiedIsRefused: GANTRY_WORKER_REAPER in the environment
// of a gantry not started as a reaper makes it say so and exit with status
// 2, not exit 0 having done nothing.
func TestReaperMarkerCopiedIsRefused(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), reaperEnv+"=1")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "GANTRY_WORKER_REAPER is set in the environment") {
		t.Errorf("it ended with %v, saying %q; want status 2 and the variable named", err, out)
	}
}
