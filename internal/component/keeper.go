package component

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gantry-dev/gantry/internal/component/keeper"
)

// Keeper is the run's output keeper: a process of its own (this program
// again, in a session of its own) that holds a second reading end of every
// output pipe of the run's processes, from before each process starts.
//
// A process's output is a pipe that gantry reads. Were gantry its only
// reader, a gantry killed with SIGKILL would kill its processes too, at
// their next line (SIGPIPE, or EPIPE, which Go programs such as terraform
// die of on their stdout and stderr): a terraform apply mid-way would end
// without writing its state, while the next run waits for leftovers that
// are already dead. While gantry lives the keeper reads nothing (gantry
// reads the output) and lets each end go once no process writes into it
// any more. When gantry is gone without saying goodbye, the keeper reads
// what is left of every pipe it holds until it ends, so that the processes
// go on and finish; it keeps none of it (it does not know the secrets the
// output must be masked of), and says so in the component's log.
//
// The socket to the keeper passes each pipe's end with SCM_RIGHTS in one
// message, sent before the process starts: from then on the kernel holds
// the end for the keeper, even if gantry dies before the keeper reads the
// message.
type Keeper struct {
	// ready is closed once the keeper was started, or failed to start.
	ready chan struct{}
	mu    sync.RWMutex
	fd    int // this process's end of the socket; -1 once unusable
	cmd   *exec.Cmd
	ids   atomic.Uint64 // pipe ids handed out
	// failed: a message could not be sent (said once).
	failed atomic.Bool
}

// StartKeeper starts the run's output keeper, without waiting for it: the
// run loads and plans meanwhile. A process that starts before the keeper
// did waits for it (hold). A keeper that cannot start is said once (a
// warning), and the run goes on without one.
func StartKeeper() *Keeper {
	k := &Keeper{ready: make(chan struct{}), fd: -1}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		k.cannot(os.NewSyscallError("socketpair", err))
		close(k.ready)
		return k
	}
	go k.start(fds[0], fds[1])
	return k
}

// start starts the keeper's process with the socket's end theirs.
func (k *Keeper) start(mine, theirs int) {
	defer close(k.ready)
	end := os.NewFile(uintptr(theirs), "keeper")
	defer end.Close()
	self, err := os.Executable()
	if err != nil {
		unix.Close(mine)
		k.cannot(err)
		return
	}
	cmd := HelperCommand(self, keeper.Arg, keeper.Env)
	// gantry's session, which the keeper cannot read from its parent once
	// gantry is gone: a gantry killed before the keeper got to run would
	// leave it naming no process as gantry's.
	if sid, err := unix.Getsid(0); err == nil {
		cmd.Env = append(cmd.Env, keeper.SessionEnv+"="+strconv.Itoa(sid))
	}
	cmd.Dir = "/" // it holds no folder
	cmd.ExtraFiles = []*os.File{end}
	// Its own session: an interrupt or a hangup of the terminal is gantry's
	// to handle, and the keeper must outlive a gantry killed by one.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		unix.Close(mine)
		k.cannot(err)
		return
	}
	k.mu.Lock()
	k.fd, k.cmd = mine, cmd
	k.mu.Unlock()
	slog.Debug("output keeper started", "pid", cmd.Process.Pid)
}

// cannot says once that the keeper cannot do its work.
func (k *Keeper) cannot(err error) {
	if k.failed.CompareAndSwap(false, true) {
		slog.Warn("gantry runs on without its output keeper: if gantry is killed, its processes may die at their next line of output", "error", err)
	}
}

// keeperSendWait is how long a message to the keeper waits for room in
// the socket before gantry gives up on the keeper (a variable for tests).
// A keeper that reads its messages empties the socket within milliseconds;
// one stopped (a debugger, a frozen cgroup) must not stop the run.
var keeperSendWait = 5 * time.Second

// errKeeperClosed is the keeper after Close.
var errKeeperClosed = errors.New("the output keeper was closed")

// hold hands the keeper the reading ends of a process's output pipes
// before the process starts, and tells the pipes their ids (drop). log is
// the component's run log, program the process's program: what the keeper
// names if it drains them. A keeper that cannot take them is given up on:
// the process runs, as the later ones, without one. ctx done (an
// interrupt) ends the wait for it.
func (k *Keeper) hold(ctx context.Context, pipes []*outPipe, log, program string) {
	select {
	case <-k.ready:
	case <-ctx.Done():
		return
	}
	if k.failed.Load() {
		return
	}
	n := uint64(len(pipes))
	first := k.ids.Add(n) - n + 1
	msg := make([]byte, 0, 1+8+len(log)+1+len(program))
	msg = append(msg, keeper.MsgOpen)
	msg = binary.LittleEndian.AppendUint64(msg, first)
	msg = append(append(append(msg, log...), 0), program...)
	var fds [2]int
	for i, p := range pipes {
		fds[i] = int(p.r.Fd())
	}
	if err := k.send(ctx, msg, unix.UnixRights(fds[:len(pipes)]...)); err != nil {
		if ctx.Err() == nil && !errors.Is(err, errKeeperClosed) {
			k.cannot(err)
		}
		return
	}
	for i, p := range pipes {
		p.keeper, p.keptID = k, first+uint64(i)
	}
}

