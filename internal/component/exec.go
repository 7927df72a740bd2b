package component

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gantry-dev/gantry/internal/component/keeper"
)

// DefaultGrace is how long a cancelled process group gets between SIGTERM and
// SIGKILL, unless GANTRY_STOP_GRACE (a duration: 30s, 2m) says otherwise.
const DefaultGrace = 10 * time.Second

// StopGrace is the grace period of this gantry: GANTRY_STOP_GRACE, else
// DefaultGrace.
func StopGrace() time.Duration { return stopGrace() }

var stopGrace = sync.OnceValue(func() time.Duration {
	if v := os.Getenv("GANTRY_STOP_GRACE"); v != "" {
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			return d
		}
		slog.Warn("GANTRY_STOP_GRACE is not a positive duration (like 30s); using the default", "value", v, "default", DefaultGrace)
	}
	return DefaultGrace
})

type stopNowKey struct{}

// WithStopNow returns a context whose processes are killed at once, without
// their grace period, when now is done: a second interrupt, from someone
// who will not wait. It holds also for processes run under a context that
// is never cancelled (context.WithoutCancel: an installation handler's
// finalize) but carries ctx's values.
func WithStopNow(ctx context.Context, now context.Context) context.Context {
	return context.WithValue(ctx, stopNowKey{}, now)
}

// StopNow is the context's stop-now context (WithStopNow), done at a
// second interrupt; one never done when it has none.
func StopNow(ctx context.Context) context.Context { return stopNow(ctx) }

// stopNow is the context's stop-now context; one never done without one.
func stopNow(ctx context.Context) context.Context {
	if now, ok := ctx.Value(stopNowKey{}).(context.Context); ok {
		return now
	}
	return context.Background()
}

// devNull is the standard input of processes given none, opened once and
// shared: each child gets its own copy of the descriptor.
var devNull = sync.OnceValues(func() (*os.File, error) { return os.Open(os.DevNull) })

// waitDelay is how long Run waits, once its process ended, for the
// descendants that hold its output pipes open to close them (a variable
// for tests). A reader as stdin, which no caller gives, os/exec waits for
// first, up to as long again.
var waitDelay = keeper.OutputWait

// Process is a command to run in its own process group.
type Process struct {
	Args []string
	// Name is how messages name the process when its arguments would not
	// say it (a wrapper script: "action function probe"); Args joined
	// when empty.
	Name   string
	Dir    string
	Env    []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Grace is the time between SIGTERM and SIGKILL on cancellation.
	Grace time.Duration
}

// ExitError is a process that ended with a non-zero status or a signal.
type ExitError struct {
	Args []string
	// Name names the process in the message instead of Args (Process.Name).
	Name   string
	Code   int    // -1 when killed by a signal
	Signal string // the signal that killed it
}

func (e *ExitError) Error() string {
	name := e.Name
	if name == "" {
		name = strings.Join(e.Args, " ")
	}
	if e.Signal != "" {
		return fmt.Sprintf("%s was killed by %s", name, e.Signal)
	}
	return fmt.Sprintf("%s exited with status %d", name, e.Code)
}

// StoppedError is a process gantry stopped (SIGTERM, on a timeout or an
// interrupt) that exited with status 0 all the same: a program that shuts
// down cleanly on SIGTERM says nothing of whether it finished what it was
// started for, so the step failed.
//
// WithGantry is the same doubt about a process that ended with status 0
// after gantry itself got SIGTERM and before gantry signalled it: a SIGTERM
// sent to gantry and its components at once (systemd's default
// KillMode=control-group, a CI runner ending the job's process tree) ends
// such a program before gantry hears of it.
type StoppedError struct {
	Args []string
	// Name names the process in the message instead of Args (Process.Name).
	Name       string
	WithGantry bool
}

func (e *StoppedError) Error() string {
	name := e.Name
	if name == "" {
		name = strings.Join(e.Args, " ")
	}
	if e.WithGantry {
		return fmt.Sprintf("%s ended with status 0 as gantry got SIGTERM, which may have reached it too: that does not say it finished", name)
	}
	return fmt.Sprintf("%s was stopped: it exited with status 0 on SIGTERM, which does not say it finished", name)
}

// Interrupt is the cause of a run's context cancelled by a signal gantry
// got (Ctrl-C, SIGTERM, a terminal that closed): a cancellation
// (errors.Is context.Canceled) that says which signal, and when gantry
// received it (zero: not known).
type Interrupt struct {
	Signal os.Signal
	At     time.Time
}

func (i Interrupt) Error() string { return context.Canceled.Error() }

// Is makes an interrupt a cancellation.
func (i Interrupt) Is(target error) bool { return target == context.Canceled }

// sigtermDoubt is how long before gantry received SIGTERM a process may
// have ended and still be doubted (terminatedWithGantry). A SIGTERM sent to
// the whole tree reaches the process and gantry at once, but gantry knows
// of it only once its signal goroutine ran, later under load; a process
// that ended well before that (its background children holding the output
// pipes, which Run waits for) had finished. Too short, a process the
// signal cut short is recorded done; too long, one that finished runs
// again: the doubt errs on the side of running again.
const sigtermDoubt = time.Second

