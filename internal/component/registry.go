package component

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gantry-dev/gantry/internal/procstat"
)

// Registry notes, in a file of the workspace, the process groups a run has
// running. A run killed with SIGKILL cannot stop its children: they go on
// alone, and the next run must not start the same work next to them. It
// reads what the killed run left in the file and waits for those that still
// live (Leftovers, WaitGone).
//
// Lines are appended as processes start and end, unbuffered: a killed run
// leaves them in the page cache, which is all that must survive (a machine
// crash ends the processes too, so no fsync is needed):
//
//	= <token> <session>
//	+ <pid> <boot id>:<start, ns after boot> "<dir>" "<command line, masked>" <n>
//	- <pid>
//
// The boot and the start time tell a process of the run from an unrelated one
// that got the same pid later (after a reboot, or once pids wrapped around).
// The start is on the clock the kernel counts process starts on (time since
// boot), so a step of the wall clock changes nothing.
//
// A process's "+" line can only be written once it started: a run killed in
// between would leave a process no line names. So each process of the run
// carries a mark in its environment, RunMarkEnv=<token>.<n> (the token is
// the run's, n the process's, from 1 on), which its descendants inherit.
// Leftovers finds by it the processes, in the run's session, whose n no "+"
// line has. By the time the next run reads the registry, each process the
// killed one forked runs its own program with its mark: the next run reads
// it under the state's lock, which a forked process holds until it starts
// its program (the lock's descriptor closes on exec).
type Registry struct {
	mu   sync.Mutex
	f    *os.File
	path string
	// mirrors are more files the run notes the same lines in (Mirror),
	// held as f is; opening is the lines a file starts with.
	mirrors     []*os.File
	mirrorPaths []string
	opening     string
	mask        func(string) string
	token       string        // the run's, in its marks
	n           atomic.Uint64 // marks handed out
	carry       []Leftover
}

// RunMarkEnv is the variable of the environment that marks the processes of
// a run, and their descendants, as the run's.
const RunMarkEnv = "GANTRY_RUN_MARK"

// OpenRegistry starts a fresh registry at path, replacing what was there,
// or fails with a *RegistryBusyError when a live run holds it (what it
// notes is left as it was). mask hides secrets in the command lines it
// notes (nil: none). The leftovers of a killed run that still live are
// carried over: the run waits for them first, and if it is killed
// meanwhile, the next run must still know of them.
func OpenRegistry(path string, mask func(string) string, carry ...Leftover) (*Registry, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("process registry: %w", err)
	}
	// Held while the run lives (the kernel lets go when it dies; children
	// do not inherit the descriptor): RegistryInUse tells a live run's
	// registry from a killed one's. Only once it is held is the file
	// emptied: a live run's list is what the next run waits for.
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, busyRegistry(f, path)
		}
		return nil, fmt.Errorf("process registry %s: %w", path, err)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, fmt.Errorf("process registry %s: %w", path, err)
	}
	if mask == nil {
		mask = func(s string) string { return s }
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	r := &Registry{f: f, path: path, mask: mask, token: hex.EncodeToString(b[:]), carry: carry}
	session, _ := unix.Getsid(0)
	var opening strings.Builder
	opening.WriteString(fmt.Sprintf("= %s %d\n", r.token, session))
	for _, l := range carry {
		l.Args = mask(l.Args)
		opening.WriteString(l.line(0))
	}
	r.opening = opening.String()
	r.write(r.opening)
	return r, nil
}

