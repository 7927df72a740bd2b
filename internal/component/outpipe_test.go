package component

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/lines"
	"github.com/gantry-dev/gantry/internal/testenv"
)

// TestRunOutputsOfDescendants: output a descendant writes after its parent
// ended is copied while it holds the pipe open, up to waitDelay after the
// parent ended; then Run returns with the output so far, and what the
// descendant writes later is lost, not an error.
func TestRunOutputsOfDescendants(t *testing.T) {
	old := waitDelay
	defer func() { waitDelay = old }()

	// Within the delay: the descendant writes once its parent is gone
	// (it waits for that), then ends.
	waitDelay = time.Hour
	var out testenv.SyncBuffer
	script := `echo own; (while kill -0 $$ 2>/dev/null; do sleep 0.01; done; echo after) & exit 0`
	if err := Run(context.Background(), Process{Args: []string{"sh", "-c", script}, Stdout: &out}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := out.String(); got != "own\nafter\n" {
		t.Errorf("stdout %q, want own and the descendant's line", got)
	}

	// Past the delay: the descendant holds both pipes open; its group
	// (the script's pid) goes when the test ends.
	waitDelay = 200 * time.Millisecond
	var outs, errs testenv.SyncBuffer
	group := filepath.Join(t.TempDir(), "group")
	script = `echo $$ > "$1"; echo own; echo own >&2; (sleep 60; echo late; echo late >&2) & exit 0`
	if err := Run(context.Background(), Process{Args: []string{"sh", "-c", script, "sh", group}, Stdout: &outs, Stderr: &errs}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	killGroupIn(group)
	if got, want := outs.String(), "own\ngantry: the process ended, and 200ms later a process it started still held its output open: what that one prints from now on is not read (start a process meant to run on with setsid, or with its output sent elsewhere)\n"; got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	if got := errs.String(); got != "own\n" {
		t.Errorf("stderr %q, want own", got)
	}
}

// TestRunOutputsErrorPastTheDelay: a writer that failed on one stream is
// Run's error even when a descendant holds the other stream open past the
// delay (the streams still open are closed then, which is no error).
func TestRunOutputsErrorPastTheDelay(t *testing.T) {
	old := waitDelay
	defer func() { waitDelay = old }()
	waitDelay = 200 * time.Millisecond
	group := filepath.Join(t.TempDir(), "group")
	var out testenv.SyncBuffer
	// The script writes to stderr until the copy, whose writer failed,
	// ended; the descendant then keeps stdout open past the delay.
	script := `echo $$ > "$1"; echo own; trap '' PIPE; while echo own >&2; do sleep 0.01; done; (sleep 60 2>/dev/null; echo late) & exit 0`
	refused := errors.New("refused")
	stderr := writerFunc(func([]byte) (int, error) { return 0, refused })
	err := Run(context.Background(), Process{Args: []string{"sh", "-c", script, "sh", group}, Stdout: &out, Stderr: stderr})
	killGroupIn(group)
	if !errors.Is(err, refused) {
		t.Errorf("Run: %v, want the writer's error", err)
	}
	if got := out.String(); !strings.HasPrefix(got, "own\ngantry: the process ended, and 200ms later") {
		t.Errorf("stdout %q, want own and the note", got)
	}
}

// TestRunOutputsInParallel: many processes at once, each writing more than
// a pipe holds to stdout and to stderr, each stream whole and to its own
// writer, through the copiers the processes share.
func TestRunOutputsInParallel(t *testing.T) {
	const procs = 16
	var wg sync.WaitGroup
	errc := make(chan error, procs)
	for i := 0; i < procs; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var out, errs testenv.SyncBuffer
			script := fmt.Sprintf(`j=0; while [ $j -lt 2000 ]; do echo "o%[1]d $j ................................"; echo "e%[1]d $j" >&2; j=$((j+1)); done`, i)
			if err := Run(context.Background(), Process{Args: []string{"sh", "-c", script}, Stdout: &out, Stderr: &errs}); err != nil {
				errc <- err
				return
			}
			var wantOut, wantErr bytes.Buffer
			for j := 0; j < 2000; j++ {
				fmt.Fprintf(&wantOut, "o%d %d ................................\n", i, j)
				fmt.Fprintf(&wantErr, "e%d %d\n", i, j)
			}
			if out.String() != wantOut.String() || errs.String() != wantErr.String() {
				errc <- fmt.Errorf("process %d: stdout %d bytes (want %d), stderr %d bytes (want %d)", i, len(out.String()), wantOut.Len(), len(errs.String()), wantErr.Len())
			}
		}(i)
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}

// TestRunNoteAfterAnUnendedLine: the note that a descendant still held the
// output comes after the line the process left unended, not glued to it (it
// was read as the end of an output's value).
func TestRunNoteAfterAnUnendedLine(t *testing.T) {
	old := waitDelay
	defer func() { waitDelay = old }()
	waitDelay = 200 * time.Millisecond
	group := filepath.Join(t.TempDir(), "group")
	var mu sync.Mutex
	var got []string
	w := lines.NewWriter(func(l string) {
		mu.Lock()
		got = append(got, l)
		mu.Unlock()
	})
	script := `echo $$ > "$1"; printf 'url = http://x'; (sleep 60; echo late) & exit 0`
	if err := Run(context.Background(), Process{Args: []string{"sh", "-c", script, "sh", group}, Stdout: w}); err != nil {
		t.Fatalf("Run: %v", err)
	}
	killGroupIn(group)
	w.Flush()
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0] != "url = http://x" || !strings.HasPrefix(got[1], "gantry: the process ended") {
		t.Errorf("lines %q, want the unended line, then the note", got)
	}
}

// killGroupIn kills the process group whose id a test's script wrote to
// file: the descendants it left holding its output.
func killGroupIn(file string) {
	if b, err := os.ReadFile(file); err == nil {
		if pgid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}
}
