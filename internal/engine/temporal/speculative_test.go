package temporal

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/gantry-dev/gantry/internal/plan"
)

// TestSpeculationWoke: a wake-up after a blocking wait that neither a
// workflow task, nor a local activity's result (the clock moves), nor the
// workflow's own coroutine explains holds back the events from then on,
// until a workflow task starts.
func TestSpeculationWoke(t *testing.T) {
	type wake struct {
		newTask, clockMoved, handoff bool
		events                       int
	}
	tests := []struct {
		name        string
		wakes       []wake
		wantVisible int // of 10 events
		wantSettled bool
	}{
		{"new workflow task", []wake{{newTask: true, events: 4}}, 10, true},
		{"local activity result", []wake{{clockMoved: true, events: 4}}, 10, true},
		{"own coroutine", []wake{{handoff: true, events: 4}}, 10, true},
		{"unprocessed history", []wake{{events: 4}}, 4, false},
		{"the first such wake-up counts", []wake{{events: 4}, {events: 7}}, 4, false},
		{"clock moves after it", []wake{{events: 4}, {clockMoved: true, events: 6}}, 4, false},
		{"a workflow task after it", []wake{{events: 4}, {newTask: true, events: 6}}, 10, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := speculation{from: -1}
			for _, w := range tt.wakes {
				s.woke(w.newTask, w.clockMoved, w.handoff, w.events)
			}
			if got := s.visible(10); got != tt.wantVisible {
				t.Errorf("visible %d, want %d", got, tt.wantVisible)
			}
			if got := s.settled(); got != tt.wantSettled {
				t.Errorf("settled %t, want %t", got, tt.wantSettled)
			}
		})
	}
}

// TestProgressLeavesOutUnprocessedHistory: the SDK's test environment
// stands in for a query's replay of history no workflow task has taken in:
// the history's length stays (no workflow task starts) when a step's end
// comes in, and the clock does not move (the step took no virtual time).
// The progress query leaves out what the workflow did from then on and
// does not say the run is done; where a workflow task took the step's end
// in, or the clock moved (a local activity's result), it shows everything.
func TestProgressLeavesOutUnprocessedHistory(t *testing.T) {
	tests := []struct {
		name       string
		newTask    bool          // a workflow task takes a/deploy's end in
		took       time.Duration // a/deploy's virtual duration
		wantHidden bool
	}{
		{"a workflow task takes it in", true, 0, false},
		{"the clock moved", false, 5 * time.Second, false},
		{"history no task took in", false, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := twoComponents(5)
			env := newEnv()
			sk, _ := SkeletonOf(p, func(*plan.Node) bool { return false }, func(*plan.Node) bool { return false })
			length, frozen := 3, false
			env.SetCurrentHistoryLength(length)
			env.SetOnActivityCompletedListener(func(info *activity.Info, _ converter.EncodedValue, _ error) {
				// Runs before the workflow takes the end in. After a/deploy's
				// end came in as history no task took in, no task starts:
				// the replay goes on to its end.
				frozen = frozen || strings.HasSuffix(info.ActivityID, ":a/deploy") && !tt.newTask
				if !frozen {
					length += 6
					env.SetCurrentHistoryLength(length)
				}
			})
			env.OnActivity(ActivityStep, mock.Anything, mock.MatchedBy(func(in StepInput) bool { return in.Step == "a/deploy" })).
				After(tt.took).Return(StepOutput{Result: Result{Status: plan.OK}}, nil)
			env.OnActivity(ActivityStep, mock.Anything, mock.Anything).After(time.Second).
				Return(StepOutput{Result: Result{Status: plan.OK}}, nil)
			env.OnActivity(ActivityRelease, mock.Anything, mock.Anything).After(time.Second).Return(nil)
			env.ExecuteWorkflow(Workflow, RunInput{Stack: "s", RunID: "r1", Parallel: 1, Skeleton: sk})
			var ro RunOutput
			if err := env.GetWorkflowResult(&ro); err != nil {
				t.Fatal(err)
			}
			v, err := env.QueryWorkflow(QueryProgress, 0)
			if err != nil {
				t.Fatal(err)
			}
			var pr Progress
			if err := v.Get(&pr); err != nil {
				t.Fatal(err)
			}
			deployEnded := false
			for _, e := range pr.Events[:pr.Next] {
				deployEnded = deployEnded || e.Finished && p.Nodes[e.Step].ID == "a/deploy"
			}
			if tt.wantHidden {
				if deployEnded || pr.Done || pr.Next == 0 {
					t.Errorf("progress shows %d events (a/deploy ended: %t), done %t: want what came before a/deploy's end, not done", pr.Next, deployEnded, pr.Done)
				}
				return
			}
			if !deployEnded || !pr.Done {
				t.Errorf("progress shows %d events (a/deploy ended: %t), done %t: want all of them, done", pr.Next, deployEnded, pr.Done)
			}
		})
	}
}
