package component

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestRunOutputThroughPooledCopy (syncBuffer is a writer os/exec cannot
// hand the child directly): output larger than the copy buffer
// arrives whole and in order, on separate writers and on one shared by
// stdout and stderr (which os/exec still gives a single pipe: the lines
// keep the order the child wrote them in).
func TestRunOutputThroughPooledCopy(t *testing.T) {
	script := `i=0; while [ $i -lt 3000 ]; do echo "out $i"; echo "err $i" >&2; i=$((i+1)); done`
	var out, errs syncBuffer
	if err := Run(context.Background(), Process{Args: []string{"sh", "-c", script}, Stdout: &out, Stderr: &errs}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "out "); n != 3000 || strings.Contains(out.String(), "err") {
		t.Errorf("stdout has %d out lines (and err lines: %v), want 3000 and none", n, strings.Contains(out.String(), "err"))
	}
	if n := strings.Count(errs.String(), "err "); n != 3000 {
		t.Errorf("stderr has %d lines, want 3000", n)
	}
	var both syncBuffer
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
	var b syncBuffer
	if childWriter(&b) != childWriter(&b) {
		t.Error("two wrappers of one writer differ: os/exec would give stdout and stderr a pipe each")
	}
}
