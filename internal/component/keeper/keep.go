// Package keeper is the output keeper's process (component.Keeper is
// gantry's side of it): this program again, started by gantry at the
// beginning of a run, that holds a second reading end of every output pipe
// of the run's processes and drains them if gantry dies.
//
// Its initialiser becomes the keeper when gantry started this process as
// one, and it imports the standard library only (and two packages of
// gantry's that do too): Go initialises a package once its imports are,
// the first by import path among those ready, so this one runs before
// gantry's heavy packages (Kubernetes' schemes, Helm's JSON schemas,
// Temporal's protocol buffers), whose initialisers took 60 ms of the
// keeper's 80 ms of CPU at every run. An import that sorts after them
// (golang.org/x/sys/unix, os/exec) would hold it back until they ran:
// TestKeeperStartsBeforeTheSDKs (cmd/gantry) says so.
package keeper

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

	"github.com/gantry-dev/gantry/internal/component/helper"
	"github.com/gantry-dev/gantry/internal/procstat"
)

func init() {
	helper.RunAs(Arg, Env, func() bool {
		typ, err := syscall.GetsockoptInt(FD, syscall.SOL_SOCKET, syscall.SO_TYPE)
		return err == nil && typ == syscall.SOCK_SEQPACKET
	}, func() int { return keep(FD) })
}

// keptOutput is the output of one process: its pipes (one, or stdout and
// stderr), as the keeper holds them.
type keptOutput struct {
	log, program string
	pipes        []*keptPipe
	open         int // pipes still held
	// bytes were read once gantry was gone, of which unread were in the
	// pipes then: printed before, never read by gantry.
	bytes, unread int64
	// Once gantry is gone: leader is the process gantry started, if it
	// still ran then (0 if not), watched by leaderFD (a pidfd; -1 when
	// none: looked at every keeperLook) until it ends, at leaderEnd;
	// writer is another process holding the output (the lowest pid; 0 if
	// none did). cutAt is when the output is let go if a process is still
	// writing into it (as gantry does OutputWait after the leader ended),
	// and cut says it was.
	leader, writer int
	leaderFD       int
	leaderEnd      time.Time
	cutAt          time.Time
	cut            bool
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
	// outputs are those with pipes held; leaders, once gantry is gone,
	// those whose leader is watched by a pidfd, by the pidfd's id.
	outputs  map[*keptOutput]bool
	leaders  map[uint64]*keptOutput
	buf, oob []byte
	// session is gantry's, whose processes' groups the keeper names.
	session int
	// gone is when gantry was found gone (zero while it lives).
	gone time.Time
}

// gantrySession is the session of the gantry that started the keeper, as
// it gave it (SessionEnv): the keeper cannot read it from its
// parent, which is no longer gantry once gantry was killed. 0 when not
// given (then any process group leader holding a pipe counts as one
// gantry started).
func gantrySession(given string) int {
	if sid, err := strconv.Atoi(given); err == nil && sid > 0 {
		return sid
	}
	return 0
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
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return 1
	}
	k := &keeper{sock: sock, ep: ep, byID: map[uint64]*keptPipe{}, outputs: map[*keptOutput]bool{},
		leaders: map[uint64]*keptOutput{}, buf: make([]byte, 64<<10), oob: make([]byte, syscall.CmsgSpace(2*4))}
	k.session = gantrySession(os.Getenv(SessionEnv))
	if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, sock, epollEvent(syscall.EPOLLIN, socketID)); err != nil {
		return 1
	}
	events := make([]syscall.EpollEvent, 256)
	for {
		if !k.gone.IsZero() && len(k.byID) == 0 {
			return 0
		}
		n, err := syscall.EpollWait(ep, events, k.timeout(time.Now()))
		if err == syscall.EINTR {
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
			id := eventID(ev)
			if o := k.leaders[id]; o != nil {
				k.leaderEnded(o, time.Now())
				continue
			}
			p := k.byID[id]
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
			continue
		}
		k.cutOverdue(time.Now())
	}
}

// leaderBit marks the epoll ids of leaders' pidfds, apart from pipes'.
const leaderBit = 1 << 63

// keeperLook is how often the keeper looks whether a leader it could not
// watch by a pidfd ended.
const keeperLook = 100 * time.Millisecond

