package pgstate

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/state/pgstate/pgtest"
)

// TestWorkflowHoldsTheLock: a run handed to a workflow (docs/temporal.md)
// holds the state without its client: workers write through the run's
// writer; a local run is refused naming the workflow; a client attaches
// when none is, and a second is refused naming the first; unlock does not
// break it; once the workflow gives it back, the run's writes are refused
// and the stack is free.
func TestWorkflowHoldsTheLock(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	client := open(t, url, "demo")
	l, err := client.Lock(ctx, holder("r1"), state.LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.HandOver(ctx, "r1", "gantry:demo", holder("r1"), []byte("bundle")); err != nil {
		t.Fatal(err)
	}
	if b, err := open(t, url, "demo").Bundle(ctx, "r1"); err != nil || string(b) != "bundle" {
		t.Fatalf("bundle %q, %v", b, err)
	}
	// The client goes away (its session ends): the workflow's row stays.
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	worker := open(t, url, "demo")
	w, err := worker.RunWriter("r1")
	if err != nil {
		t.Fatal(err)
	}
	rec := state.RecordShared(w, state.New("demo"))
	// The run's setup writes the stack's fields first.
	rec.UpdateStack(func(st *state.State) { st.LastRun = "r1" })
	if err := rec.Wait(rec.UpdateComponent("db", func(c *state.Component) { c.Status = state.StatusDeployed })); err != nil {
		t.Fatalf("a worker's write: %v", err)
	}
	var le *state.LockedError
	if _, err := open(t, url, "demo").Lock(ctx, holder("r2"), state.LockOptions{}); !errors.As(err, &le) || le.Holder == nil || le.Holder.Workflow != "gantry:demo" {
		t.Fatalf("a local run while the workflow holds the state: %v", err)
	}
	if _, err := open(t, url, "demo").Unlock(ctx); !errors.As(err, &le) {
		t.Fatalf("unlock broke the workflow's lock: %v", err)
	}
	c2 := open(t, url, "demo")
	l2, run, err := c2.LockClient(ctx, holder("r3"), state.LockOptions{})
	if err != nil || run == nil || run.RunID != "r1" || run.Workflow != "gantry:demo" {
		t.Fatalf("a client attaching: %v, %+v", err, run)
	}
	if _, _, err := open(t, url, "demo").LockClient(ctx, holder("r4"), state.LockOptions{}); !errors.As(err, &le) || le.Holder == nil || le.Holder.PID != 1 || le.Holder.Workflow != "gantry:demo" {
		t.Fatalf("a second client: %v", err)
	}
	// Log lines, in order.
	if err := worker.AppendLines(ctx, "r1", []Line{{Step: "db/deploy", Body: "one"}, {Step: "db/deploy", Body: "two"}, {Step: "web/deploy", Kind: 1, Body: "x=1"}}); err != nil {
		t.Fatal(err)
	}
	lines, err := c2.Lines(ctx, "r1", 0, 2)
	if err != nil || len(lines) != 2 || lines[0].Body != "one" || lines[1].Body != "two" {
		t.Fatalf("lines %+v, %v", lines, err)
	}
	more, err := c2.Lines(ctx, "r1", lines[1].Seq, 10)
	if err != nil || len(more) != 1 || more[0].Kind != 1 || more[0].Step != "web/deploy" {
		t.Fatalf("more lines %+v, %v", more, err)
	}
	// The workflow ends.
	if err := worker.ReleaseWorkflow(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if err := rec.Wait(rec.UpdateComponent("db", func(c *state.Component) { c.Reason = "late" })); err == nil {
		t.Fatal("a write after the workflow gave the lock back went through")
	}
	_ = rec.Close()
	if err := l2.Release(); err != nil {
		t.Fatal(err)
	}
	l3, err := open(t, url, "demo").Lock(ctx, holder("r5"), state.LockOptions{})
	if err != nil {
		t.Fatalf("the stack is not free after the workflow: %v", err)
	}
	_ = l3.Release()
	if _, err := worker.Bundle(ctx, "r1"); err == nil {
		t.Fatal("the bundle outlived its run")
	}
}

// TestAttachKeepsTheRunStart: each client attaching to a workflow's run
// after the one before died is told the run's start (its first client's
// since), not the previous attach's: its duration counts from there.
func TestAttachKeepsTheRunStart(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	first := holder("r1")
	client := open(t, url, "demo")
	l, err := client.Lock(ctx, first, state.LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.HandOver(ctx, "r1", "gantry:demo", first, []byte("bundle")); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	for i, run := range []string{"r2", "r3", "r4"} {
		h := holder(run)
		h.Since = first.Since.Add(time.Duration(i+1) * time.Minute)
		l, wf, err := open(t, url, "demo").LockClient(ctx, h, state.LockOptions{})
		if err != nil || wf == nil {
			t.Fatalf("client %d attaching: %v, %+v", i+2, err, wf)
		}
		if !wf.Holder.Since.Equal(first.Since) {
			t.Errorf("client %d attaching: the run started %s, want %s (the first client's)", i+2, wf.Holder.Since, first.Since)
		}
		if err := l.Release(); err != nil {
			t.Fatal(err)
		}
	}
}