// terminatedWithGantry reports whether ctx was cancelled because gantry got
// SIGTERM, the signal its components may have got too, no more than
// sigtermDoubt after a process ended at ended. Ctrl-C and a closed
// terminal reach only gantry's process group, which no component is in.
func terminatedWithGantry(ctx context.Context, ended time.Time) bool {
	var in Interrupt
	if ctx.Err() == nil || !errors.As(context.Cause(ctx), &in) || in.Signal != syscall.SIGTERM {
		return false
	}
	return in.At.IsZero() || ended.After(in.At.Add(-sigtermDoubt))
}

// Run runs the process and waits for it. The process leads its own group:
// when ctx is cancelled the whole group gets SIGTERM, then SIGKILL after the
// grace period (at once when the context's stop-now channel closes), so that
// no child survives an interrupted run.
func Run(ctx context.Context, p Process) error {
	if len(p.Args) == 0 {
		return errors.New("no command")
	}
	cmd := exec.Command(p.Args[0], p.Args[1:]...)
	cmd.Dir = p.Dir
	cmd.Env = p.Env
	cmd.Stdin = p.Stdin
	if p.Stdin == nil {
		// os/exec would open /dev/null for every process.
		if f, err := devNull(); err == nil {
			cmd.Stdin = f
		}
	}
	stdout, stderr, pipes, err := outPipes(p.Stdout, p.Stderr)
	if err != nil {
		return fmt.Errorf("start %s: %w", p.Args[0], err)
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// The keeper holds the pipes before the process can write into them:
	// a gantry killed from then on does not kill the process with them.
	if k := keeperFrom(ctx); k != nil && len(pipes) > 0 {
		k.hold(ctx, pipes, outputLogFrom(ctx).path(), filepath.Base(p.Args[0]))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Children that outlive the process keep its pipes open; do not wait
	// for them forever (the output pipes: waitOutputs; a reader as stdin:
	// os/exec).
	cmd.WaitDelay = waitDelay
	// The registry and a watcher know the process before it can run, by
	// marks in its environment: a run that dies before it notes the process
	// started leaves it to be found.
	reg := registryFrom(ctx)
	w := watcherFrom(ctx)
	var regMark, watchMark string
	var regN uint64
	if reg != nil {
		regMark, regN = reg.nextMark()
	}
	if w != nil {
		watchMark = w.Starting()
	}
	if reg != nil || w != nil {
		env := cmd.Env
		if env == nil {
			env = cmd.Environ() // what os/exec would give: PWD set to Dir
		}
		env = env[:len(env):len(env)]
		if reg != nil {
			env = append(env, regMark)
		}
		if w != nil {
			env = append(env, watchMark)
		}
		cmd.Env = env
	}
	if err := cmd.Start(); err != nil {
		for _, op := range pipes {
			op.abandon()
		}
		if w != nil {
			w.Ended(watchMark, 0)
		}
		return startError(p.Args[0], cmd.Path, p.Dir, err)
	}
	for _, op := range pipes {
		op.start()
	}
	pgid := cmd.Process.Pid
	// The program and its folder only: arguments may hold secrets.
	slog.Debug("process started", "pid", pgid, "program", filepath.Base(p.Args[0]), "dir", p.Dir)
	if reg != nil {
		reg.started(pgid, regN, p.Dir, p.Args)
		defer reg.ended(pgid)
	}
	if w != nil {
		w.Started(watchMark, pgid)
		defer w.Ended(watchMark, pgid)
	}
	grace := p.Grace
	if grace <= 0 {
		grace = stopGrace()
	}
	now := stopNow(ctx)
	stopped := make(chan struct{})
	ended := func() bool {
		select {
		case <-stopped:
			return true
		default:
			return false
		}
	}
	// Callbacks, not goroutines watching the contexts: most processes end
	// without either ever being done.
	terminated := make(chan struct{})
	// signalled: the leader got SIGTERM while it ran (not its descendants
	// only, once it had exited: those hold its pipes past its end).
	var signalled, exited atomic.Bool
	dontTerminate := context.AfterFunc(ctx, func() {
		defer close(terminated)
		if ended() {
			return
		}
		// A leader that exited on its own, not reaped yet, was not
		// stopped: its descendants get the signal all the same.
		ranOn := !exited.Load() && !leaderEnded(pgid)
		if syscall.Kill(-pgid, syscall.SIGTERM) == nil && ranOn {
			signalled.Store(true)
		}
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-stopped:
		case <-t.C:
		case <-now.Done():
		}
		// Whatever is left of the group goes now, the leader included if it
		// ignored SIGTERM.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	})
	killed := make(chan struct{})
	dontKill := context.AfterFunc(now, func() {
		defer close(killed)
		if !ended() {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	})
	err = cmd.Wait()
	endedAt := time.Now()
	exited.Store(true)
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ctx.Err() == nil {
		// Killed from outside gantry (an operator's kill of a hung make):
		// what it started must not go on alone, unseen, beside the retry
		// that the failure calls for.
		stopGroup(pgid, grace, now)
	}
	if cerr := waitOutputs(pipes, waitDelay); err == nil {
		err = cerr
	}
	close(stopped)
	if !dontTerminate() {
		<-terminated
	}
	if !dontKill() {
		<-killed
	}
	slog.Debug("process ended", "pid", pgid, "status", cmd.ProcessState.String())
	if ctx.Err() != nil {
		// The leader is gone; make sure none of its group outlives it.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	err = exitError(p, err)
	switch {
	case err != nil:
	case signalled.Load():
		err = &StoppedError{Args: p.Args, Name: p.Name}
	case terminatedWithGantry(ctx, endedAt):
		// It ended before gantry signalled it, but gantry got SIGTERM
		// then or just after: whether the same SIGTERM ended it cannot be
		// told, and "deployed" must not be recorded for what it cut
		// short. At worst a step that had finished runs again.
		err = &StoppedError{Args: p.Args, Name: p.Name, WithGantry: true}
	}
	return err
}

// stopGroup stops what is left of a process group whose leader is gone:
// SIGTERM, then SIGKILL once the grace period passed (at once when now is
// done), unless the group ended before.
func stopGroup(pgid int, grace time.Duration, now context.Context) {
	if syscall.Kill(-pgid, syscall.SIGTERM) != nil {
		return // nobody left
	}
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-deadline.C:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			return
		case <-now.Done():
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			return
		case <-tick.C:
			// Zombies are not waited for: they are gone, and a PID 1
			// that reaps late (a container's) would hold the step for
			// the whole grace period.
			if !groupAlive(pgid) {
				return
			}
		}
	}
}

// leaderEnded reports whether the process pid has exited, reaped or not
// (waitid with WNOWAIT leaves it to cmd.Wait).
func leaderEnded(pid int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	if err != nil {
		return true // reaped already (ECHILD)
	}
	return info.Signo != 0
}

// signalName names a signal as kill -l and the docs do, with Go's words:
// "SIGKILL (killed)" (Go's alone made "was killed by killed").
func signalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name + " (" + sig.String() + ")"
	}
	return sig.String()
}

func exitError(p Process, err error) error {
	if err == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return &ExitError{Args: p.Args, Name: p.Name, Code: -1, Signal: signalName(ws.Signal())}
		}
		return &ExitError{Args: p.Args, Name: p.Name, Code: ee.ExitCode()}
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		return nil
	}
	return err
}

