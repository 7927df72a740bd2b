package temporal

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/gantry-dev/gantry/internal/engine/enginetest"
	"github.com/gantry-dev/gantry/internal/plan"
)

// runWorkflow runs a random plan's workflow in the SDK's test environment,
// on its virtual clock: each step's activity returns the step's scripted
// result after its scripted duration. out (nil: the script) gives another
// output for a step.
// newEnv is a test environment with the workflow and stand-ins for the
// activities, which tests mock.
func newEnv() *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	env := s.NewTestWorkflowEnvironment()
	// Wall-clock limits of the test environment, far above what a loaded
	// machine needs: the virtual clock is what the tests are about.
	env.SetTestTimeout(10 * time.Minute)
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: 10 * time.Minute})
	env.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName})
	env.RegisterActivityWithOptions(func(context.Context, StepInput) (StepOutput, error) { return StepOutput{}, nil }, activity.RegisterOptions{Name: ActivityStep})
	env.RegisterActivityWithOptions(func(context.Context, ReleaseInput) error { return nil }, activity.RegisterOptions{Name: ActivityRelease})
	return env
}

func runWorkflow(t *testing.T, p *plan.Plan, parallel int, force bool, out func(n *plan.Node) StepOutput, setup func(env *testsuite.TestWorkflowEnvironment)) (*enginetest.Trace, RunOutput) {
	t.Helper()
	env := newEnv()
	sk, err := SkeletonOf(p, func(*plan.Node) bool { return true }, func(*plan.Node) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range p.Nodes {
		script := enginetest.ScriptOf(n)
		o := StepOutput{Result: ResultOf(script.Result)}
		if out != nil {
			o = out(n)
		}
		id := n.ID
		env.OnActivity(ActivityStep, mock.Anything, mock.MatchedBy(func(in StepInput) bool { return in.Step == id })).
			After(script.Duration).Return(o, nil)
	}
	env.OnActivity(ActivityRelease, mock.Anything, mock.Anything).Return(nil)
	if setup != nil {
		setup(env)
	}
	env.ExecuteWorkflow(Workflow, RunInput{Stack: "random", RunID: "r1", Parallel: parallel, Force: force, Skeleton: sk})
	if !env.IsWorkflowCompleted() {
		t.Fatal("the workflow did not complete")
	}
	var ro RunOutput
	if err := env.GetWorkflowResult(&ro); err != nil {
		t.Fatal(err)
	}
	pr := progress(t, env)
	tr := &enginetest.Trace{Statuses: map[string]string{}, Failed: ro.Failed, HaltedBy: ro.HaltedBy}
	for _, e := range pr.Events {
		if !e.Finished && e.Log == "" {
			tr.Started = append(tr.Started, p.Nodes[e.Step].ID)
		}
	}
	for i, r := range ro.Results {
		if r.Status != plan.Pending {
			tr.Statuses[p.Nodes[i].ID] = enginetest.StatusOf(r.Plan())
		}
	}
	return tr, ro
}

// TestWorkflowOrderIsTheLocalOrder: on random plans, with every step's
// outcome and duration scripted and a virtual clock, the workflow starts
// the same steps in the same order, and ends them the same way, as the
// local executor: the ready order, --parallel, failure paths, soft skips,
// critical failures and aborts, --force, resources.
func TestWorkflowOrderIsTheLocalOrder(t *testing.T) {
	seeds := int64(60)
	if testing.Short() {
		seeds = 15
	}
	compared := 0
	for seed := int64(0); seed < seeds; seed++ {
		p, parallel, force := enginetest.RandomCase(seed, 10)
		local, err := enginetest.RunLocal(p, parallel, force)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if local.Tie {
			continue
		}
		wf, _ := runWorkflow(t, p, parallel, force, nil, nil)
		if diff := cmp.Diff(local, wf); diff != "" {
			t.Fatalf("seed %d (parallel %d, force %v): workflow (+) against the local executor (-):\n%s", seed, parallel, force, diff)
		}
		compared++
	}
	t.Logf("%d random plans compared", compared)
	if compared < int(seeds)/2 {
		t.Fatalf("only %d of %d random plans compared (ties)", compared, seeds)
	}
}

// twoComponents is a plan of two components, a then b, each begin → verb →
// end, the way gantry builds them.
func twoComponents(verbSeconds int) *plan.Plan {
	p := plan.New("s", plan.VerbDeploy)
	add := func(n *plan.Node, d time.Duration) {
		n.Label = n.ID
		n.Spec = enginetest.Spec{Step: enginetest.Step{Result: plan.Ok(), Duration: d}}
		p.Add(n)
	}
	for _, c := range []string{"a", "b"} {
		add(&plan.Node{ID: c + "/begin", Kind: plan.KindBegin, Group: c, Component: c, Critical: true}, time.Second)
		add(&plan.Node{ID: c + "/deploy", Kind: plan.KindComponent, Group: c, Component: c, Critical: true, Inputs: []string{c + "/begin"}}, time.Duration(verbSeconds)*time.Second)
		add(&plan.Node{ID: c + "/end", Kind: plan.KindEnd, Group: c, Component: c, Light: true, Always: true, Inputs: []string{c + "/begin", c + "/deploy"}}, 0)
		for _, e := range [][2]string{{c + "/begin", c + "/deploy"}} {
			_ = p.Connect(e[0], e[1], plan.OnSuccess)
		}
		_ = p.Connect(c+"/begin", c+"/end", plan.OnComplete)
		_ = p.Connect(c+"/deploy", c+"/end", plan.OnComplete)
	}
	_ = p.Connect("a/end", "b/begin", plan.OnSuccess)
	return p
}

// TestComponentStepsGoToTheirHost: a component's first step goes to the
// shared queue; the worker that ran it hosts the rest, light steps on its
// light queue; each step is given its inputs' outcomes.
func TestComponentStepsGoToTheirHost(t *testing.T) {
	p := twoComponents(5)
	env := newEnv()
	sk, _ := SkeletonOf(p, func(*plan.Node) bool { return false }, func(*plan.Node) bool { return false })
	queues := map[string]string{}
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
		var in StepInput
		if info.ActivityType.Name == ActivityStep && args.Get(&in) == nil {
			queues[in.Step] = info.TaskQueue
			if in.Step == "a/deploy" && in.Inputs["a/begin"].Status != plan.OK {
				t.Errorf("a/deploy got its input's outcome %+v", in.Inputs["a/begin"])
			}
		}
	})
	env.OnActivity(ActivityStep, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in StepInput) (StepOutput, error) {
			return StepOutput{Result: Result{Status: plan.OK}, Host: "gantry@w1", Light: "gantry@w1/light", Worker: "w1"}, nil
		})
	env.OnActivity(ActivityRelease, mock.Anything, mock.Anything).Return(nil)
	env.ExecuteWorkflow(Workflow, RunInput{Stack: "s", RunID: "r1", Parallel: 2, Skeleton: sk})
	var ro RunOutput
	if err := env.GetWorkflowResult(&ro); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"a/begin": DefaultQueue, "a/deploy": "gantry@w1", "a/end": "gantry@w1/light",
		"b/begin": DefaultQueue, "b/deploy": "gantry@w1", "b/end": "gantry@w1/light",
	}
	if diff := cmp.Diff(want, queues); diff != "" {
		t.Errorf("queues (-want +got):\n%s", diff)
	}
	for i, r := range ro.Results {
		if r.Status != plan.OK {
			t.Errorf("%s: %+v", p.Nodes[i].ID, r)
		}
	}
}

