package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
)

// TestRunLogClosesAtComponentEnd: a component's log file is closed when its
// end step finishes, with every line written; a later line opens it again
// and appends.
func TestRunLogClosesAtComponentEnd(t *testing.T) {
	l, err := NewRunLog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	step := &plan.Node{ID: "db/deploy", Group: "db", Kind: plan.KindComponent, Label: "deploy db"}
	end := &plan.Node{ID: "db/end", Group: "db", Kind: plan.KindEnd, Hidden: true}
	now := time.Now()
	l.StepStarted(step, now)
	l.Log(step, "hello", time.Now())
	if len(l.files) != 1 {
		t.Fatalf("open logs: %d", len(l.files))
	}
	l.StepFinished(step, plan.Result{Status: plan.OK}, now, now)
	l.StepFinished(end, plan.Result{Status: plan.OK}, now, now)
	if len(l.files) != 0 || len(l.dirty) != 0 {
		t.Fatalf("the log is still open after the component ended: %d open, %d dirty", len(l.files), len(l.dirty))
	}
	data, err := os.ReadFile(l.Path("db"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "hello") || !strings.Contains(string(data), "<== deploy db: ok") {
		t.Errorf("log after close:\n%s", data)
	}
	l.Log(step, "later", time.Now())
	l.Idle()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ = os.ReadFile(l.Path("db"))
	if got := strings.Count(string(data), "\n"); got != 4 || !strings.HasSuffix(string(data), "later\n") {
		t.Errorf("log after a later line (%d lines):\n%s", got, data)
	}
}

// TestRunLogKeepsWriteErrors: a log whose lines could not all be written
// makes Close fail, whether the failure came when the run went idle or at
// the close: a report must not take the lines it heard for what the file
// holds.
func TestRunLogKeepsWriteErrors(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	for _, idle := range []bool{true, false} {
		dir := t.TempDir()
		l, err := NewRunLog(dir)
		if err != nil {
			t.Fatal(err)
		}
		// Every write to the stack's log fails: the disk is full.
		if err := os.Symlink("/dev/full", l.Path("stack")); err != nil {
			t.Fatal(err)
		}
		step := &plan.Node{ID: "stack/setup", Group: "stack", Label: "setup"}
		l.Log(step, "a line that cannot be written", time.Now())
		if idle {
			l.Idle()
		}
		if err := l.Close(); err == nil {
			t.Errorf("idle=%v: Close reported no error for a log the disk refused", idle)
		}
	}
}

// TestRunLogDropsLinesAfterClose: a line written after Close does not open
// a log again (nothing would flush it) and is not heard.
func TestRunLogDropsLinesAfterClose(t *testing.T) {
	l, err := NewRunLog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var heard []string
	l.Tap(tapFunc(func(group, line string) { heard = append(heard, line) }))
	step := &plan.Node{ID: "db/deploy", Group: "db"}
	l.Log(step, "before", time.Now())
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l.Log(step, "after", time.Now())
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(l.Path("db"))
	if strings.Contains(string(data), "after") || len(heard) != 1 || len(l.files) != 0 {
		t.Errorf("a line after Close: file %q, heard %q, %d open", data, heard, len(l.files))
	}
}

type tapFunc func(group, line string)

func (f tapFunc) LogLine(group, line string) { f(group, line) }

// TestRunLogOpensAtFirstLineAndRetries: a component's log exists once it
// logged a line (gantry logs during a run, a crash before the lines are
// written out); a line that could not open it is lost, the error kept for
// Close, and the next line opens it.
func TestRunLogOpensAtFirstLineAndRetries(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	l, err := NewRunLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	step := &plan.Node{ID: "db/deploy", Group: "db", Label: "deploy db"}
	l.StepStarted(step, time.Now())
	if _, err := os.Stat(l.Path("db")); err != nil {
		t.Errorf("no log after the component's first line: %v", err)
	}
	other := &plan.Node{ID: "web/deploy", Group: "web", Label: "deploy web"}
	if err := os.Rename(dir, dir+".away"); err != nil {
		t.Fatal(err)
	}
	l.Log(other, "while the folder is away", time.Now())
	l.Idle()
	if err := os.Rename(dir+".away", dir); err != nil {
		t.Fatal(err)
	}
	l.Log(other, "once it is back", time.Now())
	l.Idle()
	l.Log(other, "later", time.Now())
	if err := l.Close(); err == nil {
		t.Error("Close reported no error for a line that could not open its log")
	}
	data, err := os.ReadFile(l.Path("web"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "away") || !strings.Contains(string(data), "once it is back\n") || !strings.HasSuffix(string(data), "later\n") {
		t.Errorf("the log after a failed open:\n%s", data)
	}
}