// Environ builds a process environment: the OS environment (without TF_VAR_*
// variables unless keepTFVars), then extra, later entries winning.
func Environ(osEnv []string, keepTFVars bool, extra ...[]string) []string {
	return NewEnvBase(osEnv, keepTFVars).Environ(extra...)
}

// EnvBase is what the environments of a run's processes share: the OS
// environment, filtered and indexed once. Environ then places only each
// process's own variables (a map of the whole environment was made for
// every process started).
type EnvBase struct {
	list  []string
	index map[string]int
}

// NewEnvBase indexes the OS environment (without TF_VAR_* variables unless
// keepTFVars), later entries winning.
func NewEnvBase(osEnv []string, keepTFVars bool) *EnvBase {
	b := &EnvBase{list: make([]string, 0, len(osEnv)), index: make(map[string]int, len(osEnv))}
	for _, kv := range osEnv {
		if !keepTFVars && strings.HasPrefix(kv, "TF_VAR_") {
			continue
		}
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := b.index[k]; ok {
			b.list[i] = kv
			continue
		}
		b.index[k] = len(b.list)
		b.list = append(b.list, kv)
	}
	return b
}

// fewExtras is how many variables of its own a process may have before
// they are indexed by a map rather than searched.
const fewExtras = 32

// Environ is the base environment with extra added, later entries winning
// (in the place of the first). It is safe for concurrent use.
func (b *EnvBase) Environ(extra ...[]string) []string {
	n := len(b.list)
	for _, list := range extra {
		n += len(list)
	}
	out := make([]string, len(b.list), n)
	copy(out, b.list)
	var own map[string]int // the own variables' places, past fewExtras
	if n-len(b.list) > fewExtras {
		own = make(map[string]int, n-len(b.list))
	}
	for _, list := range extra {
		for _, kv := range list {
			k, _, _ := strings.Cut(kv, "=")
			if i, ok := b.index[k]; ok {
				out[i] = kv
				continue
			}
			if i := ownIndex(out, len(b.list), own, k); i >= 0 {
				out[i] = kv
				continue
			}
			if own != nil {
				own[k] = len(out)
			}
			out = append(out, kv)
		}
	}
	return out
}

// ownIndex finds the variable k among a process's own (out[from:]); -1
// when it has none.
func ownIndex(out []string, from int, own map[string]int, k string) int {
	if own != nil {
		if i, ok := own[k]; ok {
			return i
		}
		return -1
	}
	for i := from; i < len(out); i++ {
		if strings.HasPrefix(out[i], k) && (len(out[i]) == len(k) || out[i][len(k)] == '=') {
			return i
		}
	}
	return -1
}