// hostedEnv runs twoComponents with every step on worker w1 or w2 (the
// attempt), a/deploy's first attempt lost with its worker.
func hostedEnv(t *testing.T, rerun func(*plan.Node) bool) (RunOutput, Progress, map[string]int) {
	t.Helper()
	p := twoComponents(5)
	env := newEnv()
	sk, _ := SkeletonOf(p, rerun, func(*plan.Node) bool { return false })
	calls := map[string]int{}
	env.OnActivity(ActivityStep, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in StepInput) (StepOutput, error) {
			calls[in.Step]++
			w := "w1"
			if in.Attempt > 0 {
				w = "w2"
			}
			if in.Step == "a/deploy" && in.Attempt == 0 {
				return StepOutput{}, sdktemporal.NewHeartbeatTimeoutError(Heartbeat{Host: "gantry@w1", Worker: "w1 (pid 1)"})
			}
			return StepOutput{Result: Result{Status: plan.OK}, Host: "gantry@" + w, Light: "gantry@" + w + "/light", Worker: w}, nil
		})
	env.OnActivity(ActivityRelease, mock.Anything, mock.Anything).Return(nil)
	env.ExecuteWorkflow(Workflow, RunInput{Stack: "s", RunID: "r1", Parallel: 2, Skeleton: sk})
	var ro RunOutput
	if err := env.GetWorkflowResult(&ro); err != nil {
		t.Fatal(err)
	}
	return ro, progress(t, env), calls
}

