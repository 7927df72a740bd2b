package component

import (
	"encoding/binary"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func init() {
	if os.Getenv(keeperEnv) == "1" {
		os.Exit(keep(keeperFD))
	}
}

// keptOutput is the output of one process: its pipes (one, or stdout and
// stderr), as the keeper holds them.
type keptOutput struct {
	log, program string
	open         int   // pipes still held
	bytes        int64 // read after gantry was gone
	pid          int   // its writer once gantry is gone; 0 when none lives
}

// keptPipe is one pipe's reading end.
type keptPipe struct {
	id  uint64
	fd  int
	out *keptOutput
}

// keeper is the keeper process's state: the pipes it holds, by id, and the
// epoll set that tells it when one ends.
type keeper struct {
	sock, ep int
	byID     map[uint64]*keptPipe
	buf, oob []byte
	// gone is when gantry was found gone (zero while it lives).
	gone time.Time
}

// keep is the keeper's life (StartKeeper): hold the pipes gantry sends,
// let each go when its writers are gone, or when gantry says so; if gantry
// is gone without its goodbye, read every pipe still held to its end, so
// that its writers live on, and exit when none is left. It returns the
// exit code.
func keep(sock int) int {
	// In a session of its own, nothing should signal it; a hangup or an
	// interrupt is never the keeper's cue.
	signal.Ignore(syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
	closeInherited(sock)
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return 1
	}
	k := &keeper{sock: sock, ep: ep, byID: map[uint64]*keptPipe{},
		buf: make([]byte, 64<<10), oob: make([]byte, unix.CmsgSpace(2*4))}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, sock, epollEvent(unix.EPOLLIN, socketID)); err != nil {
		return 1
	}
	events := make([]unix.EpollEvent, 256)
	for {
		if !k.gone.IsZero() && len(k.byID) == 0 {
			return 0
		}
		n, err := unix.EpollWait(ep, events, -1)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 1
		}
		for _, ev := range events[:n] {
			if eventID(ev) != socketID {
				continue
			}
			// gantry's messages first: a hangup in this batch of a pipe
			// gantry dropped since is then known stale (its id is gone),
			// and one of a pipe that ended as gantry went is drained.
			if bye := k.receive(); bye {
				return 0
			}
		}
		for _, ev := range events[:n] {
			p := k.byID[eventID(ev)]
			if p == nil {
				// The socket, or a pipe let go earlier in this batch.
				continue
			}
			if k.gone.IsZero() {
				// Hung up: no process writes into it any more; gantry
				// reads what is left.
				k.close(p)
				continue
			}
			k.drain(p)
		}
		if k.gone.IsZero() {
			// Woken at most every keeperPause while gantry lives: the
			// messages and hangups of many processes are handled in one
			// go, instead of two wakes for every process.
			time.Sleep(keeperPause)
		}
	}
}

// keeperPause is the least time between two wakes of the keeper while
// gantry lives. Nothing waits for it meanwhile: gantry's messages queue
// in the socket, the processes' hangups in the epoll set.
const keeperPause = 2 * time.Millisecond

// socketID is the epoll data of gantry's socket; pipes' ids start at 1.
const socketID = 0

// epollEvent is an epoll entry asking for events of the pipe (or socket)
// of the id. The id, not the descriptor, is the entry's data: a number
// closed and received again in one batch would name another pipe.
func epollEvent(events uint32, id uint64) *unix.EpollEvent {
	return &unix.EpollEvent{Events: events, Fd: int32(uint32(id)), Pad: int32(uint32(id >> 32))}
}

// eventID is the id an epoll event is of (epollEvent).
func eventID(ev unix.EpollEvent) uint64 {
	return uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
}

// closeInherited closes the descriptors above stderr, but sock, that the
// keeper inherited (those not closed on exec: gantry's from whoever started
// it, such as a make's jobserver pipe): a keeper that outlives gantry must
// not hold them open. The runtime's own are closed on exec, and kept.
func closeInherited(sock int) {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range fds {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 || fd == sock {
			continue
		}
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
			unix.Close(fd)
		}
	}
}

// receive reads gantry's messages until none waits; bye when gantry said
// goodbye. At the end of the socket, gantry is gone: the keeper begins to
// drain what it holds.
func (k *keeper) receive() (bye bool) {
	for {
		n, oobn, _, _, err := unix.Recvmsg(k.sock, k.buf, k.oob, unix.MSG_DONTWAIT|unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return false
		}
		if err != nil || n == 0 {
			k.gantryGone()
			return false
		}
		msg := k.buf[:n]
		switch msg[0] {
		case msgBye:
			return true
		case msgOpen:
			k.open(msg[1:], k.oob[:oobn])
		case msgDrop:
			if len(msg) >= 9 {
				if p := k.byID[binary.LittleEndian.Uint64(msg[1:9])]; p != nil {
					k.close(p)
				}
			}
		}
	}
}

