package component

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gantry-dev/gantry/internal/component/keeper"
	"github.com/gantry-dev/gantry/internal/testenv"
)

// startedKeeper starts a keeper and waits until it runs; it fails the test
// if it does not.
func startedKeeper(t *testing.T) *Keeper {
	t.Helper()
	k := StartKeeper()
	<-k.ready
	if k.fd < 0 {
		t.Fatal("the keeper did not start")
	}
	return k
}

// vanish makes the keeper see gantry gone: its socket closes without the
// goodbye, as when gantry is killed. It returns the keeper's process.
func (k *Keeper) vanish() *exec.Cmd {
	k.mu.Lock()
	defer k.mu.Unlock()
	unix.Close(k.fd)
	cmd := k.cmd
	k.fd, k.cmd = -1, nil
	return cmd
}

// keeperPipes lists the pipes the keeper's process holds.
func keeperPipes(t *testing.T, pid int) []string {
	t.Helper()
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	fds, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var pipes []string
	for _, e := range fds {
		if target, err := os.Readlink(dir + e.Name()); err == nil && strings.HasPrefix(target, "pipe:") {
			pipes = append(pipes, e.Name()+" -> "+target)
		}
	}
	return pipes
}

// TestKeeperKeepsAProcessOfAKilledGantry: once gantry is gone (its end of
// the output pipe and its socket to the keeper closed, as SIGKILL does),
// the process goes on printing and ends by itself, with status 0, because
// the keeper reads its output to the end. Without a keeper it died of
// SIGPIPE at its next line. What it printed is not in the log; one line
// there says that it was not kept. The keeper then exits.
func TestKeeperKeepsAProcessOfAKilledGantry(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "c.log")
	marker := filepath.Join(dir, "marker")
	k := startedKeeper(t)
	p, err := newOutPipe(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	k.hold(context.Background(), []*outPipe{p}, log, "sh")
	// It prints on only once the keeper watches it (go): a keeper slow to
	// see gantry gone would find it ended, and say so.
	goAhead := filepath.Join(dir, "go")
	script := `echo first; while [ ! -e "$2" ]; do sleep 0.01; done; i=0; while [ $i -lt 10 ]; do echo "line $i s3cr3t-value"; sleep 0.05; i=$((i+1)); done; touch "$1"`
	child := exec.Command("sh", "-c", script, "sh", marker, goAhead)
	child.Stdout, child.Stderr = p.w, p.w
	child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // as Run starts it
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	p.w.Close()
	// The process printed: gantry dies now.
	if err := syscall.SetNonblock(int(p.r.Fd()), false); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if _, err := io.ReadFull(p.r, buf); err != nil || string(buf) != "first\n" {
		t.Fatalf("read %q, %v", buf, err)
	}
	p.r.Close()
	keeper := k.vanish()
	watchedByKeeper(t, keeper.Process.Pid)
	if err := os.WriteFile(goAhead, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := child.Wait(); err != nil {
		t.Fatalf("the process did not finish well once gantry was gone: %v", err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the process did not get to its end: %v", err)
	}
	if err := keeper.Wait(); err != nil {
		t.Errorf("the keeper: %v", err)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "s3cr3t") || strings.Count(string(data), "\n") != 1 ||
		!strings.Contains(string(data), "gantry: the gantry that ran this ended without saying goodbye (killed or crashed) at ") ||
		!strings.Contains(string(data), "sh (pid "+strconv.Itoa(child.Process.Pid)+") went on without it") {
		t.Errorf("the log holds:\n%s\nwant one line saying the process went on and its output was not kept, nothing of the output", data)
	}
}

// TestKeeperLetsGoOfEndedOutputs: the keeper holds a process's pipe only
// while a process writes into it: after many processes, it holds no pipe
// (nor any gantry inherited, such as a jobserver's). It runs in a session of its own, and is
// gone, reaped, once closed.
func TestKeeperLetsGoOfEndedOutputs(t *testing.T) {
	k := startedKeeper(t)
	pid := k.cmd.Process.Pid
	if sid, err := unix.Getsid(pid); err != nil || sid != pid {
		t.Errorf("the keeper's session is %d (%v), want its own", sid, err)
	}
	ctx := WithKeeper(context.Background(), k)
	for i := 0; i < 50; i++ {
		var out, errs testenv.SyncBuffer
		if err := Run(ctx, Process{Args: []string{"sh", "-c", "echo out; echo err >&2"}, Stdout: &out, Stderr: &errs}); err != nil {
			t.Fatal(err)
		}
		if out.String() != "out\n" || errs.String() != "err\n" {
			t.Fatalf("outputs %q and %q", out.String(), errs.String())
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(keeperPipes(t, pid)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the keeper still holds pipes: %v", keeperPipes(t, pid))
		}
		time.Sleep(5 * time.Millisecond)
	}
	k.Close()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the keeper is still there after Close: %v", err)
	}
}

// TestKeeperLetsGoWhenGantryStopsReading: a process whose output's writer
// failed gets EPIPE at its next write, as without a keeper, instead of
// blocking on a pipe only the keeper holds.
func TestKeeperLetsGoWhenGantryStopsReading(t *testing.T) {
	k := startedKeeper(t)
	defer k.Close()
	ctx, cancel := context.WithTimeout(WithKeeper(context.Background(), k), 30*time.Second)
	defer cancel()
	refused := errors.New("refused")
	err := Run(ctx, Process{Args: []string{"sh", "-c", "while echo more output; do :; done"}, Stdout: writerFunc(func([]byte) (int, error) { return 0, refused })})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Signal == "" || ctx.Err() != nil {
		t.Errorf("Run: %v (context: %v), want the process killed by SIGPIPE", err, ctx.Err())
	}
}

// pipeInode names a pipe's end as /proc/*/fd does: "pipe:[<inode>]".
func pipeInode(t *testing.T, f *os.File) string {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	return "pipe:[" + strconv.FormatUint(st.Ino, 10) + "]"
}

// keeperHolds reports whether the keeper's process holds the pipe of f.
func keeperHolds(t *testing.T, pid int, f *os.File) bool {
	t.Helper()
	inode := pipeInode(t, f)
	for _, p := range keeperPipes(t, pid) {
		if strings.HasSuffix(p, " -> "+inode) {
			return true
		}
	}
	return false
}

// heldWithin waits up to d for the keeper pid to hold the pipe of f.
func heldWithin(t *testing.T, pid int, f *os.File, d time.Duration) bool {
	t.Helper()
	for deadline := time.Now().Add(d); !keeperHolds(t, pid, f); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}

// TestKeeperHoldsAPipeGivenTheNumberOfOneDropped: gantry drops pipe A,
// A's writer ends, and B, received in the same wake of the keeper, gets
// A's descriptor number; A's hangup, already in that wake's events, must
// not let B go. B's process would die at its next line if gantry were then
// killed. The keeper's pause between wakes puts all three in one wake.
func TestKeeperHoldsAPipeGivenTheNumberOfOneDropped(t *testing.T) {
	k := startedKeeper(t)
	defer k.Close()
	pid := k.cmd.Process.Pid
	pipe := func() *outPipe {
		p, err := newOutPipe(io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	lost := 0
	const rounds = 20
	for round := 0; round < rounds; round++ {
		a := pipe()
		k.hold(context.Background(), []*outPipe{a}, "", "a")
		time.Sleep(20 * time.Millisecond)
		c := pipe()
		k.hold(context.Background(), []*outPipe{c}, "", "c") // wakes the keeper, which then pauses
		time.Sleep(300 * time.Microsecond)
		b := pipe()
		k.drop(a.keptID)
		a.w.Close()
		k.hold(context.Background(), []*outPipe{b}, "", "b")
		// Held once the keeper took it in, however busy the machine; one
		// let go by A's hangup never shows.
		if !heldWithin(t, pid, b.r, 5*time.Second) {
			lost++
		}
		for _, p := range []*outPipe{a, b, c} {
			p.w.Close()
			p.r.Close()
		}
		time.Sleep(20 * time.Millisecond)
	}
	if lost > 0 {
		t.Errorf("in %d of %d rounds the keeper let go of a pipe still written to", lost, rounds)
	}
}

// fillStoppedKeeper stops the keeper's process (SIGSTOP: a debugger, a
// frozen cgroup) and hands it pipes, more than its socket holds, under
// ctx, on a goroutine; the channel closes when the last hold returned.
func fillStoppedKeeper(t *testing.T, ctx context.Context, k *Keeper) <-chan struct{} {
	t.Helper()
	if err := syscall.Kill(k.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 2000; i++ {
			p, err := newOutPipe(io.Discard)
			if err != nil {
				t.Error(err)
				return
			}
			k.hold(ctx, []*outPipe{p}, "", "x")
			p.abandon()
		}
	}()
	return done
}

// within fails the test unless done closes within d; it kills the keeper
// first, which releases a gantry blocked on it.
func within(t *testing.T, k *Keeper, pid int, d time.Duration, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(d):
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("%s: still blocked after %v on a keeper that reads nothing", what, d)
	}
}

// TestKeeperThatStopsReadingDoesNotStopGantry: a keeper that reads
// nothing any more (stopped) fills its socket; gantry then waits for it a
// bounded time, gives up on it, says so once, and runs its processes
// without it; Close still ends it. An interrupt (ctx) ends the wait at
// once. gantry blocked in sendmsg forever, and Close behind it.
func TestKeeperThatStopsReadingDoesNotStopGantry(t *testing.T) {
	defer func(d time.Duration) { keeperSendWait = d }(keeperSendWait)
	keeperSendWait = 300 * time.Millisecond
	k := startedKeeper(t)
	pid := k.cmd.Process.Pid
	within(t, k, pid, 20*time.Second, fillStoppedKeeper(t, context.Background(), k), "hold")
	if !k.failed.Load() {
		t.Error("gantry did not give up on the keeper")
	}
	closed := make(chan struct{})
	go func() { k.Close(); close(closed) }()
	within(t, k, pid, 10*time.Second, closed, "Close")

	keeperSendWait = time.Hour
	k = startedKeeper(t)
	pid = k.cmd.Process.Pid
	ctx, cancel := context.WithCancel(context.Background())
	done := fillStoppedKeeper(t, ctx, k)
	time.AfterFunc(500*time.Millisecond, cancel)
	within(t, k, pid, 20*time.Second, done, "hold after an interrupt")
	closed = make(chan struct{})
	go func() { k.Close(); close(closed) }()
	within(t, k, pid, 10*time.Second, closed, "Close after an interrupt")
}

// killedGantryWith starts script in a group of its own (as Run does) with
// its output held by a keeper, reads its first line, then is killed: the
// keeper sees gantry gone. It returns the script's process and the
// keeper's.
func killedGantryWith(t *testing.T, k *Keeper, log, script string) (*exec.Cmd, *exec.Cmd) {
	t.Helper()
	child, keeper, _ := killedGantry(t, k, log, script, false)
	return child, keeper
}

// killedGantry is killedGantryWith; with peek, it also returns a copy of
// the pipe's reading end that nobody reads from, to see with unread how
// much of the output is still in the pipe (the child then never gets
// EPIPE: the copy is a reader).
func killedGantry(t *testing.T, k *Keeper, log, script string, peek bool) (*exec.Cmd, *exec.Cmd, int) {
	t.Helper()
	p, err := newOutPipe(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	k.hold(context.Background(), []*outPipe{p}, log, "sh")
	child := exec.Command("sh", "-c", script)
	child.Stdout, child.Stderr = p.w, p.w
	child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-child.Process.Pid, syscall.SIGKILL) })
	p.w.Close()
	if err := syscall.SetNonblock(int(p.r.Fd()), false); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(p.r, make([]byte, 6)); err != nil {
		t.Fatal(err)
	}
	peekFD := -1
	if peek {
		if peekFD, err = unix.Dup(int(p.r.Fd())); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(peekFD) })
	}
	p.r.Close()
	return child, k.vanish(), peekFD
}

