package component

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/testenv"
)

// TestRunOutputThroughPooledCopy (testenv.SyncBuffer is a writer os/exec cannot
// hand the child directly): output larger than the copy buffer
// arrives whole and in order, on separate writers and on one shared by
// stdout and stderr (which os/exec still gives a single pipe: the lines
// keep the order the child wrote them in).
func TestRunOutputThroughPooledCopy(t *testing.T) {
	script := `i=0; while [ $i -lt 3000 ]; do echo "out $i"; echo "err $i" >&2; i=$((i+1)); done`
	var out, errs testenv.SyncBuffer
	if err := Run(context.Background(), Process{Args: []string{"sh", "-c", script}, Stdout: &out, Stderr: &errs}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "out "); n != 3000 || strings.Contains(out.String(), "err") {
		t.Errorf("stdout has %d out lines (and err lines: %v), want 3000 and none", n, strings.Contains(out.String(), "err"))
	}
	if n := strings.Count(errs.String(), "err "); n != 3000 {
		t.Errorf("stderr has %d lines, want 3000", n)
	}
	var both testenv.SyncBuffer
	if err := Run(context.Background(), Process{Args: []string{"sh", "-c", script}, Stdout: &both, Stderr: &both}); err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for i := range 3000 {
		want.WriteString("out " + strconv.Itoa(i) + "\nerr " + strconv.Itoa(i) + "\n")
	}
	if both.String() != want.String() {
		t.Errorf("one writer for both streams: the lines are not in the order written (%d bytes, want %d)", len(both.String()), want.Len())
	}
}

func TestChildWriter(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if childWriter(f) != f {
		t.Error("a file is not handed to the child as it is")
	}
	if childWriter(nil) != nil {
		t.Error("nil is not nil")
	}
	var b testenv.SyncBuffer
	if childWriter(&b) != childWriter(&b) {
		t.Error("two wrappers of one writer differ: os/exec would give stdout and stderr a pipe each")
	}
}

// TestRunOutputs: where a process's output goes: a file the child writes
// itself, nothing, a writer that fails (its error is Run's).
func TestRunOutputs(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Run(context.Background(), Process{Args: []string{"sh", "-c", "echo to-file; echo also >&2"}, Stdout: f, Stderr: f}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(f.Name()); string(b) != "to-file\nalso\n" {
		t.Errorf("the file holds %q", b)
	}
	if err := Run(context.Background(), Process{Args: []string{"sh", "-c", "echo nowhere; echo nowhere >&2"}}); err != nil {
		t.Errorf("no outputs: %v", err)
	}
	refused := errors.New("refused")
	err = Run(context.Background(), Process{Args: []string{"sh", "-c", "echo x"}, Stdout: writerFunc(func([]byte) (int, error) { return 0, refused })})
	if !errors.Is(err, refused) {
		t.Errorf("a writer that fails: Run returned %v, want its error", err)
	}
}

// TestRunEnvironment: a process gets its environment without duplicate
// names (the later entry wins), this process's with PWD set to its folder
// when none is given, and a clear error for a NUL byte.
func TestRunEnvironment(t *testing.T) {
	dir := t.TempDir()
	var out testenv.SyncBuffer
	if err := Run(context.Background(), Process{Args: []string{"sh", "-c", "echo \"$A $PWD\""}, Dir: dir, Env: []string{"A=1", "A=2", "PATH=" + os.Getenv("PATH")}, Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(out.String()); !strings.HasPrefix(got, "2 ") {
		t.Errorf("duplicates: %q, want A=2", got)
	}
	out = testenv.SyncBuffer{}
	t.Setenv("GANTRY_TEST_INHERITED", "yes")
	if err := Run(context.Background(), Process{Args: []string{"sh", "-c", "echo \"$GANTRY_TEST_INHERITED $PWD\""}, Dir: dir, Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(out.String()), "yes "+dir; got != want {
		t.Errorf("no environment given: %q, want %q", got, want)
	}
	err := Run(context.Background(), Process{Args: []string{"true"}, Env: []string{"A=x\x00y"}})
	if err == nil || !strings.Contains(err.Error(), "NUL") {
		t.Errorf("a NUL byte: %v", err)
	}
	err = Run(context.Background(), Process{Args: []string{"gantry-no-such-program"}})
	if !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("a program not in PATH: %v", err)
	}
}
