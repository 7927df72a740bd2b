package ui

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
)

// TestLogLinesKeepTheTimeTheyWerePrinted: a step's line heard late (the
// display queue behind, a busy machine) keeps in the events and in the
// component's log the time it was printed, not the time it was written;
// it was stamped late, and the next step's events, forced not to go back
// in time, were pushed after it — a 12 ms step lasted 1 ms in the report.
func TestLogLinesKeepTheTimeTheyWerePrinted(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	step := &plan.Node{ID: "a/deploy", Group: "a", Component: "a", Kind: plan.KindComponent, Label: "deploy a"}
	other := &plan.Node{ID: "b/deploy", Group: "b", Component: "b", Kind: plan.KindComponent, Label: "deploy b"}

	var buf bytes.Buffer
	ev := NewEvents(&buf, "r1")
	ev.SetClock(func() time.Time { return t0.Add(time.Hour) }) // heard an hour late
	ev.Log(step, "printed", t0.Add(10*time.Millisecond))
	ev.StepStarted(other, t0.Add(20*time.Millisecond))
	ev.Flush()
	var times []time.Time
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var e struct{ Time time.Time }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatal(err)
		}
		times = append(times, e.Time)
	}
	if want := []time.Time{t0.Add(10 * time.Millisecond), t0.Add(20 * time.Millisecond)}; len(times) != 2 || !times[0].Equal(want[0]) || !times[1].Equal(want[1]) {
		t.Errorf("event times %v, want %v", times, want)
	}

	l, err := NewRunLog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l.StepStarted(step, t0)
	l.Log(step, "printed", t0.Add(10*time.Millisecond))
	l.StepFinished(step, plan.Result{Status: plan.OK}, t0, t0.Add(12*time.Millisecond))
	data := closedLog(t, l, "a")
	want := "2026-12-01T10:00:00.000Z ==> deploy a\n2026-12-01T10:00:00.010Z printed\n2026-12-01T10:00:00.012Z <== deploy a: ok (12ms)\n"
	if data != want {
		t.Errorf("log:\n%s\nwant\n%s", data, want)
	}
}

// TestRunLogTimesNeverGoBack: a line heard with a time before the last
// line of its file (an output noted when heard, after the step's end was
// queued with its own time) takes that line's time: the file reads in
// order.
func TestRunLogTimesNeverGoBack(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	step := &plan.Node{ID: "a/deploy", Group: "a", Component: "a", Kind: plan.KindComponent, Label: "deploy a"}
	l, err := NewRunLog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l.Log(step, "late", t0.Add(20*time.Millisecond))
	l.Log(step, "earlier", t0.Add(10*time.Millisecond))
	data := closedLog(t, l, "a")
	if want := "2026-12-01T10:00:00.020Z late\n2026-12-01T10:00:00.020Z earlier\n"; data != want {
		t.Errorf("log:\n%s\nwant\n%s", data, want)
	}
}

// TestHeldStartLineKeepsTheStepsStart: the start line of a step whose
// label names values, held back until the step says them, is written with
// the time the step started, as is an output with the time it was said:
// not when the display heard them.
func TestHeldStartLineKeepsTheStepsStart(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	step := &plan.Node{ID: "a/probe", Group: "a", Component: "a", Kind: plan.KindExec, Label: "probe ${host}", Spec: plan.Injected{}}
	l, err := NewRunLog(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	l.StepStarted(step, t0)
	l.Note(step, plan.Note{Kind: plan.NoteLabel, Value: "probe db.local", At: t0.Add(5 * time.Millisecond)})
	l.Note(step, plan.Note{Kind: plan.NoteOutput, Name: "a.url", Value: "http://a", At: t0.Add(7 * time.Millisecond)})
	l.StepFinished(step, plan.Result{Status: plan.OK}, t0, t0.Add(9*time.Millisecond))
	data := closedLog(t, l, "a")
	want := "2026-12-01T10:00:00.000Z ==> probe db.local\n2026-12-01T10:00:00.007Z output a.url = http://a\n2026-12-01T10:00:00.009Z <== probe db.local: ok (9ms)\n"
	if data != want {
		t.Errorf("log:\n%s\nwant\n%s", data, want)
	}
}

// closedLog closes l and returns what it wrote to group's log.
func closedLog(t *testing.T, l *RunLog, group string) string {
	t.Helper()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(l.Path(group))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
