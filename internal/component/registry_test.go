package component

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/procstat"
)

// A run that ends normally leaves no registry; one that is killed leaves the
// processes it started, and only those still alive are leftovers.
func TestRegistryLeftovers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "running")
	r, err := OpenRegistry(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := WithRegistry(context.Background(), r)
	if err := Run(ctx, Process{Args: []string{"true"}, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	// A process started as the killed run would have: noted, never ended.
	long := startGroup(t)
	r.started(long.Process.Pid, 1, dir, []string{"sleep", "30"})
	// A dead process noted as running (its end line lost).
	r.started(999999, 2, dir, []string{"gone"})

	left, err := Leftovers(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].PID != long.Process.Pid || left[0].Args != "sleep 30" {
		t.Fatalf("leftovers = %+v, want the sleep", left)
	}
	if !strings.Contains(left[0].String(), "sleep 30") {
		t.Errorf("description %q", left[0])
	}

	done := make(chan error, 1)
	var reports int
	reported := make(chan struct{})
	go func() {
		done <- WaitGone(context.Background(), left, 10*time.Millisecond, func([]Leftover) {
			reports++
			if reports == 1 {
				close(reported)
			}
		})
	}()
	// Kill the leftover once the wait has seen it alive.
	<-reported
	_ = syscall.Kill(-long.Process.Pid, syscall.SIGTERM)
	_, _ = long.Process.Wait()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if reports != 1 {
		t.Errorf("reported %d times, want once", reports)
	}

	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("registry still there after Close: %v", err)
	}
	if left, err := Leftovers(path); err != nil || len(left) != 0 {
		t.Errorf("leftovers after a clean end: %v %v", left, err)
	}
}

func TestGroupAliveIgnoresZombies(t *testing.T) {
	// A child that exited but was not waited for is a zombie: not alive.
	cmd := exec.Command("true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if _, ok := procstat.Read(pid); !ok {
		t.Skip("no /proc")
	}
	waitUntil(t, "the child is a zombie", func() bool {
		st, ok := procstat.Read(pid)
		return ok && st.State == 'Z'
	})
	if groupAlive(pid) {
		t.Error("a zombie counts as alive")
	}
	_ = cmd.Wait()
}

// TestRegistryKeepsLiveCarriedLeftovers: a run interrupted while it waits
// for a killed run's leftovers ends, but the next run must still find them.
func TestRegistryKeepsLiveCarriedLeftovers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.running")
	long := startGroup(t)
	carried := Leftover{PID: long.Process.Pid, Dir: dir, Args: "sleep 30"}
	r, err := OpenRegistry(path, nil, carried)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	left, err := Leftovers(path)
	if err != nil || len(left) != 1 || left[0].PID != carried.PID {
		t.Fatalf("after the interrupted run: %v %v", left, err)
	}
	// Once the leftover is gone, a run that ends removes the file.
	_ = syscall.Kill(-long.Process.Pid, syscall.SIGKILL)
	_, _ = long.Process.Wait()
	r, err = OpenRegistry(path, nil, left...)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the registry is left although its leftover is gone: %v", err)
	}
}

// startGroup starts a sleep leading its own group, as the runs start
// processes; it is killed when the test ends.
func startGroup(t *testing.T) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return startKilledAtEnd(t, cmd)
}

// startKilledAtEnd starts cmd; its process group is killed when the test
// ends.
func startKilledAtEnd(t *testing.T, cmd *exec.Cmd) *exec.Cmd {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _, _ = cmd.Process.Wait() })
	return cmd
}

// TestLeftoverIdentity: a registry line names a process by its pid, its boot
// and its start. A live group whose leader has the pid but started at
// another time, or a line from another boot, is not the run's: the next run
// does not wait for it.
func TestLeftoverIdentity(t *testing.T) {
	cmd := startGroup(t)
	pid := cmd.Process.Pid
	st, ok := procstat.Read(pid)
	if !ok {
		t.Skip("no /proc")
	}
	started := st.SinceBoot()
	// Another start an hour off; after the test process's start when the
	// machine booted less than an hour ago (a start before boot cannot be
	// told from "unknown").
	other := started - time.Hour
	if other <= 0 {
		other = started + time.Hour
	}
	tests := []struct {
		name  string
		l     Leftover
		alive bool
	}{
		{"the run's process", Leftover{PID: pid, Boot: procstat.BootID(), Started: started}, true},
		{"a line of an older gantry, trusted on the pid", Leftover{PID: pid}, true},
		{"the pid reused by another process", Leftover{PID: pid, Boot: procstat.BootID(), Started: other}, false},
		{"another boot", Leftover{PID: pid, Boot: "another-boot", Started: started}, false},
		{"a group found without its leader", Leftover{PID: pid, Boot: procstat.BootID()}, true},
		{"a group found without its leader, another boot", Leftover{PID: pid, Boot: "another-boot"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.l.alive(); got != tt.alive {
				t.Errorf("alive = %v, want %v", got, tt.alive)
			}
			path := filepath.Join(t.TempDir(), "state.running")
			if err := os.WriteFile(path, []byte(tt.l.line(0)), 0o600); err != nil {
				t.Fatal(err)
			}
			left, err := Leftovers(path)
			if err != nil || (len(left) == 1) != tt.alive {
				t.Errorf("Leftovers = %v, %v; want alive=%v", left, err, tt.alive)
			}
		})
	}
}

