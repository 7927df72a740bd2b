package ui

import (
	"bytes"
	"errors"
	"regexp"
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
	d.Log(asker, "Migrate the database now? [y/N]")
	d.Log(chatty, "chatty line 1")
	d.Log(broken, "broken line 1")
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
	d.Log(asker, "y")
	d.Paused(false)
	d.Log(chatty, "chatty line 2")
	d.Idle()
	if got, want := buf.String(), "[c00] y\n[c01] chatty line 1\n[c01] ✓ deploy c01 (0ms)\n[c01] chatty line 2\n"; got != want {
		t.Errorf("after the answer: got %q, want %q", got, want)
	}
}