// Mirror notes the run's processes in the file at path too, held as the
// registry's own: the registry of a run's state beside the one of its
// manifest's folder, so that the next run on that state from another
// checkout finds what a killed run left. It fails with a
// *RegistryBusyError when a live run holds it (nothing is noted there
// then). Call it before the run starts processes.
func (r *Registry) Mirror(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("process registry: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return busyRegistry(f, path)
		}
		return fmt.Errorf("process registry %s: %w", path, err)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return fmt.Errorf("process registry %s: %w", path, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, _ = f.WriteString(r.opening)
	r.mirrors = append(r.mirrors, f)
	r.mirrorPaths = append(r.mirrorPaths, path)
	return nil
}

// nextMark is the mark of a process about to start, RunMarkEnv=<token>.<n>,
// and its n.
func (r *Registry) nextMark() (env string, n uint64) {
	n = r.n.Add(1)
	return RunMarkEnv + "=" + r.token + "." + strconv.FormatUint(n, 10), n
}

func (r *Registry) write(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f != nil {
		_, _ = r.f.WriteString(line)
		for _, m := range r.mirrors {
			_, _ = m.WriteString(line)
		}
	}
}

// started notes the process of mark n started: it leads the group pid.
func (r *Registry) started(pid int, n uint64, dir string, args []string) {
	l := Leftover{PID: pid, Dir: dir, Args: r.mask(strings.Join(args, " ")), Boot: procstat.BootID(), Started: sinceBoot()}
	r.write(l.line(n))
}

func (r *Registry) ended(pid int) { r.write(fmt.Sprintf("- %d\n", pid)) }

// Close ends the registry of a run that stopped its processes: the file goes,
// unless leftovers it carried over still live (the run was interrupted while
// it waited for them): the next run must wait for them too.
func (r *Registry) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	for _, m := range r.mirrors {
		if cerr := m.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	r.mirrors = nil
	for _, l := range r.carry {
		if l.alive() {
			return err
		}
	}
	for _, p := range append([]string{r.path}, r.mirrorPaths...) {
		if rerr := os.Remove(p); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
			err = rerr
		}
	}
	return err
}

type registryKey struct{}

// WithRegistry returns a context whose processes (Run) are noted in r.
func WithRegistry(ctx context.Context, r *Registry) context.Context {
	return context.WithValue(ctx, registryKey{}, r)
}

func registryFrom(ctx context.Context) *Registry {
	r, _ := ctx.Value(registryKey{}).(*Registry)
	return r
}

// A Watcher hears of the processes Run starts under a context, from before
// each can run to its end: gantry worker's reaper kills those still running,
// with their groups and descendants, when the worker dies, so that no step
// runs beside its retry on another worker.
type Watcher interface {
	// Starting is told of a process about to start and returns its mark:
	// an entry NAME=VALUE added to its environment, which its descendants
	// inherit.
	Starting() (mark string)
	// Started: the process of the mark started; it leads the group pgid.
	Started(mark string, pgid int)
	// Ended: it ended (pgid 0: it did not start).
	Ended(mark string, pgid int)
}

type watcherKey struct{}

// WithWatcher returns a context whose processes (Run) w hears of.
func WithWatcher(ctx context.Context, w Watcher) context.Context {
	return context.WithValue(ctx, watcherKey{}, w)
}

func watcherFrom(ctx context.Context) Watcher {
	w, _ := ctx.Value(watcherKey{}).(Watcher)
	return w
}

// Leftover is a process group that a killed run left running.
type Leftover struct {
	PID  int
	Dir  string
	Args string
	// Boot and Started identify the group's leader: the machine's boot and
	// when the run started it, as time since boot ("" and zero in registries
	// of older gantry versions, which are trusted on the pid alone).
	Boot    string
	Started time.Duration
}

func (l Leftover) String() string {
	return fmt.Sprintf("pid %d: %s (in %s)", l.PID, l.Args, l.Dir)
}

// line is the registry's line of a started process with the mark n (0:
// none, a leftover carried over).
func (l Leftover) line(n uint64) string {
	// A group found without its leader has no start (0), but its boot
	// still tells a line of an earlier boot apart.
	id := "-"
	if l.Boot != "" {
		id = l.Boot + ":" + strconv.FormatInt(int64(l.Started), 10)
	}
	line := fmt.Sprintf("+ %d %s %s %s", l.PID, id, strconv.Quote(l.Dir), strconv.Quote(l.Args))
	if n > 0 {
		line += " " + strconv.FormatUint(n, 10)
	}
	return line + "\n"
}

