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
func (r *recorder) Log(n *plan.Node, line string, _ time.Time) {
	r.mu.Lock()
	r.logs = append(r.logs, n.ID+": "+line)
	r.mu.Unlock()
}

func result(s plan.Result) plan.Runner {
	return plan.RunnerFunc(func(context.Context, plan.Env) plan.Result { return s })
}

// fnSpec is a step whose runner is in its spec: tests build plans of them.
type fnSpec struct{ run plan.Runner }

func (fnSpec) Kind() plan.Kind { return "test" }

func fn(r plan.Runner) plan.Spec { return fnSpec{r} }

var testBinder = BinderFunc(func(n *plan.Node) (plan.Runner, error) {
	s, ok := n.Spec.(fnSpec)
	if !ok {
		return nil, fmt.Errorf("no runner for %T", n.Spec)
	}
	return s.run, nil
})

// mustRun runs a plan whose steps are fnSpecs.
func mustRun(ctx context.Context, p *plan.Plan, opts Options) *Outcome {
	o, err := Run(ctx, p, testBinder, opts)
	if err != nil {
		panic(err)
	}
	return o
}

// connect adds an edge the test knows to be fine.
func connect(p *plan.Plan, from, to string, kind plan.EdgeKind) {
	if err := p.Connect(from, to, kind); err != nil {
		panic(err)
	}
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
		p.Add(&plan.Node{ID: id, Label: id, Group: group, Spec: fn(r)})
	}
	for _, e := range edges {
		if a, b, ok := strings.Cut(e, ">"); ok {
			connect(p, a, b, plan.OnSuccess)
		} else if a, b, ok := strings.Cut(e, "!"); ok {
			connect(p, a, b, plan.OnFailure)
		}
	}
	return p
}

