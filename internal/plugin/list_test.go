package plugin

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// recorder is a list plugin that notes which instances ran, in order.
type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) Run(_ context.Context, action string, s *Spec, _ *Env, _ io.Writer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, action+" "+s.Key)
	return nil
}

func leaf(key string) *Spec { return &Spec{Name: "test-recorder", Key: key} }

func ctl(name string, children ...*Spec) *Spec { return &Spec{Name: name, Children: children} }

func TestRunListOrder(t *testing.T) {
	rec := &recorder{}
	RegisterList("test-recorder", rec)
	defer delete(listPlugins, "test-recorder")
	tests := []struct {
		name   string
		list   []*Spec
		action string
		want   string
	}{
		{"plain deploy", []*Spec{leaf("a"), leaf("b"), leaf("c")}, ActionDeploy, "a b c"},
		{"plain delete", []*Spec{leaf("a"), leaf("b"), leaf("c")}, ActionDelete, "c b a"},
		{"pinned keeps its order on delete", []*Spec{leaf("a"), ctl("pinned", leaf("b"), leaf("c")), leaf("d")}, ActionDelete, "d b c a"},
		{"unpinned in pinned follows the action", []*Spec{ctl("pinned", leaf("a"), ctl("unpinned", leaf("b"), leaf("c")))}, ActionDelete, "a c b"},
		{"unpinned in pinned on deploy", []*Spec{ctl("pinned", leaf("a"), ctl("unpinned", leaf("b"), leaf("c")))}, ActionDeploy, "a b c"},
		{"cleanup reverses like delete", []*Spec{leaf("a"), ctl("unpinned", leaf("b"), leaf("c"))}, ActionCleanup, "c b a"},
		{"pinned inside parallel", []*Spec{ctl("parallel", ctl("pinned", leaf("a"), leaf("b")))}, ActionDelete, "a b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec.calls = nil
			env := &Env{Stream: func(string) io.Writer { return io.Discard }}
			if err := RunList(context.Background(), tt.list, tt.action, env); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range rec.calls {
				got = append(got, strings.TrimPrefix(c, tt.action+" "))
			}
			if diff := cmp.Diff(tt.want, strings.Join(got, " ")); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParallelChildNames(t *testing.T) {
	got := childNames([]*Spec{{Name: "gate"}, {Name: "gate"}, {Name: "rec", Key: "db"}, {Name: "pinned"}, {Name: "echo"}})
	want := []string{"gate-1", "gate-2", "db", "pinned", "echo"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
}