// TestWorkerDeathStartsAnIdempotentComponentOver: a component that may run
// again starts over from its begin on another worker when the worker
// running it dies; the run goes on and succeeds.
func TestWorkerDeathStartsAnIdempotentComponentOver(t *testing.T) {
	ro, pr, calls := hostedEnv(t, func(*plan.Node) bool { return true })
	if ro.Failed {
		t.Fatalf("the run failed: %+v", ro)
	}
	if calls["a/begin"] != 2 || calls["a/deploy"] != 2 || calls["b/deploy"] != 1 {
		t.Errorf("calls %v: a should have started over once", calls)
	}
	found := false
	for _, e := range pr.Events {
		found = found || e.Log != ""
	}
	if !found {
		t.Error("no log line says the component started over")
	}
}

// TestWorkerDeathLeavesOtherComponentsIncomplete: a component that does not
// declare it may run again is given up when its worker dies: the step
// fails, stopping the run, its end records no success, and what depends on
// it does not run.
func TestWorkerDeathLeavesOtherComponentsIncomplete(t *testing.T) {
	p := twoComponents(5)
	ro, _, calls := hostedEnv(t, func(n *plan.Node) bool { return n.Kind == plan.KindBegin || n.Kind == plan.KindEnd })
	if !ro.Failed || ro.HaltedBy != "a" {
		t.Fatalf("the run should fail, halted by a: %+v", ro)
	}
	res := ro.Results[p.Node("a/deploy").Index()]
	if res.Status != plan.Failed || !res.Abort || !strings.Contains(res.Reason, "left incomplete") {
		t.Errorf("a/deploy: %+v", res)
	}
	if calls["a/deploy"] != 1 || calls["b/begin"] != 0 {
		t.Errorf("calls %v: nothing should run again or after", calls)
	}
	if r := ro.Results[p.Node("a/end").Index()]; r.Status != plan.Skipped {
		t.Errorf("a/end: %+v", r)
	}
}

// TestLostStepNamesItsHostAndTakesItsTime: a step lost with its worker
// after running 25 s, whose heartbeat timeout carries no name (the worker
// died before its step's first heartbeat was recorded, or was stopped), is
// said to have run those 25 s and names the worker as the host it was
// recorded as; it named "a worker" and took 0 ms.
func TestLostStepNamesItsHostAndTakesItsTime(t *testing.T) {
	p := twoComponents(5)
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"heartbeat timeout", sdktemporal.NewHeartbeatTimeoutError(), "the worker running a (w1/4242) died"},
		{"stopped", sdktemporal.NewApplicationError("stopped", errStopped), "the worker running a (w1/4242, stopped) died"},
		{"named", sdktemporal.NewHeartbeatTimeoutError(Heartbeat{Host: "gantry@w1", Worker: "w1/99"}), "the worker running a (w1/99) died"},
	} {
		env := newEnv()
		sk, _ := SkeletonOf(p, func(n *plan.Node) bool { return n.Kind == plan.KindBegin || n.Kind == plan.KindEnd }, func(*plan.Node) bool { return false })
		env.OnActivity(ActivityStep, mock.Anything, mock.MatchedBy(func(in StepInput) bool { return in.Step == "a/deploy" })).
			After(25*time.Second).Return(StepOutput{}, tt.err)
		env.OnActivity(ActivityStep, mock.Anything, mock.Anything).
			Return(StepOutput{Result: Result{Status: plan.OK}, Host: "gantry@w1", Light: "gantry@w1/light", Worker: "w1/4242"}, nil)
		env.OnActivity(ActivityRelease, mock.Anything, mock.Anything).Return(nil)
		env.ExecuteWorkflow(Workflow, RunInput{Stack: "s", RunID: "r1", Parallel: 2, Skeleton: sk})
		var ro RunOutput
		if err := env.GetWorkflowResult(&ro); err != nil {
			t.Fatal(err)
		}
		i := p.Node("a/deploy").Index()
		if res := ro.Results[i]; res.Status != plan.Failed || !strings.Contains(res.Reason, tt.want) {
			t.Errorf("%s: a/deploy %+v, want a reason with %q", tt.name, res, tt.want)
		}
		if took := ro.Ended[i].Sub(ro.Started[i]); took < 25*time.Second {
			t.Errorf("%s: a/deploy took %s, want its 25 s", tt.name, took)
		}
	}
}