// watchedByKeeper waits until the keeper of the pid watches a process's
// end (a pidfd among its descriptors): it has seen gantry gone and found
// the process leading the output.
func watchedByKeeper(t *testing.T, pid int) {
	t.Helper()
	// Without pidfds (Linux before 5.3) the keeper looks at the process
	// every keeperLook instead, which leaves nothing to wait for here.
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		t.Skipf("no pidfd here (%v): the keeper watches processes by looking", err)
	}
	unix.Close(fd)
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		fds, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range fds {
			if target, err := os.Readlink(dir + e.Name()); err == nil && target == "anon_inode:[pidfd]" {
				return
			}
		}
	}
	t.Fatal("the keeper never watched the process once gantry was gone")
}

// unread is how many bytes wait in the pipe whose reading end fd is.
func unread(t *testing.T, fd int) int {
	t.Helper()
	n, err := unix.IoctlGetInt(fd, unix.TIOCINQ) // FIONREAD
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestKeeperLetsGoOfADescendantAsGantryWould: once gantry is gone, a
// process that ended and left a child printing into its output keeps the
// keeper (and the child) no longer than gantry would have: waitDelay after
// the process ended. The log says when the process ended and that a
// process it started held its output. The keeper stayed as long as the
// child printed (here up to 2 min), and named the ended process as going on.
func TestKeeperLetsGoOfADescendantAsGantryWould(t *testing.T) {
	dir := t.TempDir()
	log, goAhead := filepath.Join(dir, "c.log"), filepath.Join(dir, "go")
	k := startedKeeper(t)
	// sh ends only once the keeper watches it: a keeper slow to see gantry
	// gone would find it ended, and say so.
	child, keeper := killedGantryWith(t, k, log,
		`echo first; ( i=0; while [ $i -lt 2400 ]; do echo tick; sleep 0.05; i=$((i+1)); done ) & while [ ! -e `+goAhead+` ]; do sleep 0.01; done`)
	vanished := time.Now()
	watchedByKeeper(t, keeper.Process.Pid)
	if err := os.WriteFile(goAhead, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := child.Wait(); err != nil {
		t.Fatal(err)
	}
	endedWithin := time.Since(vanished)
	exited := make(chan error, 1)
	go func() { exited <- keeper.Wait() }()
	select {
	case <-exited:
	case <-time.After(waitDelay + 5*time.Second):
		_ = keeper.Process.Kill()
		t.Fatalf("the keeper still reads the output of a process that ended %v ago", time.Since(start))
	}
	if took := time.Since(start); took < waitDelay-100*time.Millisecond {
		t.Errorf("the keeper let go %v after the process ended, before waitDelay (%v)", took, waitDelay)
	}
	// The child printing dies at its next line, as it would with gantry.
	// The bound is far below the child's own end (2,400 lines 50 ms
	// apart), and far above a loaded machine's next line.
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(-child.Process.Pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatal("the process's child still runs after the keeper let go of its output")
		}
		time.Sleep(10 * time.Millisecond)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	ended := regexp.MustCompile(`sh \(pid ` + strconv.Itoa(child.Process.Pid) + `\) went on without it and ended ([0-9.]+m?s) later; ` +
		`a process it started \(pid \d+\) still held its output 5s after it ended, and it was not read from then on; `)
	m := ended.FindStringSubmatch(string(data))
	if m == nil {
		t.Fatalf("the log holds:\n%s\nwant a line saying when the process ended and that a process it started held its output", data)
	}
	// It ended before the test saw it end, well before it was let go of.
	if d, err := time.ParseDuration(m[1]); err != nil || d > endedWithin+time.Second {
		t.Errorf("the process ended %s after gantry was gone, by the log; it ended within %v", m[1], endedWithin)
	}
}

// TestKeeperMarkerCopiedIsRefused: GANTRY_OUTPUT_KEEPER in the environment
// of a gantry not started as a keeper (a copied environment, a CI job's)
// makes it say so and exit with status 2, not exit 0 having done nothing;
// the keeper's token must match its argument, and its fd 3 must be a
// socket. A keeper started by gantry is named in ps.
func TestKeeperMarkerCopiedIsRefused(t *testing.T) {
	k := startedKeeper(t)
	defer k.Close()
	// Empty until the kernel has set the new program's arguments up, a
	// moment after exec closed the descriptors Start waits on.
	var cmdline []byte
	for deadline := time.Now().Add(5 * time.Second); len(cmdline) == 0 && time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		var err error
		if cmdline, err = os.ReadFile("/proc/" + strconv.Itoa(k.cmd.Process.Pid) + "/cmdline"); err != nil {
			t.Fatal(err)
		}
	}
	args := strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
	if len(args) != 3 || args[1] != "output-keeper" {
		t.Errorf("the keeper runs as %q, want gantry output-keeper <token>", args)
	}
	if len(args) != 3 {
		t.FailNow()
	}
	token := args[2]
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, c := range []struct {
		name, value string
		args        []string
		fd3         *os.File
	}{
		{"a command", "1", []string{"-test.run=^$"}, nil},
		{"the keeper's value", token, []string{"-test.run=^$"}, nil},
		{"another token", "1", []string{"output-keeper", token}, nil},
		{"fd 3 no socket", token, []string{"output-keeper", token}, r},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], c.args...)
			cmd.Env = append(os.Environ(), "GANTRY_OUTPUT_KEEPER="+c.value)
			if c.fd3 != nil {
				cmd.ExtraFiles = []*os.File{c.fd3}
			}
			var stderr strings.Builder
			cmd.Stderr = &stderr
			done := make(chan error, 1)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatal("it did not end")
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 ||
				!strings.Contains(stderr.String(), "GANTRY_OUTPUT_KEEPER is set in the environment: it is internal to gantry") {
				t.Errorf("it ended with %v, saying %q; want status 2 and the variable named", err, stderr.String())
			}
		})
	}
}

