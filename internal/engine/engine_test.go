package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/plan"
)

// recorder is an Observer that keeps the order steps started in.
type recorder struct {
	mu      sync.Mutex
	started []string
	logs    []string
}

func (r *recorder) StepStarted(n *plan.Node, _ time.Time) {
	r.mu.Lock()
	r.started = append(r.started, n.ID)
	r.mu.Unlock()
}
func (r *recorder) StepFinished(*plan.Node, plan.Result, time.Time, time.Time) {}
func (r *recorder) Note(*plan.Node, plan.Note)                                 {}
func (r *recorder) Log(n *plan.Node, line string) {
	r.mu.Lock()
	r.logs = append(r.logs, n.ID+": "+line)
	r.mu.Unlock()
}

func result(s plan.Result) plan.Runner {
	return plan.RunnerFunc(func(context.Context, plan.Env) plan.Result { return s })
}

// build makes a plan from "id:group" node specs and "a>b" (success) or "a!b"
// (failure) edges; every node succeeds unless runners says otherwise.
func build(nodes []string, edges []string, runners map[string]plan.Runner) *plan.Plan {
	p := plan.New("test", "deploy")
	for _, spec := range nodes {
		id, group, _ := strings.Cut(spec, ":")
		r := runners[id]
		if r == nil {
			r = result(plan.Ok())
		}
		p.Add(&plan.Node{ID: id, Label: id, Group: group, Runner: r})
	}
	for _, e := range edges {
		if a, b, ok := strings.Cut(e, ">"); ok {
			p.Connect(a, b, plan.OnSuccess)
		} else if a, b, ok := strings.Cut(e, "!"); ok {
			p.Connect(a, b, plan.OnFailure)
		}
	}
	return p
}

