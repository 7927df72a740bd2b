package temporal

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
)

// reaperEnv marks this program as a worker's reaper.
const reaperEnv = "GANTRY_WORKER_REAPER"

func init() {
	if os.Getenv(reaperEnv) == "1" {
		reap()
		os.Exit(0)
	}
}

// reaper is a process that outlives its worker to kill the process groups
// of the worker's running steps when the worker dies, however it dies (kill
// -9 too): the worker tells it of each group on a pipe, and the pipe closes
// when the worker is gone. No step then runs beside its retry on another
// worker.
type reaper struct {
	mu  sync.Mutex
	w   *os.File
	cmd *exec.Cmd
}

// startReaper starts the worker's reaper: this program again, in a process
// group of its own (an interrupt at the worker's terminal is the worker's
// to handle).
func startReaper() (*reaper, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find gantry's own program for the worker's reaper: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), reaperEnv+"=1")
	cmd.Stdin = r
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("start the worker's reaper: %w", err)
	}
	r.Close()
	return &reaper{w: w, cmd: cmd}, nil
}

// Started tells the reaper of a step's process group.
func (r *reaper) Started(pgid int) { r.say("+", pgid) }

// Ended tells the reaper a group ended.
func (r *reaper) Ended(pgid int) { r.say("-", pgid) }

func (r *reaper) say(op string, pgid int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w != nil {
		fmt.Fprintf(r.w, "%s%d\n", op, pgid)
	}
}

// close ends the reaper: the worker stopped, its steps with it.
func (r *reaper) close() {
	r.mu.Lock()
	w := r.w
	r.w = nil
	r.mu.Unlock()
	if w != nil {
		w.Close()
		_ = r.cmd.Wait()
	}
}

// reap is the reaper's life: note the groups the worker tells of; when the
// worker is gone, kill those still running.
func reap() {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	groups := map[int]bool{}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		line := sc.Text()
		if len(line) < 2 {
			continue
		}
		pgid, err := strconv.Atoi(line[1:])
		if err != nil || pgid <= 1 {
			continue
		}
		if line[0] == '+' {
			groups[pgid] = true
		} else {
			delete(groups, pgid)
		}
	}
	for pgid := range groups {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
}
