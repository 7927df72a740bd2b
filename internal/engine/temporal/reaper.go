package temporal

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/component/helper"
)

// reaperEnv marks this program as a worker's reaper, and reaperArg names
// it in ps (component.HelperCommand).
const (
	reaperEnv = "GANTRY_WORKER_REAPER"
	reaperArg = "worker-reaper"
)

// markEnv is the variable of a step process's environment that marks it,
// and its descendants, which inherit it: markEnv=<worker's token>.<n>.
const markEnv = "GANTRY_WORKER_STEP"

func init() {
	// Its stdin is the pipe from its worker.
	helper.RunAs(reaperArg, reaperEnv, func() bool {
		fi, err := os.Stdin.Stat()
		return err == nil && fi.Mode()&os.ModeNamedPipe != 0
	}, func() int { reap(); return 0 })
}

// reaper is a process that outlives its worker to kill the processes of
// the worker's running steps when the worker dies, however it dies (kill
// -9 too): the worker tells it on a pipe of each process before it starts,
// of the group it leads once started, and of its end; the pipe closes when
// the worker is gone. No step then runs beside its retry on another worker.
//
// A process is told of before it can run — by the mark its environment
// will hold (markEnv), as its process id is not known before it starts —
// so that a worker that dies between a process's start and the news of its
// group (descheduled there, on a busy machine) leaves nothing behind: the
// reaper finds the process, and its descendants, by their mark.
type reaper struct {
	mu    sync.Mutex
	w     *os.File
	cmd   *exec.Cmd
	token string // this worker's, in its marks
	n     uint64 // marks handed out
}

// startReaper starts the worker's reaper: this program again, in a process
// group of its own (an interrupt at the worker's terminal is the worker's
// to handle).
func startReaper() (*reaper, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find gantry's own program for the worker's reaper: %w", err)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := component.HelperCommand(self, reaperArg, reaperEnv)
	cmd.Stdin = r
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("start the worker's reaper: %w", err)
	}
	r.Close()
	return &reaper{w: w, cmd: cmd, token: hex.EncodeToString(b[:])}, nil
}

// Starting tells the reaper of a step's process about to start, and
// returns the mark of its environment.
func (r *reaper) Starting() string {
	r.mu.Lock()
	r.n++
	value := r.token + "." + strconv.FormatUint(r.n, 10)
	r.mu.Unlock()
	r.say("?" + value)
	return markEnv + "=" + value
}

// Started tells the reaper of the process group the process leads.
func (r *reaper) Started(mark string, pgid int) {
	r.say("+" + strings.TrimPrefix(mark, markEnv+"=") + " " + strconv.Itoa(pgid))
}

// Ended tells the reaper the process ended (or did not start).
func (r *reaper) Ended(mark string, _ int) {
	r.say("-" + strings.TrimPrefix(mark, markEnv+"="))
}

// say writes a line to the reaper: once written, the reaper reads it even
// if the worker dies the next instant.
func (r *reaper) say(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w != nil {
		_, _ = r.w.WriteString(line + "\n")
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

// reap is the reaper's life: note the processes the worker tells of, by
// their marks, and the groups they lead; when the worker is gone, kill
// those still running.
//
//	?<mark>          a process with the mark is about to start
//	+<mark> <pgid>   it started and leads the group pgid
//	-<mark>          it ended
func reap() {
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	running := map[string]int{} // mark → group (0 until known)
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		line := sc.Text()
		if len(line) < 2 {
			continue
		}
		switch mark, rest, _ := strings.Cut(line[1:], " "); line[0] {
		case '?':
			running[mark] = 0
		case '+':
			if pgid, err := strconv.Atoi(rest); err == nil && pgid > 1 {
				running[mark] = pgid
			}
		case '-':
			delete(running, mark)
		}
	}
	// The worker is gone. Its pipe closed only once every process it
	// forked had started its program (the pipe is close-on-exec), so each
	// holds its mark by now.
	for _, pgid := range running {
		if pgid > 1 {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}
	if len(running) > 0 {
		killMarked(running)
	}
}

// killMarked kills the processes whose environment holds the mark of one
// of the running processes, and the groups they lead, until a look at
// every process finds none it has not killed: the groups of the processes
// it was not yet told of, the descendants that left their group. A killed
// process starts no other, so this ends.
func killMarked(running map[string]int) {
	self := os.Getpid()
	killed := map[int]bool{}
	for {
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return
		}
		found := false
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == self || killed[pid] || !marked(pid, running) {
				continue
			}
			found = true
			killed[pid] = true
			// The group it leads, if it leads one, then itself.
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if !found {
			return
		}
	}
}

// marked reports whether a process's environment holds the mark of one of
// the running processes.
func marked(pid int, running map[string]int) bool {
	value, ok := component.ProcessEnv(pid, markEnv)
	if !ok {
		return false
	}
	_, ok = running[value]
	return ok
}
