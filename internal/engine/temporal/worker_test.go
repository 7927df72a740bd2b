package temporal

import (
	"context"
	"errors"
	"testing"

	"github.com/gantry-dev/gantry/internal/action"
)

// TestRunRebuiltAfterATransientFailure: a run that could not be rebuilt
// on a worker for a while (the step interrupted, the database away longer
// than a step waits) is rebuilt by its next step there, not failed for the
// run's whole life; one that the worker's checkout cannot rebuild fails
// the later steps without rebuilding it again.
func TestRunRebuiltAfterATransientFailure(t *testing.T) {
	built := &action.WorkerRun{Bundle: &action.Bundle{Fingerprint: "f"}}
	checkout := &checkoutError{errors.New("this worker's checkout differs")}
	tests := []struct {
		name  string
		opens []error // what each rebuild returns; nil: the run
		want  []bool  // whether each step gets the run
		calls int
	}{
		{"transient, then rebuilt", []error{errors.New("read run r: the database is away"), nil}, []bool{false, true, true}, 2},
		{"interrupted, then rebuilt", []error{context.Canceled, nil}, []bool{false, true, true}, 2},
		{"the checkout differs", []error{checkout}, []bool{false, false, false}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			a := &activities{runs: map[string]*hostedRun{}}
			a.openRun = func(context.Context, StepInput) (*action.WorkerRun, error) {
				err := tt.opens[calls]
				calls++
				if err != nil {
					return nil, err
				}
				return built, nil
			}
			in := StepInput{Stack: "s", RunID: "r", Fingerprint: "f"}
			for i, want := range tt.want {
				hr, err := a.run(context.Background(), in)
				a.done(hr)
				if (err == nil) != want || want && hr.run != built {
					t.Errorf("step %d: err %v, want the run: %t", i, err, want)
				}
			}
			if calls != tt.calls {
				t.Errorf("rebuilt %d times, want %d", calls, tt.calls)
			}
		})
	}
}