// timeout is how long the keeper's next wait for events may last, in
// milliseconds (-1: as long as it takes): while gantry is gone, until the
// next output to cut, or the next look at leaders not watched by a pidfd.
func (k *keeper) timeout(now time.Time) int {
	if k.gone.IsZero() {
		return -1
	}
	var next time.Time
	for o := range k.outputs {
		at := o.cutAt
		if at.IsZero() && o.leader != 0 && o.leaderFD < 0 {
			at = now.Add(keeperLook)
		}
		if !at.IsZero() && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	if next.IsZero() {
		return -1
	}
	return int(max(next.Sub(now), 0)/time.Millisecond) + 1
}

// cutOverdue lets go of the outputs whose leader ended OutputWait ago with
// a process of it still writing into them, as gantry does (waitOutputs):
// the keeper does not keep a process gantry would not have kept. It looks
// at the leaders not watched by a pidfd first.
func (k *keeper) cutOverdue(now time.Time) {
	for o := range k.outputs {
		if o.leaderFD < 0 {
			k.lookAtLeader(o, now)
		}
		if !o.cutAt.IsZero() && !now.Before(o.cutAt) {
			o.cut = true
			// Named as it is now: it may have started after gantry was
			// gone.
			held := map[uint64]*keptPipe{}
			for _, p := range o.pipes {
				if k.byID[p.id] == p {
					held[p.id] = p
				}
			}
			o.writer = writer(holders(held)[o], o.leader)
			for _, p := range o.pipes {
				if k.byID[p.id] == p {
					k.close(p)
				}
			}
		}
	}
}

// lookAtLeader notes the end of an output's leader if it ended.
func (k *keeper) lookAtLeader(o *keptOutput, now time.Time) {
	if o.leader == 0 || !o.leaderEnd.IsZero() {
		return
	}
	if o.leaderFD >= 0 {
		if readable(o.leaderFD) {
			k.leaderEnded(o, now)
		}
		return
	}
	if st, ok := procstat.Read(o.leader); !ok || st.State == 'Z' {
		k.leaderEnded(o, now)
	}
}

// leaderEnded notes the end of an output's leader, which starts its
// OutputWait.
func (k *keeper) leaderEnded(o *keptOutput, at time.Time) {
	if !o.leaderEnd.IsZero() {
		return
	}
	o.leaderEnd, o.cutAt = at, at.Add(OutputWait)
	k.unwatch(o)
}

// unwatch closes the pidfd of an output's leader.
func (k *keeper) unwatch(o *keptOutput) {
	if o.leaderFD < 0 {
		return
	}
	for id, l := range k.leaders {
		if l == o {
			delete(k.leaders, id)
		}
	}
	syscall.Close(o.leaderFD)
	o.leaderFD = -1
}

// watch starts watching an output's leader once gantry is gone: by a
// pidfd in the epoll set, else by a look every keeperLook. An output
// whose leader had ended is let go OutputWait after gantry was gone: gantry
// would have let go of it by then at the latest.
func (k *keeper) watch(o *keptOutput, id uint64) {
	o.leaderFD = -1
	if o.leader == 0 {
		o.cutAt = k.gone.Add(OutputWait)
		return
	}
	fd, err := pidfdOpen(o.leader)
	if err != nil {
		return
	}
	if err := syscall.EpollCtl(k.ep, syscall.EPOLL_CTL_ADD, fd, epollEvent(syscall.EPOLLIN, leaderBit|id)); err != nil {
		syscall.Close(fd)
		return
	}
	o.leaderFD, k.leaders[leaderBit|id] = fd, o
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
func epollEvent(events uint32, id uint64) *syscall.EpollEvent {
	return &syscall.EpollEvent{Events: events, Fd: int32(uint32(id)), Pad: int32(uint32(id >> 32))}
}

// eventID is the id an epoll event is of (epollEvent).
func eventID(ev syscall.EpollEvent) uint64 {
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
		if onExec, err := closeOnExec(fd); err == nil && !onExec {
			syscall.Close(fd)
		}
	}
}

// receive reads gantry's messages until none waits; bye when gantry said
// goodbye. At the end of the socket, gantry is gone: the keeper begins to
// drain what it holds.
func (k *keeper) receive() (bye bool) {
	for {
		n, oobn, _, _, err := syscall.Recvmsg(k.sock, k.buf, k.oob, syscall.MSG_DONTWAIT|syscall.MSG_CMSG_CLOEXEC)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN {
			return false
		}
		if err != nil || n == 0 {
			k.gantryGone()
			return false
		}
		msg := k.buf[:n]
		switch msg[0] {
		case MsgBye:
			return true
		case MsgOpen:
			k.open(msg[1:], k.oob[:oobn])
		case MsgDrop:
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
	if msgs, err := syscall.ParseSocketControlMessage(oob); err == nil {
		for _, m := range msgs {
			if got, err := syscall.ParseUnixRights(&m); err == nil {
				fds = append(fds, got...)
			}
		}
	}
	if len(body) < 8 {
		for _, fd := range fds {
			syscall.Close(fd)
		}
		return
	}
	first := binary.LittleEndian.Uint64(body)
	log, program, _ := strings.Cut(string(body[8:]), "\x00")
	out := &keptOutput{log: log, program: program, leaderFD: -1}
	for i, fd := range fds {
		// No events asked: a hangup is told all the same, and the output
		// flowing through the pipe does not wake the keeper.
		p := &keptPipe{id: first + uint64(i), fd: fd, out: out}
		if err := syscall.EpollCtl(k.ep, syscall.EPOLL_CTL_ADD, fd, epollEvent(0, p.id)); err != nil {
			syscall.Close(fd)
			continue
		}
		k.byID[p.id] = p
		out.pipes = append(out.pipes, p)
		out.open++
	}
	if out.open > 0 {
		k.outputs[out] = true
	}
}

// close lets a pipe go; once gantry is gone, the last pipe of a process
// that the keeper drained says so in its log.
func (k *keeper) close(p *keptPipe) {
	// Out of the epoll set first: closing the descriptor does not take it
	// out while gantry's copy of the same open pipe is open, and the set
	// would go on telling of the hangup.
	_ = syscall.EpollCtl(k.ep, syscall.EPOLL_CTL_DEL, p.fd, nil)
	syscall.Close(p.fd)
	delete(k.byID, p.id)
	p.out.open--
	if p.out.open > 0 {
		return
	}
	delete(k.outputs, p.out)
	if !k.gone.IsZero() {
		// Its leader's end and its output's may come in one batch, in
		// any order.
		k.lookAtLeader(p.out, time.Now())
		k.unwatch(p.out)
		p.out.report(k.gone, time.Now())
	}
}

// gantryGone begins the drain: every pipe held is read from now on, and
// the processes writing into them are named.
func (k *keeper) gantryGone() {
	k.gone = time.Now()
	_ = syscall.EpollCtl(k.ep, syscall.EPOLL_CTL_DEL, k.sock, nil)
	k.writers()
	for id, p := range k.byID {
		// Non-blocking as gantry made it, whatever became of it since:
		// the keeper waits for no one pipe.
		_ = syscall.SetNonblock(p.fd, true)
		// What is in it was printed before, and not read by gantry
		// (TIOCINQ is FIONREAD).
		if n, err := queued(p.fd); err == nil {
			p.out.unread += int64(n)
		}
		_ = syscall.EpollCtl(k.ep, syscall.EPOLL_CTL_MOD, p.fd, epollEvent(syscall.EPOLLIN, id))
	}
	for o := range k.outputs {
		k.watch(o, o.pipes[0].id)
	}
}

// drain reads what waits in a pipe, to its end (gantry made the pipe
// non-blocking).
func (k *keeper) drain(p *keptPipe) {
	for {
		n, err := syscall.Read(p.fd, k.buf)
		if n > 0 {
			p.out.bytes += int64(n)
			continue
		}
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN {
			return
		}
		k.close(p)
		return
	}
}

// report appends a line to the process's run log: gantry ended without
// its goodbye, the process went on (and when it ended), what became of its
// output, and that its output was not kept. Nothing is said of a process
// that had ended and left nothing unread.
func (o *keptOutput) report(gone, now time.Time) {
	if o.log == "" || o.leader == 0 && o.writer == 0 && o.bytes == 0 {
		return
	}
	// Killed, or crashed: a panic, a fatal error, the OOM killer.
	line := now.UTC().Format("2006-01-02T15:04:05.000Z") + " gantry: the gantry that ran this ended without saying goodbye (killed or crashed) at " +
		gone.UTC().Format("15:04:05.000Z") + "; "
	const masked = ", as its secrets could not be masked\n"
	if o.leader == 0 && o.writer == 0 {
		line += fmt.Sprintf("%s had ended; the last %d bytes it printed, which gantry had not read, were not kept", o.program, o.bytes) + masked
	} else {
		kept := fmt.Sprintf("what it printed after that (%d bytes) was not kept", max(o.bytes-o.unread, 0))
		if o.unread > 0 {
			kept += fmt.Sprintf(", nor the %d bytes before that gantry had not read", o.unread)
		}
		line += o.whoAndOutput(gone, now) + "; " + kept + masked
	}
	f, err := os.OpenFile(o.log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	_, _ = f.WriteString(line)
	f.Close()
}

// whoAndOutput says, for the report, what became of the process gantry
// started and of its output once gantry was gone.
func (o *keptOutput) whoAndOutput(gone, now time.Time) string {
	later := func(t time.Time) string { return t.Sub(gone).Round(time.Millisecond).String() + " later" }
	who := o.program + " had ended"
	if o.leader != 0 {
		who = fmt.Sprintf("%s (pid %d) went on without it", o.program, o.leader)
		if !o.leaderEnd.IsZero() {
			who += " and ended " + later(o.leaderEnd)
		}
	}
	started := "a process it started"
	if o.writer != 0 {
		started += fmt.Sprintf(" (pid %d)", o.writer)
	}
	switch {
	case o.cut:
		after := "gantry was gone"
		if o.leader != 0 {
			after = "it ended"
		}
		return fmt.Sprintf("%s; %s still held its output %v after %s, and it was not read from then on", who, started, OutputWait, after)
	case o.writer != 0 && (o.leader == 0 || !o.leaderEnd.IsZero() && now.Sub(o.leaderEnd) > keeperLook):
		return who + "; " + started + " held its output until " + later(now)
	case !o.leaderEnd.IsZero() && now.Sub(o.leaderEnd) <= keeperLook:
		return who // and its output with it
	}
	return who + "; its output ended " + later(now)
}

// writers finds, for the outputs of the pipes held, the processes writing
// into each: its leader, the process gantry started, if it still runs
// (whether or not it writes there: the group, in gantry's session, that a
// writer is in, gantry made each process lead its own), and another one
// (writer).
func (k *keeper) writers() {
	for out, pids := range holders(k.byID) {
		for _, pid := range pids {
			if st, ok := procstat.Read(pid); ok && st.State != 'Z' && k.leads(st.Pgrp) {
				out.leader = st.Pgrp
				break
			}
		}
		out.writer = writer(pids, out.leader)
	}
}

// writer is the process of lowest pid among those holding an output but
// its leader; 0 if none.
func writer(pids []int, leader int) int {
	for _, pid := range pids {
		if pid != leader {
			return pid
		}
	}
	return 0
}

// holders finds the processes holding the pipes (but the keeper), by
// output, each output's in the order of their pids. It looks at every
// process's descriptors once.
func holders(pipes map[uint64]*keptPipe) map[*keptOutput][]int {
	byInode := map[string]*keptOutput{}
	for _, p := range pipes {
		var st syscall.Stat_t
		if syscall.Fstat(p.fd, &st) == nil {
			byInode["pipe:["+strconv.FormatUint(st.Ino, 10)+"]"] = p.out
		}
	}
	if len(byInode) == 0 {
		return nil
	}
	// What a read of /proc that failed part-way returned is looked at all
	// the same: a process missed is one the report cannot name.
	entries, _ := os.ReadDir("/proc")
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
	for _, pids := range found {
		sort.Ints(pids)
	}
	return found
}

// leads reports whether the process pid runs and leads its group in
// gantry's session: it is a process gantry started.
func (k *keeper) leads(pid int) bool {
	st, ok := procstat.Read(pid)
	return ok && st.State != 'Z' && st.Pgrp == pid && (k.session == 0 || st.Session == k.session)
}
