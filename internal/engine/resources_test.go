package engine

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/gantry-dev/gantry/internal/plan"
)

// holdPlan adds a component-like group: begin, a step that takes res, a
// step after it, and a light end (always) that frees res.
func holdPlan(p *plan.Plan, group, res string, runners map[string]plan.Runner) {
	get := func(id string) plan.Spec {
		if r := runners[id]; r != nil {
			return fn(r)
		}
		return fn(result(plan.Ok()))
	}
	begin, verb, post, end := group+"/begin", group+"/verb", group+"/post", group+"/end"
	p.Add(&plan.Node{ID: begin, Label: begin, Group: group, Spec: get(begin)})
	p.Add(&plan.Node{ID: verb, Label: verb, Group: group, Takes: []string{res}, Spec: get(verb)})
	p.Add(&plan.Node{ID: post, Label: post, Group: group, Spec: get(post)})
	p.Add(&plan.Node{ID: end, Label: end, Group: group, Light: true, Always: true, Frees: []string{res}, Spec: get(end)})
	connect(p, begin, verb, plan.OnSuccess)
	connect(p, verb, post, plan.OnSuccess)
	connect(p, post, end, plan.OnComplete)
}

// spans notes, in the order the engine sees them, when groups take and free
// a resource, and fails on an overlap.
type spans struct {
	mu      sync.Mutex
	holding string
	order   []string
	overlap []string
}

func (s *spans) enter(g string) plan.Runner {
	return plan.RunnerFunc(func(context.Context, plan.Env) plan.Result {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.holding != "" {
			s.overlap = append(s.overlap, g+" while "+s.holding)
		}
		s.holding = g
		s.order = append(s.order, "take "+g)
		return plan.Ok()
	})
}

func (s *spans) leave(g string) plan.Runner {
	return plan.RunnerFunc(func(context.Context, plan.Env) plan.Result {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.holding == g {
			s.holding = ""
			s.order = append(s.order, "free "+g)
		}
		return plan.Ok()
	})
}

// TestResourceKeepsGroupsApart: two groups that take the same resource never
// overlap, whatever --parallel, while a group that takes nothing runs beside
// them; the step that waits takes no slot, so with --parallel 2 the
// independent group starts while a holds the resource and b waits (a's step
// returns only once that group has started: were b's waiting step to keep
// a slot, this test would never end).
func TestResourceKeepsGroupsApart(t *testing.T) {
	for _, par := range []int{1, 2, 4} {
		s := &spans{}
		cStarted, aTook := make(chan struct{}), make(chan struct{})
		runners := map[string]plan.Runner{
			// b comes to the resource only once a holds it.
			"b/begin": plan.RunnerFunc(func(context.Context, plan.Env) plan.Result { <-aTook; return plan.Ok() }),
			"a/verb": plan.RunnerFunc(func(ctx context.Context, env plan.Env) plan.Result {
				s.enter("a").Run(ctx, env)
				close(aTook)
				if par > 1 {
					<-cStarted
				}
				return plan.Ok()
			}),
			"a/end":  s.leave("a"),
			"b/verb": s.enter("b"),
			"b/end":  s.leave("b"),
		}
		p := plan.New("s", "deploy")
		holdPlan(p, "a", "dir:/x", runners)
		holdPlan(p, "b", "dir:/x", runners)
		p.Add(&plan.Node{ID: "c", Label: "c", Group: "c", Spec: fn(plan.RunnerFunc(func(context.Context, plan.Env) plan.Result {
			if par > 1 {
				close(cStarted)
			}
			return plan.Ok()
		}))})
		o := mustRun(context.Background(), p, Options{Parallel: par})
		if got := statuses(o, "a/verb", "a/end", "b/verb", "b/end", "c"); got != "a/verb=ok a/end=ok b/verb=ok b/end=ok c=ok" {
			t.Errorf("--parallel %d: %s", par, got)
		}
		if len(s.overlap) > 0 {
			t.Errorf("--parallel %d: groups overlapped on the resource: %v", par, s.overlap)
		}
		if got, want := strings.Join(s.order, ", "), "take a, free a, take b, free b"; got != want {
			t.Errorf("--parallel %d: order %q, want %q", par, got, want)
		}
	}
}