// TestCancelSignal: the client's interrupt cancels the running steps and
// skips what has not started; ends still run.
func TestCancelSignal(t *testing.T) {
	p := twoComponents(60)
	env := newEnv()
	sk, _ := SkeletonOf(p, func(*plan.Node) bool { return true }, func(*plan.Node) bool { return false })
	// a/deploy runs for a minute (of the virtual clock) unless cancelled.
	env.OnActivity(ActivityStep, mock.Anything, mock.MatchedBy(func(in StepInput) bool { return in.Step == "a/deploy" })).
		After(time.Minute).Return(StepOutput{Result: Result{Status: plan.OK}}, nil)
	for _, n := range p.Nodes {
		id := n.ID
		env.OnActivity(ActivityStep, mock.Anything, mock.MatchedBy(func(in StepInput) bool { return in.Step == id })).
			After(enginetest.ScriptOf(n).Duration).Return(StepOutput{Result: Result{Status: plan.OK}}, nil)
	}
	env.OnActivity(ActivityRelease, mock.Anything, mock.Anything).Return(nil)
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(SignalCancel, nil) }, 10*time.Second)
	env.ExecuteWorkflow(Workflow, RunInput{Stack: "s", RunID: "r1", Parallel: 2, Skeleton: sk})
	var ro RunOutput
	if err := env.GetWorkflowResult(&ro); err != nil {
		t.Fatal(err)
	}
	if !ro.Cancelled {
		t.Fatalf("not cancelled: %+v", ro)
	}
	got := map[string]string{}
	for i, r := range ro.Results {
		got[p.Nodes[i].ID] = enginetest.StatusOf(r.Plan())
	}
	// The activities are mocks: a/end's says ok where the real one passes
	// a's failure on. a/deploy was critical: b is not started.
	want := map[string]string{"a/begin": "ok", "a/deploy": "failed", "a/end": "ok",
		"b/begin": "skipped(stopped)", "b/deploy": "skipped(stopped)", "b/end": "ok"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestQuestionsAndPauses: a step that asks holds back new steps; the
// client sees the question, answers it, and the step reads the answer.
func TestQuestionsAndPauses(t *testing.T) {
	p := twoComponents(1)
	env := newEnv()
	sk, _ := SkeletonOf(p, func(*plan.Node) bool { return true }, func(*plan.Node) bool { return false })
	for _, n := range p.Nodes {
		id := n.ID
		env.OnActivity(ActivityStep, mock.Anything, mock.MatchedBy(func(in StepInput) bool { return in.Step == id })).
			After(enginetest.ScriptOf(n).Duration).Return(StepOutput{Result: Result{Status: plan.OK}}, nil)
	}
	env.OnActivity(ActivityRelease, mock.Anything, mock.Anything).Return(nil)
	var seen Progress
	var answer Answer
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalPause, PauseSignal{ID: "q1", On: true})
		env.SignalWorkflow(SignalAsk, Question{ID: "q1", Step: "a/begin"})
	}, 100*time.Millisecond)
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(QueryProgress, 0)
		if err == nil {
			_ = v.Get(&seen)
		}
		env.SignalWorkflow(SignalAnswer, Answer{ID: "q1", Text: "yes"})
	}, 30*time.Second)
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(QueryAnswer, "q1")
		if err == nil {
			_ = v.Get(&answer)
		}
		env.SignalWorkflow(SignalPause, PauseSignal{ID: "q1", On: false})
	}, 31*time.Second)
	env.ExecuteWorkflow(Workflow, RunInput{Stack: "s", RunID: "r1", Parallel: 2, Skeleton: sk})
	var ro RunOutput
	if err := env.GetWorkflowResult(&ro); err != nil {
		t.Fatal(err)
	}
	if !seen.Paused || len(seen.Questions) != 1 || seen.Questions[0].ID != "q1" {
		t.Errorf("progress while asking: %+v", seen)
	}
	if answer.Text != "yes" {
		t.Errorf("answer %+v", answer)
	}
	// Nothing started while the question was open: a/deploy (ready at 1 s)
	// started after the answer (31 s).
	for _, e := range seen.Events {
		if !e.Finished && p.Nodes[e.Step].ID == "a/deploy" {
			t.Errorf("a/deploy started while a question was open")
		}
	}
	if ro.Failed {
		t.Errorf("run failed: %+v", ro)
	}
}

// progress is the progress query's answer from the start.
func progress(t *testing.T, env *testsuite.TestWorkflowEnvironment) Progress {
	t.Helper()
	v, err := env.QueryWorkflow(QueryProgress, 0)
	if err != nil {
		t.Fatal(err)
	}
	var pr Progress
	if err := v.Get(&pr); err != nil {
		t.Fatal(err)
	}
	return pr
}