// parseStarted reads a "+" line: "+ pid id "dir" "args" n", without n if it
// has no mark, or an older registry's "+ pid "dir" "args"". ok is false for
// a line cut short.
func parseStarted(line string) (l Leftover, n uint64, ok bool) {
	rest, ok := strings.CutPrefix(line, "+ ")
	if !ok {
		return Leftover{}, 0, false
	}
	pidText, rest, ok := strings.Cut(rest, " ")
	pid, err := strconv.Atoi(pidText)
	if !ok || err != nil {
		return Leftover{}, 0, false
	}
	l = Leftover{PID: pid}
	if !strings.HasPrefix(rest, `"`) {
		var id string
		id, rest, ok = strings.Cut(rest, " ")
		if !ok {
			return Leftover{}, 0, false
		}
		if boot, ns, found := strings.Cut(id, ":"); found {
			if n, err := strconv.ParseInt(ns, 10, 64); err == nil {
				l.Boot, l.Started = boot, time.Duration(n)
			}
		}
	}
	for _, field := range []*string{&l.Dir, &l.Args} {
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return Leftover{}, 0, false
		}
		*field, _ = strconv.Unquote(q)
		rest = strings.TrimPrefix(rest[len(q):], " ")
	}
	if rest != "" {
		if n, err = strconv.ParseUint(rest, 10, 64); err != nil {
			return Leftover{}, 0, false
		}
	}
	return l, n, true
}

// RegistryInUse reports whether the registry at path is a live run's (it
// holds it): its processes are that run's, not a killed run's leftovers.
func RegistryInUse(path string) bool {
	var busy *RegistryBusyError
	return errors.As(CheckRegistry(path), &busy)
}

// CheckRegistry returns a *RegistryBusyError when a live run holds the
// registry at path, else nil (no registry, or a killed run's).
func CheckRegistry(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if err := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return busyRegistry(f, path)
		}
		return nil
	}
	_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
	return nil
}

// RegistryBusyError is a process registry a live run holds: a run of the
// stack from the same folder (on any state), whose processes are not leftovers and whose
// list must not be replaced.
type RegistryBusyError struct {
	Path string
	// PID and Program name the holder (0 and "" when the kernel does not
	// say): its program's name alone, as its command line may hold
	// secrets.
	PID     int
	Program string
}

func (e *RegistryBusyError) Error() string {
	who := "another gantry run"
	if e.PID > 0 {
		who = fmt.Sprintf("%s (pid %d)", e.Program, e.PID)
	}
	return fmt.Sprintf("process registry %s is held by %s, a run of this stack from this folder (on this state or another: they share the folder): wait for it to end; nothing was run", e.Path, who)
}

// busyRegistry names the holder of the registry open as f.
func busyRegistry(f *os.File, path string) *RegistryBusyError {
	e := &RegistryBusyError{Path: path, PID: flockHolder(f)}
	if e.PID > 0 {
		e.Program = processName(e.PID, e.PID)
	}
	return e
}

// flockHolder is the process that holds an flock on the file open as f, as
// /proc/locks lists it ("3: FLOCK  ADVISORY  WRITE <pid> <major>:<minor>:<inode> 0 EOF",
// a waiter's line with "->" after the number); 0 when none is found.
func flockHolder(f *os.File) int {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return 0
	}
	data, err := os.ReadFile("/proc/locks")
	if err != nil {
		return 0
	}
	file := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 6 || fields[1] != "FLOCK" || fields[5] != file {
			continue
		}
		if pid, err := strconv.Atoi(fields[4]); err == nil && pid > 0 {
			return pid
		}
	}
	return 0
}