// open holds the pipes of an 'o' message.
func (k *keeper) open(body, oob []byte) {
	var fds []int
	if msgs, err := unix.ParseSocketControlMessage(oob); err == nil {
		for _, m := range msgs {
			if got, err := unix.ParseUnixRights(&m); err == nil {
				fds = append(fds, got...)
			}
		}
	}
	if len(body) < 8 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return
	}
	first := binary.LittleEndian.Uint64(body)
	log, program, _ := strings.Cut(string(body[8:]), "\x00")
	out := &keptOutput{log: log, program: program}
	for i, fd := range fds {
		// No events asked: a hangup is told all the same, and the output
		// flowing through the pipe does not wake the keeper.
		p := &keptPipe{id: first + uint64(i), fd: fd, out: out}
		if err := unix.EpollCtl(k.ep, unix.EPOLL_CTL_ADD, fd, epollEvent(0, p.id)); err != nil {
			unix.Close(fd)
			continue
		}
		k.byID[p.id] = p
		out.open++
	}
}

// close lets a pipe go; once gantry is gone, the last pipe of a process
// that the keeper drained says so in its log.
func (k *keeper) close(p *keptPipe) {
	// Out of the epoll set first: closing the descriptor does not take it
	// out while gantry's copy of the same open pipe is open, and the set
	// would go on telling of the hangup.
	_ = unix.EpollCtl(k.ep, unix.EPOLL_CTL_DEL, p.fd, nil)
	unix.Close(p.fd)
	delete(k.byID, p.id)
	p.out.open--
	if !k.gone.IsZero() && p.out.open == 0 {
		p.out.report(k.gone)
	}
}

// gantryGone begins the drain: every pipe held is read from now on, and
// the processes writing into them are named.
func (k *keeper) gantryGone() {
	k.gone = time.Now()
	_ = unix.EpollCtl(k.ep, unix.EPOLL_CTL_DEL, k.sock, nil)
	writers(k.byID)
	for id, p := range k.byID {
		_ = unix.EpollCtl(k.ep, unix.EPOLL_CTL_MOD, p.fd, epollEvent(unix.EPOLLIN, id))
	}
}

// drain reads what waits in a pipe, to its end (gantry made the pipe
// non-blocking).
func (k *keeper) drain(p *keptPipe) {
	for {
		n, err := unix.Read(p.fd, k.buf)
		if n > 0 {
			p.out.bytes += int64(n)
			continue
		}
		if err == unix.EINTR {
			continue
		}
		if err == unix.EAGAIN {
			return
		}
		k.close(p)
		return
	}
}

// report appends a line to the process's run log: gantry was killed, the
// process went on, and its output since was not kept. Nothing is said of a
// process that had ended and left nothing unread.
func (o *keptOutput) report(gone time.Time) {
	if o.log == "" || o.pid == 0 && o.bytes == 0 {
		return
	}
	now := time.Now()
	what := fmt.Sprintf("the last %d bytes %s printed were not read", o.bytes, o.program)
	if o.pid != 0 {
		what = fmt.Sprintf("%s (pid %d) went on without it until its output ended %s later; what it printed from then on (%d bytes) was not kept",
			o.program, o.pid, now.Sub(gone).Round(time.Millisecond), o.bytes)
	}
	line := now.UTC().Format("2006-01-02T15:04:05.000Z") + " gantry: the gantry that ran this was killed at " +
		gone.UTC().Format("15:04:05.000Z") + "; " + what + ", as its secrets could not be masked\n"
	f, err := os.OpenFile(o.log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	_, _ = f.WriteString(line)
	f.Close()
}

// writers finds, for the outputs of the pipes held, the process writing
// into each: the leader of its group (the process gantry started) if it
// still writes there, else the one of lowest pid. It looks at every
// process's descriptors once.
func writers(pipes map[uint64]*keptPipe) {
	byInode := map[string]*keptOutput{}
	for _, p := range pipes {
		var st unix.Stat_t
		if unix.Fstat(p.fd, &st) == nil {
			byInode["pipe:["+strconv.FormatUint(st.Ino, 10)+"]"] = p.out
		}
	}
	if len(byInode) == 0 {
		return
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	found := map[*keptOutput][]int{}
	self := os.Getpid()
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		dir := "/proc/" + e.Name() + "/fd/"
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, f := range fds {
			if target, err := os.Readlink(dir + f.Name()); err == nil {
				if out := byInode[target]; out != nil {
					found[out] = append(found[out], pid)
					break
				}
			}
		}
	}
	for out, pids := range found {
		sort.Ints(pids)
		out.pid = pids[0]
		for _, pid := range pids {
			if st, ok := readStat(pid); ok && st.pgrp == pid {
				out.pid = pid
				break
			}
		}
	}
}