// TestRegistryLines: lines round-trip folders and commands with spaces and
// quotes, read the older format, skip a line cut short, and mask secrets.
func TestRegistryLines(t *testing.T) {
	l := Leftover{PID: 42, Dir: `/srv/my "app" dir`, Args: "deploy --name a b", Boot: "b1", Started: 1234 * time.Millisecond}
	for _, n := range []uint64{0, 12} {
		got, gotN, ok := parseStarted(strings.TrimSuffix(l.line(n), "\n"))
		if !ok || got != l || gotN != n {
			t.Errorf("round trip of mark %d: %+v %d %v", n, got, gotN, ok)
		}
	}
	old, _, ok := parseStarted(`+ 7 "/srv/app" "make deploy"`)
	if !ok || old != (Leftover{PID: 7, Dir: "/srv/app", Args: "make deploy"}) {
		t.Errorf("older line: %+v %v", old, ok)
	}
	for _, cut := range []string{`+ 7 b1:99 "/srv/ap`, `+ 7 b1:99 "/srv/app" "make deploy" 1`[:35] + "x"} {
		if _, _, ok := parseStarted(cut); ok {
			t.Errorf("a line cut short, or with a bad mark, was read: %s", cut)
		}
	}
	path := filepath.Join(t.TempDir(), "state.running")
	r, err := OpenRegistry(path, func(s string) string { return strings.ReplaceAll(s, "hunter2", "*****") })
	if err != nil {
		t.Fatal(err)
	}
	r.started(43, 1, "/srv", []string{"deploy", "--password", "hunter2"})
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), "hunter2") || !strings.Contains(string(data), "--password *****") {
		t.Errorf("the registry notes: %s", data)
	}
	_ = r.Close()
}

// TestBootClock: the time since boot is read from the kernel once and then
// counted on the monotonic clock, until the wall clock moves away from it (a
// suspend, or a step of the clock): then it is read again.
func TestBootClock(t *testing.T) {
	base := time.Now().Round(0)
	type call struct {
		mono, wall time.Duration // after base, on each clock
		want       time.Duration
		reads      int // kernel reads so far
	}
	tests := []struct {
		name  string
		calls []call
	}{
		{"read once, then counted", []call{
			{0, 0, time.Hour, 1},
			{time.Second, time.Second, time.Hour + time.Second, 1},
			{3 * time.Second, 3*time.Second + 10*time.Millisecond, time.Hour + 3*time.Second, 1},
		}},
		{"a suspend: read again", []call{
			{0, 0, time.Hour, 1},
			{time.Second, 10 * time.Minute, time.Hour + 10*time.Minute, 2},
			{2 * time.Second, 10*time.Minute + time.Second, time.Hour + 10*time.Minute + time.Second, 2},
		}},
		{"the wall clock set back: read again", []call{
			{0, 0, time.Hour, 1},
			{time.Second, -time.Minute, time.Hour + time.Second, 2},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The fake kernel: an hour after boot at base, suspended for
			// as long as the wall clock ran ahead of the monotonic one
			// (when set back, nothing was suspended).
			var now call
			reads := 0
			c := &bootClock{
				read: func() (time.Duration, bool) {
					reads++
					return time.Hour + max(now.mono, now.wall), true
				},
				now: func() (time.Time, time.Duration) { return base.Add(now.wall), time.Minute + now.mono },
			}
			for i, cl := range tt.calls {
				now = cl
				if got := c.since(); got != cl.want {
					t.Errorf("call %d: since boot %v, want %v", i, got, cl.want)
				}
				if reads != cl.reads {
					t.Errorf("call %d: %d kernel reads, want %d", i, reads, cl.reads)
				}
			}
		})
	}
	// The real clock lies between two kernel readings taken around it,
	// within a slack far below startSlack (whatever the machine's speed:
	// the readings bracket the call, however long it takes).
	before, ok1 := readBootClock()
	got := sinceBoot()
	after, ok2 := readBootClock()
	const slack = 250 * time.Millisecond
	if ok1 && ok2 && (got < before-slack || got > after+slack) {
		t.Errorf("sinceBoot %v, the kernel said %v before and %v after", got, before, after)
	}
}

