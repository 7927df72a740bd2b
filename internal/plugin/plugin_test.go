package plugin

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRegistryRoles(t *testing.T) {
	for _, tt := range []struct {
		name        string
		list, steps bool
	}{
		{"echo", true, false},
		{"exec", true, true},
		{"http", true, true}, // in lists, a wait step
		{"gate", true, false},
		{"parallel", true, false},
		{"dns", false, true},
		{"nothing", false, false},
	} {
		if got := IsListBuiltin(tt.name); got != tt.list {
			t.Errorf("IsListBuiltin(%s) = %v", tt.name, got)
		}
		err := ValidateCall(tt.name, "", nil)
		if got := err == nil || !strings.Contains(err.Error(), "unknown plugin"); got != tt.steps {
			t.Errorf("ValidateCall(%s): %v", tt.name, err)
		}
	}
}

// TestWaitKeepsTheLastCompletedError: when the timeout cuts an attempt
// short, the error reported is the last one an attempt completed with, and
// every failed attempt is heard of.
func TestWaitKeepsTheLastCompletedError(t *testing.T) {
	calls := 0
	var attempts []string
	try := func(ctx context.Context) error {
		calls++
		if calls == 1 {
			return errors.New("503 Service Unavailable")
		}
		<-ctx.Done() // the second attempt hangs until the timeout
		return ctx.Err()
	}
	err := Wait(context.Background(), 200*time.Millisecond, time.Millisecond, try, func(n int, _ time.Duration, err error) {
		attempts = append(attempts, fmt.Sprint(n, " ", err))
	})
	we, ok := IsWaitError(err)
	if !ok || we.Last.Error() != "503 Service Unavailable" {
		t.Fatalf("got %v", err)
	}
	if diff := cmp.Diff([]string{"1 503 Service Unavailable", "2 context deadline exceeded"}, attempts); diff != "" {
		t.Errorf("attempts (-want +got):\n%s", diff)
	}
}

// TestWaitKeepsTheLastCompletedErrorAtTheDeadline: an attempt that the
// timeout cut short with an error of its own (a dial's "i/o timeout", whose
// deadline fires before its context's timer has run) is cut short too: the
// error reported is the one before ("connection refused" was reported as
// "i/o timeout" on a loaded machine).
func TestWaitKeepsTheLastCompletedErrorAtTheDeadline(t *testing.T) {
	calls := 0
	try := func(ctx context.Context) error {
		calls++
		if calls == 1 {
			return errors.New("connection refused")
		}
		deadline, _ := ctx.Deadline()
		time.Sleep(time.Until(deadline))
		return errors.New("i/o timeout") // its own, not ctx.Err()
	}
	err := Wait(context.Background(), 200*time.Millisecond, time.Millisecond, try, nil)
	we, ok := IsWaitError(err)
	if !ok || we.Last.Error() != "connection refused" {
		t.Fatalf("got %v", err)
	}
}

// TestWaitTriesAtTheEnd: when the interval is longer than what is left of
// the timeout, a last attempt is made before the timeout ends (a condition
// that held at 6 s of 8 with an interval of 5 was given up at 5 s), and
// every failed attempt is heard, the last one too.
func TestWaitTriesAtTheEnd(t *testing.T) {
	for _, tt := range []struct {
		name     string
		okAt     int
		wantErr  bool
		attempts []int
	}{
		{"the last attempt sees the condition", 2, false, []int{1}},
		{"no attempt does", 0, true, []int{1, 2}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			var attempts []int
			err := Wait(context.Background(), 1500*time.Millisecond, time.Hour, func(context.Context) error {
				calls++
				if calls == tt.okAt {
					return nil
				}
				return errors.New("not yet")
			}, func(n int, _ time.Duration, _ error) { attempts = append(attempts, n) })
			if _, isWait := IsWaitError(err); isWait != tt.wantErr || !isWait && err != nil {
				t.Errorf("Wait = %v after %d attempts", err, calls)
			}
			if diff := cmp.Diff(tt.attempts, attempts); diff != "" {
				t.Errorf("attempts heard (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWaitLeavesTheLastAttemptRoom: the last attempt before the timeout
// is given time to succeed, not as little as the quick failure before it
// took (a refused connection takes microseconds, the answer that follows
// milliseconds: it was always cut short).
func TestWaitLeavesTheLastAttemptRoom(t *testing.T) {
	var slack time.Duration
	calls := 0
	err := Wait(context.Background(), 1200*time.Millisecond, time.Hour, func(ctx context.Context) error {
		calls++
		if calls == 1 {
			return errors.New("connection refused")
		}
		d, _ := ctx.Deadline()
		slack = time.Until(d)
		return nil
	}, nil)
	if err != nil || calls != 2 {
		t.Fatalf("Wait = %v after %d attempts", err, calls)
	}
	// It begins a second (lastRoom) before the timeout: a scheduler
	// would have to be late by half a second to leave it less.
	if slack < 500*time.Millisecond {
		t.Errorf("the last attempt had %s before the timeout", slack)
	}
}

func TestWaitStopsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	err := Wait(ctx, time.Hour, time.Hour, func(context.Context) error { cancel(); return errors.New("no") }, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v", err)
	}
}

func TestSpecHelpers(t *testing.T) {
	list := Specs(nil)
	if list != nil {
		t.Errorf("Specs(nil) = %v", list)
	}
	tree := []*Spec{{Name: "rec", Key: "a"}, {Name: "parallel", Children: []*Spec{{Name: "gate"}, {Name: "gate"}, {Name: "rec", Key: "db"}, {Name: "pinned"}}}}
	if s := At(tree, []int{1, 2}); s == nil || s.Key != "db" {
		t.Errorf("At(1.2) = %+v", s)
	}
	if s := At(tree, []int{1, 9}); s != nil {
		t.Errorf("At out of range = %+v", s)
	}
	if diff := cmp.Diff([]string{"gate-1", "gate-2", "db", "pinned"}, ChildNames(tree[1].Children)); diff != "" {
		t.Errorf("lanes (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		s    Spec
		want string
	}{
		{Spec{Name: "rec", Key: "db", Args: []string{"db:size"}}, "rec db:size"},
		{Spec{Name: "rec", Key: "db", Args: []string{"--fast"}}, "rec --fast (db)"},
		{Spec{Name: "rec", Key: "rec"}, "rec"},
		{Spec{Name: "rec", Key: "cache"}, "rec (cache)"},
	} {
		if got := tt.s.Title(); got != tt.want {
			t.Errorf("Title(%+v) = %q, want %q", tt.s, got, tt.want)
		}
	}
	if !Reverses(ActionDelete) || !Reverses(ActionCleanup) || Reverses(ActionDeploy) || Reverses(ActionPrepare) {
		t.Error("Reverses")
	}
}

func TestCommands(t *testing.T) {
	s := &Spec{Args: []string{"make", "it"}, Config: map[string]any{"delete": []any{"rm", "-f", "x"}, "cleanup": "echo done"}}
	for _, tt := range []struct {
		action string
		want   []string
	}{
		{ActionDeploy, []string{"make", "it"}},
		{ActionDelete, []string{"rm", "-f", "x"}},
		{ActionCleanup, []string{"echo done"}},
		{ActionPrepare, nil},
	} {
		got, err := commands(tt.action, s)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.action, diff)
		}
	}
}