// TestResourceFreedBySkipsAndOnlyByItsGroup: a group that fails frees what it
// took through its end (always); the end of a group that never took the
// resource does not free another group's hold.
func TestResourceFreedBySkipsAndOnlyByItsGroup(t *testing.T) {
	s := &spans{}
	yEnded := make(chan struct{})
	runners := map[string]plan.Runner{
		// x holds the resource until y's end (which frees nothing) has run.
		"x/verb": plan.RunnerFunc(func(ctx context.Context, env plan.Env) plan.Result {
			s.enter("x").Run(ctx, env)
			<-yEnded
			return plan.Fail(errors.New("boom"))
		}),
		"x/end":   s.leave("x"),
		"y/begin": result(plan.Fail(errors.New("y cannot start"))),
		"y/end": plan.RunnerFunc(func(context.Context, plan.Env) plan.Result {
			close(yEnded)
			return plan.Ok()
		}),
		"z/verb": s.enter("z"),
		"z/end":  s.leave("z"),
	}
	p := plan.New("s", "deploy")
	holdPlan(p, "x", "dir:/x", runners)
	holdPlan(p, "y", "dir:/x", runners)
	holdPlan(p, "z", "dir:/x", runners)
	o := mustRun(context.Background(), p, Options{Parallel: 4})
	if got, want := statuses(o, "x/verb", "x/post", "y/verb", "z/verb"), "x/verb=failed x/post=skipped y/verb=skipped z/verb=ok"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if len(s.overlap) > 0 {
		t.Errorf("z took the resource while x held it: %v", s.overlap)
	}
}

// TestPlanRefusesUnfreedResources: a resource no step of the taker's group
// frees, or a light step that takes one, is a plan error before anything
// runs.
func TestPlanRefusesUnfreedResources(t *testing.T) {
	p := plan.New("s", "deploy")
	p.Add(&plan.Node{ID: "a", Group: "a", Takes: []string{"dir:/x"}, Spec: fn(result(plan.Ok()))})
	p.Add(&plan.Node{ID: "b", Group: "b", Frees: []string{"dir:/x"}, Spec: fn(result(plan.Ok()))})
	p.Add(&plan.Node{ID: "l", Group: "b", Light: true, Takes: []string{"dir:/y"}, Frees: []string{"dir:/y"}, Spec: fn(result(plan.Ok()))})
	_, err := Run(context.Background(), p, testBinder, Options{})
	if err == nil || !strings.Contains(err.Error(), "step a takes dir:/x, which no step of its group frees") ||
		!strings.Contains(err.Error(), "step l is light but takes dir:/y") {
		t.Fatalf("got %v", err)
	}
}

// TestOutsideGivesTheSlotBack: a step waiting outside the run lets another
// step run in its slot, and takes a slot again before it goes on; a step
// outside is not a plan that cannot go on.
func TestOutsideGivesTheSlotBack(t *testing.T) {
	var mu sync.Mutex
	var inSlot, peak int
	enter := func() {
		mu.Lock()
		inSlot++
		peak = max(peak, inSlot)
		mu.Unlock()
	}
	leave := func() { mu.Lock(); inSlot--; mu.Unlock() }
	bRan := make(chan struct{})
	a := plan.RunnerFunc(func(_ context.Context, env plan.Env) plan.Result {
		enter()
		leave()
		_ = env.Outside(func() error { <-bRan; return nil })
		enter()
		leave()
		return plan.Ok()
	})
	b := plan.RunnerFunc(func(context.Context, plan.Env) plan.Result {
		enter()
		defer leave()
		close(bRan)
		return plan.Ok()
	})
	p := build([]string{"a:a", "b:b"}, nil, map[string]plan.Runner{"a": a, "b": b})
	o := mustRun(context.Background(), p, Options{Parallel: 1})
	if got := statuses(o, "a", "b"); got != "a=ok b=ok" {
		t.Errorf("got %s", got)
	}
	if peak > 1 {
		t.Errorf("%d steps held a slot at once with --parallel 1", peak)
	}
	for i := 0; i < 200; i++ {
		quick := plan.RunnerFunc(func(_ context.Context, env plan.Env) plan.Result {
			_ = env.Outside(func() error { return nil })
			return plan.Ok()
		})
		if _, err := Run(context.Background(), build([]string{"q:q"}, nil, map[string]plan.Runner{"q": quick}), testBinder, Options{Parallel: 1}); err != nil {
			t.Fatalf("a step outside the run was taken for a stuck plan: %v", err)
		}
	}
}