// Leftovers reads the registry a previous run left at path and returns the
// process groups of it that still live. No file means a clean end.
func Leftovers(path string) ([]Leftover, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("process registry: %w", err)
	}
	defer f.Close()
	running := map[int]Leftover{}
	var order []int
	var token string
	session := -1
	noted := map[uint64]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if head, ok := strings.CutPrefix(line, "= "); ok {
			tokenText, sessionText, _ := strings.Cut(head, " ")
			if sid, err := strconv.Atoi(sessionText); err == nil {
				token, session = tokenText, sid
			}
			continue
		}
		if pidText, ok := strings.CutPrefix(line, "- "); ok {
			if pid, err := strconv.Atoi(pidText); err == nil {
				delete(running, pid)
			}
			continue
		}
		if l, n, ok := parseStarted(line); ok {
			running[l.PID] = l
			order = append(order, l.PID)
			if n > 0 {
				noted[n] = true
			}
		}
	}
	var out []Leftover
	groups := map[int]bool{}
	for _, pid := range order {
		if l, ok := running[pid]; ok && l.alive() {
			out = append(out, l)
			groups[pid] = true
			delete(running, pid)
		}
	}
	if token != "" {
		out = append(out, unnoted(token, session, noted, groups)...)
	}
	return out, nil
}

// unnoted finds the live process groups, other than those in known (which
// it adds them to), of the processes a killed run started but had not
// noted, as it was killed in between: processes in the run's session whose
// mark has the run's token and a number no "+" line has. Marks of noted
// processes are not looked at: what such a process and its descendants do
// was the run's to know, as before the marks. A daemon (a session of its
// own), and the processes it runs, are meant to outlive the run. The
// command of a group found is its program's name alone: its command line
// was never masked.
func unnoted(token string, session int, noted map[uint64]bool, known map[int]bool) []Leftover {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	mine := lineage()
	prefix := token + "."
	var out []Leftover
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || mine[pid] {
			continue
		}
		st, ok := procstat.Read(pid)
		if !ok || st.Session != session || known[st.Pgrp] || st.State == 'Z' || st.State == 'X' {
			continue
		}
		value, _ := ProcessEnv(pid, RunMarkEnv)
		nText, ours := strings.CutPrefix(value, prefix)
		if !ours {
			continue
		}
		if n, err := strconv.ParseUint(nText, 10, 64); err != nil || noted[n] {
			continue
		}
		known[st.Pgrp] = true
		l := Leftover{PID: st.Pgrp, Dir: processDir(st.Pgrp, pid), Args: processName(st.Pgrp, pid), Boot: procstat.BootID()}
		if leader, ok := procstat.Read(st.Pgrp); ok && leader.Pgrp == st.Pgrp {
			l.Started = leader.SinceBoot()
		}
		out = append(out, l)
	}
	return out
}

// lineage is this process and those it runs under: a gantry run by a
// component of the killed run carries its mark too, and must not wait for
// itself.
func lineage() map[int]bool {
	mine := map[int]bool{}
	for pid := os.Getpid(); pid > 1 && !mine[pid]; {
		mine[pid] = true
		st, ok := procstat.Read(pid)
		if !ok {
			break
		}
		pid = st.PPID
	}
	return mine
}

// processDir is the working folder of a group's leader, or of the member
// found when the leader is gone.
func processDir(leader, member int) string {
	for _, pid := range []int{leader, member} {
		if dir, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/cwd"); err == nil {
			return dir
		}
	}
	return "?"
}

// processName is the program name of a group's leader, or of the member
// found when the leader is gone.
func processName(leader, member int) string {
	for _, pid := range []int{leader, member} {
		if name, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm"); err == nil {
			return strings.TrimSpace(string(name))
		}
	}
	return "?"
}

// ProcessEnv is the value of the variable name in the environment process
// pid started its program with. Processes of other users cannot be read;
// a dead one's environment is empty.
func ProcessEnv(pid int, name string) (string, bool) {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return "", false
	}
	prefix := []byte(name + "=")
	for len(env) > 0 {
		kv := env
		if i := bytes.IndexByte(env, 0); i >= 0 {
			kv, env = env[:i], env[i+1:]
		} else {
			env = nil
		}
		if value, ok := bytes.CutPrefix(kv, prefix); ok {
			return string(value), true
		}
	}
	return "", false
}

