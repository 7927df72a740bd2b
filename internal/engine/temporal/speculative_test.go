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
// the history's length stays (no workflow task starts) once the end of the
// tail's activity comes in, and the clock does not move (that activity took
// no virtual time). The progress query leaves out what the workflow did
// from then on, whichever wait took that end in (a step's, a light step's
// run inline, the lock's release), and does not say the run is done; where
// a workflow task took the end in, or the clock moved (as a local
// activity's result moves it), it shows everything.
func TestProgressLeavesOutUnprocessedHistory(t *testing.T) {
	tests := []struct {
		name     string
		tail     string        // the activity whose end no task takes in: a step, or "release"
		newTask  bool          // a workflow task takes that end in
		took     time.Duration // the tail activity's virtual duration
		wantSeen bool          // the tail step's end shows (and the run is done)
	}{
		{"a workflow task takes it in", "a/deploy", true, 0, true},
		{"the clock moved", "a/deploy", false, 5 * time.Second, true},
		{"a step's end", "a/deploy", false, 0, false},
		{"a light step's end", "a/end", false, 0, false},
		{"the release's end", "release", false, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := twoComponents(5)
			env := newEnv()
			sk, _ := SkeletonOf(p, func(n *plan.Node) bool { return n.Kind == plan.KindEnd }, func(*plan.Node) bool { return false })
			isTail := func(info *activity.Info) bool {
				if tt.tail == "release" {
					return info.ActivityType.Name == ActivityRelease
				}
				return strings.HasSuffix(info.ActivityID, ":"+tt.tail)
			}
			length, frozen := 3, false
			env.SetCurrentHistoryLength(length)
			env.SetOnActivityCompletedListener(func(info *activity.Info, _ converter.EncodedValue, _ error) {
				// Runs before the workflow takes the end in. After the tail's
				// end came in as history no task took in, no task starts: the
				// replay goes on to its end.
				frozen = frozen || isTail(info) && !tt.newTask
				if !frozen {
					length += 6
					env.SetCurrentHistoryLength(length)
				}
			})
			ok := StepOutput{Result: Result{Status: plan.OK}}
			if tt.tail != "release" {
				env.OnActivity(ActivityStep, mock.Anything, mock.MatchedBy(func(in StepInput) bool { return in.Step == tt.tail })).
					After(tt.took).Return(ok, nil)
				env.OnActivity(ActivityRelease, mock.Anything, mock.Anything).After(time.Second).Return(nil)
			} else {
				env.OnActivity(ActivityRelease, mock.Anything, mock.Anything).After(tt.took).Return(nil)
			}
			env.OnActivity(ActivityStep, mock.Anything, mock.Anything).After(time.Second).Return(ok, nil)
			env.ExecuteWorkflow(Workflow, RunInput{Stack: "s", RunID: "r1", Parallel: 1, Skeleton: sk})
			var ro RunOutput
			if err := env.GetWorkflowResult(&ro); err != nil {
				t.Fatal(err)
			}
			pr := progress(t, env)
			tailEnded := false
			for _, e := range pr.Events[:pr.Next] {
				tailEnded = tailEnded || e.Finished && p.Nodes[e.Step].ID == tt.tail
			}
			switch {
			case tt.tail == "release" && !tt.wantSeen:
				// Every step's end came before: all of them show; only the
				// run is not done.
				if pr.Next != len(pr.Events) || pr.Next == 0 || pr.Done {
					t.Errorf("progress shows %d events, done %t: want all, not done", pr.Next, pr.Done)
				}
			case !tt.wantSeen:
				if tailEnded || pr.Done || pr.Next == 0 {
					t.Errorf("progress shows %d events (%s ended: %t), done %t: want what came before %s's end, not done", pr.Next, tt.tail, tailEnded, pr.Done, tt.tail)
				}
			case !tailEnded || !pr.Done:
				t.Errorf("progress shows %d events (%s ended: %t), done %t: want all of them, done", pr.Next, tt.tail, tailEnded, pr.Done)
			}
		})
	}
}
