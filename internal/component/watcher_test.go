package component

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gantry-dev/gantry/internal/testenv"
)

// recordingWatcher notes what it hears, in order.
type recordingWatcher struct {
	mu     sync.Mutex
	n      int
	events []string
}

func (w *recordingWatcher) Starting() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n++
	mark := fmt.Sprintf("m%d", w.n)
	w.events = append(w.events, "starting "+mark)
	return "GANTRY_TEST_MARK=" + mark
}

func (w *recordingWatcher) Started(mark string, pgid int) { w.note("started", mark, pgid) }
func (w *recordingWatcher) Ended(mark string, pgid int)   { w.note("ended", mark, pgid) }

func (w *recordingWatcher) note(what, mark string, pgid int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events = append(w.events, fmt.Sprintf("%s %s %d", what, strings.TrimPrefix(mark, "GANTRY_TEST_MARK="), pgid))
}

func (w *recordingWatcher) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	e := w.events
	w.events = nil
	return e
}

// TestRunWatcher: a watcher hears of a process before it starts (its mark
// is in the process's environment), then of the group it leads, then of its
// end; of one that cannot start, that it ended with no group. The
// environment is otherwise the one Run gives unwatched: later entries win
// (the mark over one given), PWD is the folder when no environment is
// given, the caller's list is not written to, a NUL byte is refused.
func TestRunWatcher(t *testing.T) {
	w := &recordingWatcher{}
	ctx := WithWatcher(context.Background(), w)
	dir := t.TempDir()
	script := `echo "$$ $GANTRY_TEST_MARK $A $PWD"`

	var out testenv.SyncBuffer
	if err := Run(ctx, Process{Args: []string{"sh", "-c", script}, Dir: dir, Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	var pid int
	var mark, rest string
	if _, err := fmt.Sscanf(out.String(), "%d %s %s", &pid, &mark, &rest); err != nil || mark != "m1" || rest != dir {
		t.Errorf("no environment given: the process printed %q, want its pid, m1 and %s", out.String(), dir)
	}
	want := []string{"starting m1", fmt.Sprintf("started m1 %d", pid), fmt.Sprintf("ended m1 %d", pid)}
	if got := w.take(); !slices.Equal(got, want) {
		t.Errorf("the watcher heard %q, want %q", got, want)
	}

	out = testenv.SyncBuffer{}
	env := append(make([]string, 0, 8), "A=1", "A=2", "GANTRY_TEST_MARK=given")
	if err := Run(ctx, Process{Args: []string{"/bin/sh", "-c", script}, Dir: dir, Env: env, Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(out.String()); len(got) < 3 || got[1] != "m2" || got[2] != "2" {
		t.Errorf("an environment given: the process printed %q, want m2 and 2 after its pid", out.String())
	}
	if spare := env[:cap(env)][len(env)]; spare != "" {
		t.Errorf("Run wrote %q into the caller's environment's spare room", spare)
	}
	if !slices.Equal(env, []string{"A=1", "A=2", "GANTRY_TEST_MARK=given"}) {
		t.Errorf("Run changed the caller's environment: %q", env)
	}
	w.take()

	err := Run(ctx, Process{Args: []string{"true"}, Env: []string{"A=x\x00y"}})
	if err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("a NUL byte: %v", err)
	}
	err = Run(ctx, Process{Args: []string{"gantry-no-such-program"}})
	if !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("a program not in PATH: %v", err)
	}
	want = []string{"starting m3", "ended m3 0", "starting m4", "ended m4 0"}
	if got := w.take(); !slices.Equal(got, want) {
		t.Errorf("processes that did not start: the watcher heard %q, want %q", got, want)
	}
}