// WaitGone waits until none of the leftovers lives, polling: they are not
// this process's children, so there is nothing to wait on. report is called
// with those still alive each time the set changes.
func WaitGone(ctx context.Context, left []Leftover, every time.Duration, report func([]Leftover)) error {
	last := -1
	for {
		var alive []Leftover
		for _, l := range left {
			if l.alive() {
				alive = append(alive, l)
			}
		}
		if len(alive) == 0 {
			return nil
		}
		if len(alive) != last {
			report(alive)
			last = len(alive)
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// startSlack is how far apart the start the registry noted and the start the
// kernel reports may be for the same process: the registry notes it just
// after the fork, and the kernel counts in ticks of 10 ms.
const startSlack = time.Second

// alive reports whether the process group still has a live member that is the
// run's. Zombies do not count: a killed run's children are reaped by whoever
// adopted them, which may take a while. After a reboot none is the run's. A
// leader with the pid but another start time is an unrelated process that
// got the pid later; members without their leader are the run's (Linux gives
// no process a pid still in use as a group's id).
func (l Leftover) alive() bool {
	if l.Boot != "" && l.Boot != procstat.BootID() {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		err := syscall.Kill(-l.PID, 0)
		return err == nil || errors.Is(err, syscall.EPERM)
	}
	if st, ok := procstat.Read(l.PID); ok && st.Pgrp == l.PID && l.Started > 0 {
		if d := st.SinceBoot() - l.Started; d > startSlack || d < -startSlack {
			return false
		}
	}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := procstat.Read(p); ok && st.Pgrp == l.PID && st.State != 'Z' && st.State != 'X' {
			return true
		}
	}
	return false
}

// groupAlive reports whether a process group has a live member (no identity
// check: for groups this process started itself).
func groupAlive(pid int) bool { return Leftover{PID: pid}.alive() }

// sinceBoot is the time since boot, on the clock the kernel counts process
// starts on (CLOCK_BOOTTIME; 0 where there is none).
func sinceBoot() time.Duration { return bootTime.since() }

var bootTime = &bootClock{read: readBootClock, now: clockNow}

// monoEpoch is what monotonic readings are counted from.
var monoEpoch = time.Now()

// clockNow is the time now on the wall clock (without a monotonic reading)
// and on the monotonic one.
func clockNow() (time.Time, time.Duration) {
	now := time.Now()
	return now.Round(0), now.Sub(monoEpoch)
}

// readBootClock asks the kernel for CLOCK_BOOTTIME: a system call, not the
// vDSO time.Now uses.
func readBootClock() (time.Duration, bool) {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

// bootResync is how far the wall clock may move away from the monotonic
// one before bootClock asks the kernel again: far below startSlack.
const bootResync = 50 * time.Millisecond

// bootClock tells the time since boot for every process a run starts
// without a system call each: CLOCK_BOOTTIME is the monotonic clock plus the
// time the machine was suspended, so it is the boot time read once plus the
// monotonic time since. A suspend shows as the wall clock moving ahead of
// the monotonic one (a step of the wall clock looks the same): then it asks
// the kernel again.
type bootClock struct {
	read func() (time.Duration, bool)
	now  func() (wall time.Time, mono time.Duration)
	mu   sync.Mutex
	wall time.Time     // when boot was read, on the wall clock
	mono time.Duration // and on the monotonic one
	boot time.Duration // the time since boot then; 0 until read
}

// since is the time since boot now. The clocks are read under the lock,
// just before the kernel is asked: a reading taken earlier would carry the
// wait for the lock into every later answer.
func (c *bootClock) since() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	wall, mono := c.now()
	if c.boot > 0 {
		elapsed := mono - c.mono
		drift := wall.Sub(c.wall) - elapsed
		if elapsed >= 0 && drift < bootResync && drift > -bootResync {
			return c.boot + elapsed
		}
	}
	boot, ok := c.read()
	if !ok {
		return 0
	}
	c.wall, c.mono, c.boot = wall, mono, boot
	return boot
}