func statuses(o *Outcome, ids ...string) string {
	var parts []string
	for _, id := range ids {
		r := o.Results[id]
		s := id + "=" + r.Status.String()
		if r.Status == plan.Skipped && r.Soft {
			s += "(soft)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func TestSequentialFollowsPlanOrder(t *testing.T) {
	rec := &recorder{}
	p := build([]string{"c", "b", "a", "d"}, []string{"a>d"}, nil)
	Run(context.Background(), p, Options{Parallel: 1, Observer: rec})
	if diff := cmp.Diff([]string{"c", "b", "a", "d"}, rec.started); diff != "" {
		t.Errorf("start order (-want +got):\n%s", diff)
	}
}

func TestFailurePathAndSkips(t *testing.T) {
	boom := result(plan.Fail(errors.New("boom")))
	tests := []struct {
		name    string
		nodes   []string
		edges   []string
		runners map[string]plan.Runner
		want    string
	}{
		{
			name:    "a failed step skips the rest of its group and takes the failure path",
			nodes:   []string{"s1:c", "s2:c", "s3:c", "fail:c", "next:d"},
			edges:   []string{"s1>s2", "s2>s3", "s1!fail", "s2!fail", "s3!fail", "s3>next"},
			runners: map[string]plan.Runner{"s2": boom},
			want:    "s1=ok s2=failed s3=skipped fail=ok next=skipped",
		},
		{
			name:  "the failure path is not taken when nothing fails",
			nodes: []string{"s1:c", "fail:c"},
			edges: []string{"s1!fail"},
			want:  "s1=ok fail=skipped(soft)",
		},
		{
			name:    "a soft skip skips its group but not the next group",
			nodes:   []string{"begin:c", "deploy:c", "end:c", "next:d"},
			edges:   []string{"begin>deploy", "deploy>end", "end>next"},
			runners: map[string]plan.Runner{"begin": result(plan.Skip("requires vault", true))},
			want:    "begin=skipped(soft) deploy=skipped(soft) end=skipped(soft) next=ok",
		},
		{
			name:    "a hard skip travels on",
			nodes:   []string{"a:a", "b:b", "c:c"},
			edges:   []string{"a>b", "b>c"},
			runners: map[string]plan.Runner{"a": boom},
			want:    "a=failed b=skipped c=skipped",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := build(tt.nodes, tt.edges, tt.runners)
			o := Run(context.Background(), p, Options{Parallel: 4})
			var ids []string
			for _, n := range tt.nodes {
				id, _, _ := strings.Cut(n, ":")
				ids = append(ids, id)
			}
			if got := statuses(o, ids...); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	p := build([]string{"a:a", "b:b", "c:c"}, []string{"a>b", "b>c"}, map[string]plan.Runner{"a": boom})
	o := Run(context.Background(), p, Options{})
	if r := o.Results["c"]; r.Reason != "a failed" {
		t.Errorf("the skip reason should name the root cause, got %q", r.Reason)
	}
}

func TestCriticalFailureStopsNewWork(t *testing.T) {
	release := make(chan struct{})
	slow := plan.RunnerFunc(func(context.Context, plan.Env) plan.Result { <-release; return plan.Ok() })
	failNow := plan.RunnerFunc(func(context.Context, plan.Env) plan.Result {
		defer close(release)
		return plan.Fail(errors.New("boom"))
	})
	mk := func(force bool) *Outcome {
		release = make(chan struct{})
		p := plan.New("s", "deploy")
		p.Add(&plan.Node{ID: "b1", Group: "b", Runner: slow})
		p.Add(&plan.Node{ID: "a", Group: "a", Critical: true, Runner: failNow})
		p.Add(&plan.Node{ID: "b2", Group: "b", Runner: result(plan.Ok())})
		p.Add(&plan.Node{ID: "c", Group: "c", Runner: result(plan.Ok())})
		p.Add(&plan.Node{ID: "afail", Group: "a", Always: true, Light: true, Runner: result(plan.Ok())})
		p.Connect("b1", "b2", plan.OnSuccess)
		p.Connect("a", "c", plan.OnSuccess)
		p.Connect("a", "afail", plan.OnFailure)
		// d is independent of a but not started yet when a fails.
		p.Add(&plan.Node{ID: "d", Group: "d", Runner: result(plan.Ok())})
		p.Connect("b2", "d", plan.OnSuccess)
		return Run(context.Background(), p, Options{Parallel: 2, Force: force})
	}
	o := mk(false)
	if got, want := statuses(o, "a", "afail", "b1", "b2", "c", "d"), "a=failed afail=ok b1=ok b2=ok c=skipped d=skipped"; got != want {
		t.Errorf("without --force:\n got  %s\n want %s", got, want)
	}
	if !o.Failed || o.HaltedBy != "a" {
		t.Errorf("outcome: failed=%v haltedBy=%q", o.Failed, o.HaltedBy)
	}
	o = mk(true)
	if got, want := statuses(o, "a", "afail", "b1", "b2", "c", "d"), "a=failed afail=ok b1=ok b2=ok c=skipped d=ok"; got != want {
		t.Errorf("with --force:\n got  %s\n want %s", got, want)
	}
}

func TestCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	blocking := plan.RunnerFunc(func(ctx context.Context, _ plan.Env) plan.Result {
		cancel()
		<-ctx.Done()
		return plan.Fail(ctx.Err())
	})
	p := build([]string{"a:a", "afail:a", "b:b"}, []string{"a!afail", "a>b"}, map[string]plan.Runner{"a": blocking})
	p.Node("afail").Always = true
	o := Run(ctx, p, Options{})
	if got, want := statuses(o, "a", "afail", "b"), "a=failed afail=ok b=skipped"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if !o.Cancelled {
		t.Error("outcome not marked cancelled")
	}
}

// TestParallelLimitAndOrdering runs random DAGs and checks that no step starts
// before its dependencies ended and that no more than P run at once.
func TestParallelLimitAndOrdering(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for round := 0; round < 20; round++ {
		n := 50 + rng.Intn(150)
		par := 1 + rng.Intn(8)
		var running, peak atomic.Int64
		var mu sync.Mutex
		start, end := map[string]time.Time{}, map[string]time.Time{}
		p := plan.New("s", "deploy")
		for i := 0; i < n; i++ {
			id := fmt.Sprint(i)
			sleep := time.Duration(rng.Intn(300)) * time.Microsecond
			p.Add(&plan.Node{ID: id, Group: id, Runner: plan.RunnerFunc(func(context.Context, plan.Env) plan.Result {
				now := running.Add(1)
				for {
					old := peak.Load()
					if now <= old || peak.CompareAndSwap(old, now) {
						break
					}
				}
				mu.Lock()
				start[id] = time.Now()
				mu.Unlock()
				time.Sleep(sleep)
				mu.Lock()
				end[id] = time.Now()
				mu.Unlock()
				running.Add(-1)
				return plan.Ok()
			})})
		}
		for i := 1; i < n; i++ {
			for k := 0; k < 3; k++ {
				j := rng.Intn(i)
				p.Connect(fmt.Sprint(j), fmt.Sprint(i), plan.OnSuccess)
			}
		}
		o := Run(context.Background(), p, Options{Parallel: par})
		for _, e := range p.Edges {
			if start[e.To].Before(end[e.From]) {
				t.Fatalf("step %s started before its dependency %s ended", e.To, e.From)
			}
		}
		if peak.Load() > int64(par) {
			t.Fatalf("%d steps ran at once with --parallel %d", peak.Load(), par)
		}
		for id, r := range o.Results {
			if r.Status != plan.OK {
				t.Fatalf("step %s: %v", id, r.Status)
			}
		}
	}
}

func TestPauseHoldsBackNewSteps(t *testing.T) {
	var order []string
	var mu sync.Mutex
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	gate := plan.RunnerFunc(func(_ context.Context, env plan.Env) plan.Result {
		_ = env.Pause(func() error {
			time.Sleep(30 * time.Millisecond)
			note("gate answered")
			return nil
		})
		return plan.Ok()
	})
	other := plan.RunnerFunc(func(context.Context, plan.Env) plan.Result { note("other ran"); return plan.Ok() })
	p := plan.New("s", "deploy")
	p.Add(&plan.Node{ID: "gate", Group: "a", Runner: gate})
	p.Add(&plan.Node{ID: "wait", Group: "b", Runner: plan.RunnerFunc(func(context.Context, plan.Env) plan.Result {
		time.Sleep(10 * time.Millisecond)
		return plan.Ok()
	})})
	p.Add(&plan.Node{ID: "other", Group: "b", Runner: other})
	p.Connect("wait", "other", plan.OnSuccess)
	Run(context.Background(), p, Options{Parallel: 4})
	if diff := cmp.Diff([]string{"gate answered", "other ran"}, order); diff != "" {
		t.Errorf("a step started during a pause (-want +got):\n%s", diff)
	}
}

func TestOutputLines(t *testing.T) {
	rec := &recorder{}
	p := build([]string{"a"}, nil, map[string]plan.Runner{"a": plan.RunnerFunc(func(_ context.Context, env plan.Env) plan.Result {
		fmt.Fprint(env.Output(), "one\ntwo\r\nthr")
		fmt.Fprint(env.Output(), "ee\nno newline")
		env.Logf("note %d", 1)
		return plan.Ok()
	})})
	Run(context.Background(), p, Options{Observer: rec})
	if diff := cmp.Diff([]string{"a: one", "a: two", "a: three", "a: no newline", "a: note 1"}, rec.logs); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func TestPanicBecomesFailure(t *testing.T) {
	p := build([]string{"a"}, nil, map[string]plan.Runner{"a": plan.RunnerFunc(func(context.Context, plan.Env) plan.Result { panic("oops") })})
	o := Run(context.Background(), p, Options{})
	if r := o.Results["a"]; r.Status != plan.Failed || !strings.Contains(r.Reason, "oops") {
		t.Errorf("got %+v", r)
	}
}

// TestSequentialComponentPlans runs component-shaped plans (a begin step, the
// verb, a light end step) with --parallel 1: each component's steps run
// before the next component's begin, in plan order.
func TestSequentialComponentPlans(t *testing.T) {
	rec := &recorder{}
	p := plan.New("s", "deploy")
	for _, c := range []string{"a", "b", "c"} {
		p.Add(&plan.Node{ID: c + "/begin", Group: c, Runner: result(plan.Ok())})
		p.Add(&plan.Node{ID: c + "/deploy", Group: c, Runner: result(plan.Ok())})
		p.Add(&plan.Node{ID: c + "/end", Group: c, Light: true, Runner: result(plan.Ok())})
		p.Connect(c+"/begin", c+"/deploy", plan.OnSuccess)
		p.Connect(c+"/deploy", c+"/end", plan.OnSuccess)
	}
	p.Connect("a/end", "c/begin", plan.OnSuccess)
	Run(context.Background(), p, Options{Parallel: 1, Observer: rec})
	want := []string{"a/begin", "a/deploy", "a/end", "b/begin", "b/deploy", "b/end", "c/begin", "c/deploy", "c/end"}
	if diff := cmp.Diff(want, rec.started); diff != "" {
		t.Errorf("start order (-want +got):\n%s", diff)
	}
}
