package ui

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
)

// TestPlainHoldsOthersWhileAsking: on the plain display (a dumb terminal,
// deploy | tee), while a step asks something, other components' lines are
// held until the answer, so that the question stays the last line with the
// answer typed under it; a failure is written at once, after its
// component's lines held, with the question again below it.
func TestPlainHoldsOthersWhileAsking(t *testing.T) {
	p := livePlan(3, false)
	var buf bytes.Buffer
	d := NewPlain(&buf, Style{})
	now := time.Now()
	asker, chatty, broken := p.Node("c00/deploy"), p.Node("c01/deploy"), p.Node("c02/deploy")
	d.Paused(true)
	d.Note(asker, plan.Note{Kind: plan.NoteAsking})
	d.Log(asker, "Migrate the database now? [y/N]", time.Now())
	d.Log(chatty, "chatty line 1", time.Now())
	d.Log(broken, "broken line 1", time.Now())
	d.StepFinished(chatty, plan.Ok(), now, now)
	const question = "[c00] Migrate the database now? [y/N]\n"
	if got := buf.String(); got != question {
		t.Errorf("while a step asks, want only its question; got %q", got)
	}
	d.StepFinished(broken, plan.Fail(errors.New("exit 1")), now, now)
	if got := buf.String(); !regexp.MustCompile(`^` + regexp.QuoteMeta(question) + `\[c02\] broken line 1\n\[c02\] ✗ deploy c02 failed \(0ms\): exit 1\n` + regexp.QuoteMeta(question) + `$`).MatchString(got) {
		t.Errorf("a failure while a step asks: want it at once, then the question again; got %q", got)
	}
	buf.Reset()
	d.Log(asker, "y", time.Now())
	d.Paused(false)
	d.Log(chatty, "chatty line 2", time.Now())
	d.Idle()
	if got, want := buf.String(), "[c00] y\n[c01] chatty line 1\n[c01] ✓ deploy c01 (0ms)\n[c01] chatty line 2\n"; got != want {
		t.Errorf("after the answer: got %q, want %q", got, want)
	}
}

// TestPlainHoldsBoundedWhileAsking: what a chatty component prints while a
// question waits is held up to maxHeld only (it held 3 million lines, 1 GB,
// in a review's run); the rest is counted and said, pointing to the log.
func TestPlainHoldsBoundedWhileAsking(t *testing.T) {
	p := livePlan(2, false)
	var buf bytes.Buffer
	d := NewPlain(&buf, Style{})
	asker, chatty := p.Node("c00/deploy"), p.Node("c01/deploy")
	d.Paused(true)
	d.Note(asker, plan.Note{Kind: plan.NoteAsking})
	d.Log(asker, "Go on? [y/N]", time.Now())
	line := strings.Repeat("x", 1000)
	const lines = 3 * maxHeld / 1000
	for i := 0; i < lines; i++ {
		d.Log(chatty, line, time.Now())
	}
	if n := len(d.held); n == 0 || d.heldBytes > maxHeld {
		t.Fatalf("held %d lines, %d bytes; want at most %d bytes", n, d.heldBytes, maxHeld)
	}
	kept := len(d.held)
	buf.Reset()
	d.Paused(false)
	out := buf.String()
	if got := strings.Count(out, line); got != kept {
		t.Errorf("released %d lines, want the %d held", got, kept)
	}
	want := fmt.Sprintf("[c01] … %d more lines while a question waited, not shown here: they are in the run's log\n", lines-kept)
	if !strings.HasSuffix(out, want) {
		t.Errorf("the release does not end with %q:\n…%s", want, out[max(0, len(out)-200):])
	}
	if len(d.held) != 0 || d.heldBytes != 0 || len(d.dropped) != 0 {
		t.Errorf("after the release: %d held, %d bytes, %v dropped", len(d.held), d.heldBytes, d.dropped)
	}
}