// keeperLine waits for the keeper's process to exit and returns the log.
func keeperLine(t *testing.T, keeper *exec.Cmd, log string) string {
	t.Helper()
	if err := keeper.Wait(); err != nil {
		t.Errorf("the keeper: %v", err)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestKeeperReportSaysWhatGantryHadNotRead: the line says gantry ended
// without its goodbye (it may have crashed, not been killed), counts as
// printed after that only what was, apart from what was in the pipe then,
// unread by gantry; and an output that ended in the keeper's wake that
// found gantry gone gets its line too (it was let go without one).
func TestKeeperReportSaysWhatGantryHadNotRead(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "a.log")
	go1 := filepath.Join(dir, "go")
	k := startedKeeper(t)
	child, keeper, peek := killedGantry(t, k, log, `printf 'first\n0123456789\n'; while [ ! -e '`+go1+`' ]; do sleep 0.01; done; printf abcdefghij`, true)
	// The keeper found gantry gone once it read the 11 bytes gantry had
	// not: only then does the child print more.
	waitUntil(t, "the keeper drains what gantry had not read", func() bool { return unread(t, peek) == 0 })
	if err := os.WriteFile(go1, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := child.Wait(); err != nil {
		t.Fatal(err)
	}
	want := "gantry: the gantry that ran this ended without saying goodbye (killed or crashed) at "
	if got := keeperLine(t, keeper, log); !strings.Contains(got, want) ||
		!strings.Contains(got, "; what it printed after that (10 bytes) was not kept, nor the 11 bytes before that gantry had not read, as its secrets could not be masked\n") {
		t.Errorf("the log holds:\n%s\nwant a line saying gantry ended without its goodbye, 10 bytes printed after, 11 before unread", got)
	}

	// The output ends, then gantry is gone, both in one wake of the keeper.
	log = filepath.Join(dir, "b.log")
	k = startedKeeper(t)
	p, err := newOutPipe(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	k.hold(context.Background(), []*outPipe{p}, log, "sh")
	pid := k.cmd.Process.Pid
	waitUntil(t, "the keeper holds the pipe", func() bool { return keeperHolds(t, pid, p.r) })
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	child = exec.Command("sh", "-c", `printf 'first\n0123456789\n'`)
	child.Stdout, child.SysProcAttr = p.w, &syscall.SysProcAttr{Setpgid: true}
	if err := child.Run(); err != nil {
		t.Fatal(err)
	}
	p.w.Close()
	p.r.Close() // gantry read none of it
	keeper = k.vanish()
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if got := keeperLine(t, keeper, log); !strings.Contains(got, want) ||
		!strings.Contains(got, "; sh had ended; the last 17 bytes it printed, which gantry had not read, were not kept, as its secrets could not be masked\n") {
		t.Errorf("the log holds:\n%s\nwant a line saying the 17 bytes printed last were not kept", got)
	}
}

// TestKeeperIsGivenGantrysSession: what gantry gives the keeper is its own
// session (keeper's TestGantrySession reads it).
func TestKeeperIsGivenGantrysSession(t *testing.T) {
	k := startedKeeper(t)
	sid, err := unix.Getsid(0)
	if err != nil {
		t.Fatal(err)
	}
	if got := envOf(k.cmd.Env, keeper.SessionEnv); got != strconv.Itoa(sid) {
		t.Errorf("the keeper was given session %q, want %d", got, sid)
	}
}

// envOf is the value of a variable in an environment (the last one set).
func envOf(env []string, name string) string {
	got := ""
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			got = v
		}
	}
	return got
}