func statuses(o *Outcome, ids ...string) string {
	var parts []string
	for _, id := range ids {
		r := o.Results[id]
		s := id + "=" + r.Status.String()
		if r.Soft() {
			s += "(soft)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func TestSequentialFollowsPlanOrder(t *testing.T) {
	rec := &recorder{}
	p := build([]string{"c", "b", "a", "d"}, []string{"a>d"}, nil)
	mustRun(context.Background(), p, Options{Parallel: 1, Observer: rec})
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
			runners: map[string]plan.Runner{"begin": result(plan.Skip(plan.CauseByDesign, "requires vault"))},
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
			o := mustRun(context.Background(), p, Options{Parallel: 4})
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
	o := mustRun(context.Background(), p, Options{})
	if r := o.Results["c"]; r.Reason != "a failed" {
		t.Errorf("the skip reason should name the root cause, got %q", r.Reason)
	}
}

func TestCriticalFailureStopsNewWork(t *testing.T) {
	release := make(chan struct{})
	slow := plan.RunnerFunc(func(context.Context, plan.Env) plan.Result { <-release; return plan.Ok() })
	failNow := plan.RunnerFunc(func(context.Context, plan.Env) plan.Result {
		return plan.Fail(errors.New("boom"))
	})
	// afail is light, so the engine runs it inline once it has taken in a's
	// failure: releasing b1 from there (not from a itself) means b1 cannot
	// finish, and b2 and d cannot start, before the engine knows a failed.
	afailRelease := plan.RunnerFunc(func(context.Context, plan.Env) plan.Result {
		close(release)
		return plan.Ok()
	})
	mk := func(force bool) *Outcome {
		release = make(chan struct{})
		p := plan.New("s", "deploy")
		p.Add(&plan.Node{ID: "b1", Group: "b", Spec: fn(slow)})
		p.Add(&plan.Node{ID: "a", Group: "a", Critical: true, Spec: fn(failNow)})
		p.Add(&plan.Node{ID: "b2", Group: "b", Spec: fn(result(plan.Ok()))})
		p.Add(&plan.Node{ID: "c", Group: "c", Spec: fn(result(plan.Ok()))})
		p.Add(&plan.Node{ID: "afail", Group: "a", Always: true, Light: true, Spec: fn(afailRelease)})
		connect(p, "b1", "b2", plan.OnSuccess)
		connect(p, "a", "c", plan.OnSuccess)
		connect(p, "a", "afail", plan.OnFailure)
		// d is independent of a but not started yet when a fails.
		p.Add(&plan.Node{ID: "d", Group: "d", Spec: fn(result(plan.Ok()))})
		connect(p, "b2", "d", plan.OnSuccess)
		return mustRun(context.Background(), p, Options{Parallel: 2, Force: force})
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
	o := mustRun(ctx, p, Options{})
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
			p.Add(&plan.Node{ID: id, Group: id, Spec: fn(plan.RunnerFunc(func(context.Context, plan.Env) plan.Result {
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
			}))})
		}
		for i := 1; i < n; i++ {
			for k := 0; k < 3; k++ {
				j := rng.Intn(i)
				connect(p, fmt.Sprint(j), fmt.Sprint(i), plan.OnSuccess)
			}
		}
		o := mustRun(context.Background(), p, Options{Parallel: par})
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

// finishWatch closes a channel when a step finishes.
type finishWatch struct {
	recorder
	id   string
	done chan struct{}
}

func (f *finishWatch) StepFinished(n *plan.Node, _ plan.Result, _, _ time.Time) {
	if n.ID == f.id {
		close(f.done)
	}
}

// TestPauseHoldsBackNewSteps: while a step pauses the run (a prompt), a step
// that becomes ready meanwhile does not start. Synchronised by channels: the
// step "wait" ends only once the gate is inside its pause, and the gate
// answers only once "wait" has ended, so "other" is ready during the pause.
func TestPauseHoldsBackNewSteps(t *testing.T) {
	var order []string
	var mu sync.Mutex
	note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	inPause := make(chan struct{})
	watch := &finishWatch{id: "wait", done: make(chan struct{})}
	waitStarted := make(chan struct{})
	gate := plan.RunnerFunc(func(_ context.Context, env plan.Env) plan.Result {
		// A pause taken before "wait" starts would hold it back too, and
		// nothing would ever end the pause.
		<-waitStarted
		_ = env.Pause(func() error {
			close(inPause)
			<-watch.done
			note("gate answered")
			return nil
		})
		return plan.Ok()
	})
	wait := plan.RunnerFunc(func(context.Context, plan.Env) plan.Result {
		close(waitStarted)
		<-inPause
		return plan.Ok()
	})
	other := plan.RunnerFunc(func(context.Context, plan.Env) plan.Result { note("other ran"); return plan.Ok() })
	p := plan.New("s", "deploy")
	p.Add(&plan.Node{ID: "gate", Group: "a", Spec: fn(gate)})
	p.Add(&plan.Node{ID: "wait", Group: "b", Spec: fn(wait)})
	p.Add(&plan.Node{ID: "other", Group: "b", Spec: fn(other)})
	connect(p, "wait", "other", plan.OnSuccess)
	mustRun(context.Background(), p, Options{Parallel: 4, Observer: watch})
	if diff := cmp.Diff([]string{"gate answered", "other ran"}, order); diff != "" {
		t.Errorf("a step started during a pause (-want +got):\n%s", diff)
	}
}

// TestCyclicPlanIsAnError: a plan cannot be given a cycle, and a plan whose
// steps can never become ready is an error, not a hang.
func TestCyclicPlanIsAnError(t *testing.T) {
	p := build([]string{"a", "b"}, []string{"a>b"}, nil)
	if err := p.Connect("b", "a", plan.OnSuccess); err == nil {
		t.Fatal("the plan took an edge that closes a cycle")
	}
	// Inputs that do not come before the step are refused before anything runs.
	p.Node("a").Inputs = []string{"b"}
	ran := false
	p.Node("b").Spec = fn(plan.RunnerFunc(func(context.Context, plan.Env) plan.Result { ran = true; return plan.Ok() }))
	if _, err := Run(context.Background(), p, testBinder, Options{}); err == nil || !strings.Contains(err.Error(), "does not come before") {
		t.Errorf("got %v", err)
	}
	if ran {
		t.Error("a step ran although the plan is not valid")
	}
}

func TestStepWithoutRunnerRunsNothing(t *testing.T) {
	p := build([]string{"a", "b"}, []string{"a>b"}, nil)
	p.Node("b").Spec = plan.Setup{}
	if _, err := Run(context.Background(), p, testBinder, Options{}); err == nil || !strings.Contains(err.Error(), "step b: no runner") {
		t.Errorf("got %v", err)
	}
}

// TestInputsReachTheirReaders: a step reads the results and data of the
// steps it names as inputs, whatever they ended with.
func TestInputsReachTheirReaders(t *testing.T) {
	var got []string
	reader := plan.RunnerFunc(func(_ context.Context, env plan.Env) plan.Result {
		a, b := env.Result("a"), env.Result("b")
		got = append(got, fmt.Sprint(a.Data), b.Status.String(), b.Cause.String())
		return plan.Ok()
	})
	p := build([]string{"a:g", "b:g", "end:g"}, []string{"a>b"}, map[string]plan.Runner{
		"a":   result(plan.OkWith(42)),
		"b":   result(plan.Skip(plan.CauseUnchanged, "unchanged")),
		"end": reader,
	})
	connect(p, "b", "end", plan.OnComplete)
	p.Node("end").Inputs = []string{"a", "b"}
	p.Node("end").Always = true
	mustRun(context.Background(), p, Options{})
	if diff := cmp.Diff([]string{"42", "skipped", "unchanged"}, got); diff != "" {
		t.Errorf("inputs (-want +got):\n%s", diff)
	}
}

func TestOutputLines(t *testing.T) {
	rec := &recorder{}
	p := build([]string{"a"}, nil, map[string]plan.Runner{"a": plan.RunnerFunc(func(_ context.Context, env plan.Env) plan.Result {
		out, errs := env.Stream(), env.Stream()
		fmt.Fprint(out, "one\ntwo\r\nthr")
		// A partial line of one stream is not glued to a line of another.
		fmt.Fprint(errs, "\x1b[31m")
		fmt.Fprint(out, "ee\nno newline")
		env.Logf("note %d", 1)
		return plan.Ok()
	})})
	mustRun(context.Background(), p, Options{Observer: rec})
	if diff := cmp.Diff([]string{"a: one", "a: two", "a: three", "a: note 1", "a: no newline", "a: \x1b[31m"}, rec.logs); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

func TestPanicBecomesFailure(t *testing.T) {
	p := build([]string{"a"}, nil, map[string]plan.Runner{"a": plan.RunnerFunc(func(context.Context, plan.Env) plan.Result { panic("oops") })})
	o := mustRun(context.Background(), p, Options{})
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
		p.Add(&plan.Node{ID: c + "/begin", Group: c, Spec: fn(result(plan.Ok()))})
		p.Add(&plan.Node{ID: c + "/deploy", Group: c, Spec: fn(result(plan.Ok()))})
		p.Add(&plan.Node{ID: c + "/end", Group: c, Light: true, Spec: fn(result(plan.Ok()))})
		connect(p, c+"/begin", c+"/deploy", plan.OnSuccess)
		connect(p, c+"/deploy", c+"/end", plan.OnSuccess)
	}
	connect(p, "a/end", "c/begin", plan.OnSuccess)
	mustRun(context.Background(), p, Options{Parallel: 1, Observer: rec})
	want := []string{"a/begin", "a/deploy", "a/end", "b/begin", "b/deploy", "b/end", "c/begin", "c/deploy", "c/end"}
	if diff := cmp.Diff(want, rec.started); diff != "" {
		t.Errorf("start order (-want +got):\n%s", diff)
	}
}

// TestFailedStepNamedByItsSaidLabel: the skips and the stop a failed step
// causes name it by the label it said with its values expanded
// (Result.Label), as its own lines do, and by the plan's when it said none.
func TestFailedStepNamedByItsSaidLabel(t *testing.T) {
	tests := []struct {
		name, said, skip, halted string
	}{
		{"said", "gate: Approve app", "step gate: Approve app failed", "the run stopped after gate: Approve app failed"},
		{"not said", "", "step gate: Approve {{.component}} failed", "the run stopped after gate: Approve {{.component}} failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fail := plan.Fail(errors.New("needs approval"))
			fail.Label = tt.said
			p := plan.New("s", "deploy")
			p.Add(&plan.Node{ID: "gate", Label: "gate: Approve {{.component}}", Critical: true, Spec: fn(result(fail))})
			p.Add(&plan.Node{ID: "after", Label: "delay 1s", Spec: fn(result(plan.Ok()))})
			p.Add(&plan.Node{ID: "other", Label: "other", Spec: fn(result(plan.Ok()))})
			connect(p, "gate", "after", plan.OnSuccess)
			connect(p, "after", "other", plan.OnComplete)
			o := mustRun(context.Background(), p, Options{Parallel: 1})
			if got := o.Results["after"].Reason; got != tt.skip {
				t.Errorf("skip reason %q, want %q", got, tt.skip)
			}
			if got, want := o.HaltedBy, strings.TrimSuffix(strings.TrimPrefix(tt.halted, "the run stopped after "), " failed"); got != want {
				t.Errorf("halted by %q, want %q", got, want)
			}
			if got := o.Results["other"].Reason; got != "not started: "+tt.halted {
				t.Errorf("stopped step's reason %q, want %q", got, "not started: "+tt.halted)
			}
		})
	}
}

// TestCancellationSeenAtTheEnd: an interrupt that comes with the run's
// last completions — here a light step, run inline, that the interrupt
// fails — marks the run cancelled even though the loop never waited after
// it; a run that ended well when the interrupt came stays not cancelled.
func TestCancellationSeenAtTheEnd(t *testing.T) {
	for _, tt := range []struct {
		name   string
		result plan.Result
		want   bool
	}{
		{"failed by the interrupt", plan.Fail(context.Canceled), true},
		{"ended well", plan.Ok(), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			last := plan.RunnerFunc(func(context.Context, plan.Env) plan.Result {
				cancel()
				return tt.result
			})
			p := plan.New("s", "deploy")
			p.Add(&plan.Node{ID: "last", Light: true, Spec: fn(last)})
			if o := mustRun(ctx, p, Options{}); o.Cancelled != tt.want {
				t.Errorf("cancelled %v, want %v", o.Cancelled, tt.want)
			}
		})
	}
}
