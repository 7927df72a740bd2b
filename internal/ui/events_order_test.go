package ui

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
)

// TestEventsKeepTheirPromises feeds the stream events as the executor and
// the steps' goroutines give them — a step skipped without starting, a log
// line stamped later than the step's end that follows it — and checks
// what reaches the stream: a step_started before each step_finished, none
// for a failure path not taken, and times that never go backwards.
func TestEventsKeepTheirPromises(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	ran := &plan.Node{ID: "a/deploy", Kind: plan.KindComponent, Label: "deploy a", Component: "a"}
	skipped := &plan.Node{ID: "b/deploy", Kind: plan.KindComponent, Label: "deploy b", Component: "b"}
	notTaken := &plan.Node{ID: "a/failure", Kind: plan.KindComponent, Label: "on failure", Component: "a"}
	for _, tt := range []struct {
		name string
		feed func(e *Events)
		want []string // event step@offset
	}{
		{"a step that ran", func(e *Events) {
			e.StepStarted(ran, t0)
			e.StepFinished(ran, plan.Ok(), t0, t0.Add(2*time.Millisecond))
		}, []string{"step_started a/deploy@0s", "step_finished a/deploy@2ms"}},
		{"a step skipped without starting", func(e *Events) {
			e.StepFinished(skipped, plan.Skip(plan.CauseUpstream, "a failed"), t0.Add(time.Millisecond), t0.Add(time.Millisecond))
		}, []string{"step_started b/deploy@1ms", "step_finished b/deploy@1ms"}},
		{"a failure path not taken", func(e *Events) {
			e.StepFinished(notTaken, plan.Skip(plan.CauseNotNeeded, "not needed"), t0, t0)
		}, nil},
		{"an event stamped before the one written ahead of it", func(e *Events) {
			e.StepStarted(ran, t0)
			e.Emit(Event{Time: t0.Add(5 * time.Millisecond), Event: "log", Step: ran.ID, Component: "a", Line: new(string)})
			e.StepFinished(ran, plan.Ok(), t0, t0.Add(3*time.Millisecond))
		}, []string{"step_started a/deploy@0s", "log a/deploy@5ms", "step_finished a/deploy@5ms"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			e := NewEvents(&buf, "run")
			tt.feed(e)
			e.Flush()
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				if line == "" {
					continue
				}
				var ev Event
				if err := json.Unmarshal([]byte(line), &ev); err != nil {
					t.Fatalf("%v: %s", err, line)
				}
				got = append(got, ev.Event+" "+ev.Step+"@"+ev.Time.Sub(t0).String())
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
