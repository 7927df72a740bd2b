package component

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Registry notes, in a file of the workspace, the process groups a run has
// running. A run killed with SIGKILL cannot stop its children: they go on
// alone, and the next run must not start the same work next to them. It
// reads what the killed run left in the file and waits for those that still
// live (Leftovers, WaitGone).
//
// Lines are appended as processes start and end ("+ pid dir args",
// "- pid"), unbuffered: a killed run leaves them in the page cache,
// which is all that must survive (a machine crash ends the processes too, so
// no fsync is needed).
type Registry struct {
	mu    sync.Mutex
	f     *os.File
	path  string
	carry []Leftover
}

// OpenRegistry starts a fresh registry at path, replacing what was there.
// The leftovers of a killed run that still live are carried over: the run
// waits for them first, and if it is killed meanwhile, the next run must
// still know of them.
func OpenRegistry(path string, carry ...Leftover) (*Registry, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("process registry: %w", err)
	}
	r := &Registry{f: f, path: path, carry: carry}
	for _, l := range carry {
		r.write(fmt.Sprintf("+ %d %s %s\n", l.PID, strconv.Quote(l.Dir), strconv.Quote(l.Args)))
	}
	return r, nil
}

func (r *Registry) write(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f != nil {
		_, _ = r.f.WriteString(line)
	}
}

func (r *Registry) started(pid int, dir string, args []string) {
	r.write(fmt.Sprintf("+ %d %s %s\n", pid, strconv.Quote(dir), strconv.Quote(strings.Join(args, " "))))
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
	for _, l := range r.carry {
		if groupAlive(l.PID) {
			return err
		}
	}
	if rerr := os.Remove(r.path); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
		err = rerr
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

// Leftover is a process group that a killed run left running.
type Leftover struct {
	PID  int
	Dir  string
	Args string
}

func (l Leftover) String() string {
	return fmt.Sprintf("pid %d: %s (in %s)", l.PID, l.Args, l.Dir)
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
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.SplitN(sc.Text(), " ", 4)
		if len(fields) < 2 {
			continue // a line cut short by the kill
		}
		pid, err := strconv.Atoi(fields[1])
		if err != nil {
			continue
		}
		switch {
		case fields[0] == "-":
			delete(running, pid)
		case fields[0] == "+" && len(fields) == 4:
			dir, _ := strconv.Unquote(fields[2])
			args, _ := strconv.Unquote(fields[3])
			running[pid] = Leftover{PID: pid, Dir: dir, Args: args}
			order = append(order, pid)
		}
	}
	var out []Leftover
	for _, pid := range order {
		if l, ok := running[pid]; ok && groupAlive(pid) {
			out = append(out, l)
			delete(running, pid)
		}
	}
	return out, nil
}

// WaitGone waits until none of the leftovers lives, polling: they are not
// this process's children, so there is nothing to wait on. report is called
// with those still alive each time the set changes.
func WaitGone(ctx context.Context, left []Leftover, every time.Duration, report func([]Leftover)) error {
	last := -1
	for {
		var alive []Leftover
		for _, l := range left {
			if groupAlive(l.PID) {
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

// groupAlive reports whether the process group led by pid still has a live
// member. Zombies do not count: a killed run's children are reaped by
// whoever adopted them, which may take a while. (A pid reused by an
// unrelated process does not count either, unless that process leads a
// group of its own with the same id, which the message names for the user
// to judge.)
func groupAlive(pid int) bool {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		err := syscall.Kill(-pid, 0)
		return err == nil || errors.Is(err, syscall.EPERM)
	}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(p); ok && st.pgrp == pid && st.state != 'Z' && st.state != 'X' {
			return true
		}
	}
	return false
}

// procStat is what /proc/<pid>/stat tells about a process.
type procStat struct {
	state byte
	pgrp  int
}

func readStat(pid int) (procStat, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	// The command name (field 2) is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(data), ')')
	if i < 0 {
		return procStat{}, false
	}
	fields := strings.Fields(string(data[i+1:])) // from field 3 on
	if len(fields) < 3 || len(fields[0]) != 1 {
		return procStat{}, false
	}
	pgrp, _ := strconv.Atoi(fields[2])
	return procStat{state: fields[0][0], pgrp: pgrp}, true
}