// TestRegistryFindsUnnotedProcesses: a run killed after it started a
// process but before it noted it leaves no "+" line. Its processes carry
// the run's mark, so the next run finds their groups all the same, once
// each: the group of one whose leader ended too. What the mark does not
// make a leftover: a noted process's descendant in a group of its own (no
// run waited for that before), another run's process, a daemon (a session
// of its own) of an unnoted process.
func TestRegistryFindsUnnotedProcesses(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.running")
	r, err := OpenRegistry(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// Run gives each process its mark.
	var out strings.Builder
	ctx := WithRegistry(context.Background(), r)
	if err := Run(ctx, Process{Args: []string{"sh", "-c", "echo $" + RunMarkEnv}, Dir: dir, Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(out.String()), r.token+".1"; got != want {
		t.Fatalf("the process's mark: %q, want %q", got, want)
	}
	start := func(mark string, attr *syscall.SysProcAttr, args ...string) *exec.Cmd {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Env = append(os.Environ(), mark)
		cmd.Dir = dir
		cmd.SysProcAttr = attr
		return startKilledAtEnd(t, cmd)
	}
	group := &syscall.SysProcAttr{Setpgid: true}
	unnotedMark, _ := r.nextMark()
	unnoted := start(unnotedMark, group, "sleep", "30")
	notedMark, notedN := r.nextMark()
	noted := start(notedMark, group, "sleep", "30")
	r.started(noted.Process.Pid, notedN, dir, []string{"sleep", "30"})
	start(notedMark, group, "sleep", "30") // a noted process's descendant, in a group of its own
	start(RunMarkEnv+"=another-run.4", group, "sleep", "30")
	daemonMark, _ := r.nextMark()
	start(daemonMark, &syscall.SysProcAttr{Setsid: true}, "sleep", "30")
	// A leader that ended, and left its group behind: a background sleep,
	// once it runs sleep (until it does, it is a copy of the shell).
	endedMark, _ := r.nextMark()
	bgFile := filepath.Join(dir, "bg")
	ended := start(endedMark, group, "sh", "-c", `sleep 30 & echo $! > "$1"; exit 0`, "sh", bgFile)
	if err := ended.Wait(); err != nil {
		t.Fatal(err)
	}
	bgText, err := os.ReadFile(bgFile)
	if err != nil {
		t.Fatal(err)
	}
	bg, err := strconv.Atoi(strings.TrimSpace(string(bgText)))
	if err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the background process runs sleep", func() bool { return processName(bg, bg) == "sleep" })

	left, err := Leftovers(path)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]Leftover{}
	for _, l := range left {
		if _, twice := got[l.PID]; twice {
			t.Errorf("group %d found twice", l.PID)
		}
		got[l.PID] = l
	}
	want := []int{noted.Process.Pid, unnoted.Process.Pid, ended.Process.Pid}
	if len(got) != len(want) {
		t.Fatalf("leftovers %v, want the groups %v", left, want)
	}
	for _, pid := range want {
		if _, ok := got[pid]; !ok {
			t.Fatalf("group %d is not found: %v", pid, left)
		}
	}
	if l := got[unnoted.Process.Pid]; l.Args != "sleep" || l.Dir != dir || l.Boot != procstat.BootID() || l.Started == 0 || !l.alive() {
		t.Errorf("the unnoted process: %+v", l)
	}
	if l := got[ended.Process.Pid]; l.Args != "sleep" || l.Started != 0 || !l.alive() {
		t.Errorf("the group whose leader ended: %+v", l)
	}
	// Carried to the next registry, they are leftovers there too, by
	// their lines.
	r2path := filepath.Join(dir, "next.running")
	r2, err := OpenRegistry(r2path, nil, left...)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if again, err := Leftovers(r2path); err != nil || len(again) != len(want) {
		t.Errorf("carried over: %v %v", again, err)
	}
	_ = syscall.Kill(-unnoted.Process.Pid, syscall.SIGKILL)
	_, _ = unnoted.Process.Wait()
	_ = syscall.Kill(-ended.Process.Pid, syscall.SIGKILL)
	waitUntil(t, "the background sleep ends", func() bool {
		st, ok := procstat.Read(bg)
		return !ok || st.State == 'Z' || st.State == 'X'
	})
	if again, err := Leftovers(path); err != nil || len(again) != 1 || again[0].PID != noted.Process.Pid {
		t.Errorf("after the unnoted ones ended: %v %v", again, err)
	}
}

// TestRegistryMarkIsNotSelf: gantry run by a process of the killed run
// carries its mark too; neither it nor the processes it runs under are
// leftovers (it would wait for itself).
func TestRegistryMarkIsNotSelf(t *testing.T) {
	if path := os.Getenv("GANTRY_TEST_REGISTRY"); path != "" {
		left, err := Leftovers(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range left {
			t.Errorf("leftover %v", l)
		}
		return
	}
	path := filepath.Join(t.TempDir(), "state.running")
	r, err := OpenRegistry(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// The test binary again, under a shell of the run, both marked.
	self := exec.Command("sh", "-c", `"$0" -test.run='^TestRegistryMarkIsNotSelf$' -test.v`, os.Args[0])
	mark, _ := r.nextMark()
	self.Env = append(os.Environ(), mark, "GANTRY_TEST_REGISTRY="+path)
	self.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // as a run starts it
	if out, err := self.CombinedOutput(); err != nil {
		t.Errorf("%v\n%s", err, out)
	}
}

// waitUntil waits for cond, checking every few milliseconds, for at most a
// minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRegistryInUse: a run's registry is in use while the run has it open,
// not once it is closed or left by a run that died (the kernel lets its
// lock go): gantry plan tells a live run's processes from leftovers so.
func TestRegistryInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hub.yaml.state.running")
	if RegistryInUse(path) {
		t.Fatal("no registry is in use")
	}
	r, err := OpenRegistry(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !RegistryInUse(path) {
		t.Error("an open registry is not in use")
	}
	// What a killed run leaves: the file, no lock.
	left, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, left, 0o600); err != nil {
		t.Fatal(err)
	}
	if RegistryInUse(path) {
		t.Error("a registry no run holds is in use")
	}
}

// TestOpenRegistryHeld: a registry a live run holds is neither emptied nor
// written by a second run, which is told who holds it; once the first run
// ends, it opens.
func TestOpenRegistryHeld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hub.yaml.state.running")
	live, err := OpenRegistry(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	live.started(os.Getpid(), 1, "/stack/comp", []string{"make", "deploy"})
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, try := range []struct {
		name string
		call func() error
	}{
		{"OpenRegistry", func() error {
			r, err := OpenRegistry(path, nil)
			if err == nil {
				r.Close()
			}
			return err
		}},
		{"CheckRegistry", func() error { return CheckRegistry(path) }},
	} {
		err := try.call()
		var busy *RegistryBusyError
		if !errors.As(err, &busy) {
			t.Fatalf("%s of a held registry = %v, want a *RegistryBusyError", try.name, err)
		}
		if busy.PID != os.Getpid() || busy.Program == "" || busy.Program == "?" {
			t.Errorf("%s: holder pid %d (%q), want this process, %d, by its name", try.name, busy.PID, busy.Program, os.Getpid())
		}
		if want := fmt.Sprintf("(pid %d)", os.Getpid()); !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %q does not name the holder %s", try.name, err, want)
		}
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(after) != string(before) {
			t.Errorf("%s changed the live run's registry:\n%s\nwant\n%s", try.name, after, before)
		}
	}
	if err := live.Close(); err != nil {
		t.Fatal(err)
	}
	if err := CheckRegistry(path); err != nil {
		t.Errorf("CheckRegistry once the run ended = %v, want nil", err)
	}
	r, err := OpenRegistry(path, nil)
	if err != nil {
		t.Fatalf("OpenRegistry once the run ended: %v", err)
	}
	r.Close()
}

// A mirror gets the same lines as the registry (a next run reading either
// finds the same), is held as it is, and goes with it.
func TestRegistryMirror(t *testing.T) {
	dir := t.TempDir()
	p1, p2 := filepath.Join(dir, "manifest.running"), filepath.Join(dir, "state.running")
	r, err := OpenRegistry(p1, nil, Leftover{PID: 999999, Dir: "/x", Args: "carried"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Mirror(p2); err != nil {
		t.Fatal(err)
	}
	r.started(4242, 1, "/w", []string{"make", "deploy"})
	r.ended(4242)
	a, _ := os.ReadFile(p1)
	b, _ := os.ReadFile(p2)
	if string(a) != string(b) || !strings.Contains(string(b), "carried") || !strings.Contains(string(b), "- 4242") {
		t.Errorf("the mirror differs:\n%s\n---\n%s", a, b)
	}
	if !RegistryInUse(p2) {
		t.Error("the mirror is not held while the run lives")
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{p1, p2} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there after Close: %v", p, err)
		}
	}
	// A mirror a live run holds is refused.
	held, err := OpenRegistry(p2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	r2, err := OpenRegistry(p1, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	var busy *RegistryBusyError
	if err := r2.Mirror(p2); !errors.As(err, &busy) {
		t.Errorf("Mirror of a held registry: %v, want a *RegistryBusyError", err)
	}
}
