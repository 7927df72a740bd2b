package engine_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/engine"
	"github.com/gantry-dev/gantry/internal/engine/enginetest"
	"github.com/gantry-dev/gantry/internal/plan"
)

// TestLocalExecutorIsTheScheduler: on random plans, with every step's
// outcome and duration scripted and a virtual clock, the local executor
// (goroutines, channels) starts the same steps in the same order, and ends
// them the same way, as the bare scheduler: its decisions are the
// scheduler's, nothing else.
func TestLocalExecutorIsTheScheduler(t *testing.T) {
	for seed := int64(0); seed < 300; seed++ {
		p, parallel, force := enginetest.RandomCase(seed, 12)
		local, err := enginetest.RunLocal(p, parallel, force)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		sim, err := enginetest.Simulate(p, parallel, force)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if local.Tie || sim.Tie {
			continue // two steps ended at once: either order is right
		}
		if diff := cmp.Diff(sim, local); diff != "" {
			t.Fatalf("seed %d (parallel %d, force %v): local executor (+) against the scheduler (-):\n%s", seed, parallel, force, diff)
		}
		if len(local.Statuses) != len(p.Nodes) {
			t.Fatalf("seed %d: %d steps ended of %d", seed, len(local.Statuses), len(p.Nodes))
		}
	}
}

// TestSchedulerReset: a group whose worker died starts over — its steps run
// again, its slot and resources are free — and a group whose finished steps
// another group read cannot.
func TestSchedulerReset(t *testing.T) {
	p := plan.New("s", plan.VerbDeploy)
	add := func(n *plan.Node) { n.Label, n.Spec = n.ID, enginetest.Spec{}; p.Add(n) }
	add(&plan.Node{ID: "a/begin", Group: "a", Takes: []string{"dir"}})
	add(&plan.Node{ID: "a/verb", Group: "a"})
	add(&plan.Node{ID: "a/end", Group: "a", Light: true, Always: true, Frees: []string{"dir"}})
	add(&plan.Node{ID: "b/begin", Group: "b", Takes: []string{"dir"}})
	add(&plan.Node{ID: "b/end", Group: "b", Light: true, Always: true, Frees: []string{"dir"}})
	for _, e := range [][2]string{{"a/begin", "a/verb"}, {"a/verb", "a/end"}} {
		if err := p.Connect(e[0], e[1], plan.OnSuccess); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Connect("b/begin", "b/end", plan.OnComplete); err != nil {
		t.Fatal(err)
	}
	s := engine.NewScheduler(p, engine.SchedulerOptions{Parallel: 2})
	next := func() engine.Decision {
		t.Helper()
		d, ok := s.Next()
		if !ok {
			t.Fatal("no decision")
		}
		return d
	}
	if d := next(); d.Kind != engine.Start || d.Step != 0 {
		t.Fatalf("first decision %+v, want a/begin to start", d)
	}
	// b/begin waits for the folder a holds.
	if d, ok := s.Next(); ok {
		t.Fatalf("decision %+v while b waits for the folder", d)
	}
	s.Finish(0, plan.Ok())
	if d := next(); d.Kind != engine.Start || d.Step != 1 {
		t.Fatalf("decision %+v, want a/verb to start", d)
	}
	// a's worker dies while a/verb runs: a starts over.
	if err := s.Reset("a"); err != nil {
		t.Fatal(err)
	}
	if s.Running() != 0 || s.Finished(0) {
		t.Fatalf("after the reset: %d running, a/begin finished %v", s.Running(), s.Finished(0))
	}
	if d := next(); d.Kind != engine.Start || d.Step != 0 {
		t.Fatalf("decision %+v after the reset, want a/begin to start again", d)
	}
	s.Finish(0, plan.Ok())
	if d := next(); d.Step != 1 {
		t.Fatalf("decision %+v, want a/verb", d)
	}
	s.Finish(1, plan.Ok())
	if d := next(); d.Step != 2 {
		t.Fatalf("decision %+v, want a/end", d)
	}
	s.Finish(2, plan.Ok())
	if d := next(); d.Step != 3 {
		t.Fatalf("decision %+v, want b/begin once a freed the folder", d)
	}
	s.Finish(3, plan.Ok())
	if err := s.Reset("a"); err != nil {
		t.Fatalf("a's steps were read by no other group: %v", err)
	}
	if d := next(); d.Step != 4 && d.Step != 0 {
		t.Fatalf("decision %+v", d)
	}

	// A group whose end another group has read cannot start over.
	q := plan.New("s", plan.VerbDeploy)
	addq := func(n *plan.Node) { n.Label, n.Spec = n.ID, enginetest.Spec{}; q.Add(n) }
	addq(&plan.Node{ID: "x/end", Group: "x"})
	addq(&plan.Node{ID: "y/begin", Group: "y"})
	if err := q.Connect("x/end", "y/begin", plan.OnSuccess); err != nil {
		t.Fatal(err)
	}
	qs := engine.NewScheduler(q, engine.SchedulerOptions{Parallel: 2})
	d, _ := qs.Next()
	qs.Finish(d.Step, plan.Ok())
	d, _ = qs.Next()
	if err := qs.Reset("x"); err == nil {
		t.Fatal("x started over after y read it")
	}
	qs.Finish(d.Step, plan.Ok())
	if !qs.Done() {
		t.Fatal("the refused reset changed the run")
	}
}