// drop tells the keeper to close the pipe of the id: gantry closed its own
// end before the output ended.
func (k *Keeper) drop(id uint64) {
	err := k.send(context.Background(), binary.LittleEndian.AppendUint64([]byte{keeper.MsgDrop}, id), nil)
	if err != nil && !errors.Is(err, errKeeperClosed) {
		k.cannot(err)
	}
}

// send sends one message. It never blocks holding k.mu, which Close needs:
// when the socket is full it waits for room, up to keeperSendWait (not at
// all once the keeper failed), or until ctx or its stop-now context is done.
func (k *Keeper) send(ctx context.Context, msg, oob []byte) error {
	var deadline time.Time
	for {
		k.mu.RLock()
		fd, err := k.fd, errKeeperClosed
		if fd >= 0 {
			err = sendmsg(fd, msg, oob, unix.MSG_NOSIGNAL|unix.MSG_DONTWAIT)
		}
		k.mu.RUnlock()
		if err != unix.EAGAIN {
			if err != nil && err != errKeeperClosed {
				err = fmt.Errorf("tell the output keeper: %w", os.NewSyscallError("sendmsg", err))
			}
			return err
		}
		now := time.Now()
		if deadline.IsZero() {
			deadline = now.Add(keeperSendWait)
			if k.failed.Load() {
				deadline = now
			}
		}
		left := deadline.Sub(now)
		if left <= 0 {
			return fmt.Errorf("the output keeper read none of gantry's messages for %v", keeperSendWait)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := stopNow(ctx).Err(); err != nil {
			return err
		}
		// Room in the socket wakes the wait; ctx is looked at again within
		// keeperSendPoll. fd may be closed meanwhile (Close): the next
		// send under the lock finds that out.
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		_, _ = unix.Poll(pfd, int(min(left, keeperSendPoll).Milliseconds())+1)
	}
}

// keeperSendPoll is how often a send waiting for room looks at its context.
const keeperSendPoll = 20 * time.Millisecond

// sendmsg is unix.Sendmsg, again when interrupted.
func sendmsg(fd int, msg, oob []byte, flags int) error {
	for {
		if err := unix.Sendmsg(fd, msg, oob, nil, flags); err != unix.EINTR {
			return err
		}
	}
}

// Close ends the keeper when the run ends normally, its processes ended:
// it lets go of what it holds and is gone, reaped, when Close returns.
func (k *Keeper) Close() {
	if k == nil {
		return
	}
	<-k.ready
	k.mu.Lock()
	fd, cmd := k.fd, k.cmd
	k.fd, k.cmd = -1, nil
	k.mu.Unlock()
	if fd < 0 {
		return
	}
	// The goodbye, if there is room for it, and a kill so as not to wait
	// for the keeper's next wake: it holds nothing of worth any more.
	// Without either, the end of the socket would tell it that gantry was
	// killed.
	_ = sendmsg(fd, []byte{keeper.MsgBye}, nil, unix.MSG_NOSIGNAL|unix.MSG_DONTWAIT)
	_ = cmd.Process.Kill()
	unix.Close(fd)
	_ = cmd.Wait()
}

type keeperKey struct{}

// WithKeeper returns a context whose processes (Run) have their output
// pipes held by k (nil: none).
func WithKeeper(ctx context.Context, k *Keeper) context.Context {
	if k == nil {
		return ctx
	}
	return context.WithValue(ctx, keeperKey{}, k)
}

// HasKeeper reports whether the processes of ctx have a keeper.
func HasKeeper(ctx context.Context) bool { return keeperFrom(ctx) != nil }

func keeperFrom(ctx context.Context) *Keeper {
	k, _ := ctx.Value(keeperKey{}).(*Keeper)
	return k
}

type outputLogKey struct{}

// OutputLog is the run log a step's processes' output goes to: the file
// Name.log in the folder Dir.
type OutputLog struct{ Dir, Name string }

// path is the log's file; "" for none.
func (l *OutputLog) path() string {
	if l == nil {
		return ""
	}
	return filepath.Join(l.Dir, l.Name+".log")
}

// WithOutputLog returns a context whose processes' output goes to the run
// log l: where the keeper says what became of their output if gantry is
// killed.
func WithOutputLog(ctx context.Context, l *OutputLog) context.Context {
	return context.WithValue(ctx, outputLogKey{}, l)
}

func outputLogFrom(ctx context.Context) *OutputLog {
	l, _ := ctx.Value(outputLogKey{}).(*OutputLog)
	return l
}
