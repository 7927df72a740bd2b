package report

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSetOutputKeepsOrder: outputs keep the order they were first printed
// in, and one printed again replaces its value where it was, however many
// a component prints (an index, not a search: 100,000 took 37 s).
func TestSetOutputKeepsOrder(t *testing.T) {
	r := newRunFacts()
	for i := range 20_000 {
		r.setOutput("a", Output{Name: fmt.Sprintf("k%d", i), Value: "first"})
	}
	r.setOutput("b", Output{Name: "k1", Value: "b's"})
	r.setOutput("a", Output{Name: "k1", Value: "again"})
	r.setOutput("a", Output{Name: "new", Value: "last"})
	got := r.outputs["a"]
	if len(got) != 20_001 {
		t.Fatalf("%d outputs, want 20,001", len(got))
	}
	want := []Output{{Name: "k0", Value: "first"}, {Name: "k1", Value: "again"}, {Name: "k2", Value: "first"}}
	if diff := cmp.Diff(want, got[:3]); diff != "" {
		t.Errorf("first outputs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(Output{Name: "new", Value: "last"}, got[20_000]); diff != "" {
		t.Errorf("last output (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Output{{Name: "k1", Value: "b's"}}, r.outputs["b"]); diff != "" {
		t.Errorf("b's outputs (-want +got):\n%s", diff)
	}
}
