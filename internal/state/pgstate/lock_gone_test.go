package pgstate

import (
	"os"
	"os/exec"
	"testing"

	"github.com/gantry-dev/gantry/internal/state"
)

// TestGoneHere: a lock holder on this machine whose process has ended is
// gone (a waiter does not give it the grace to take its lock back); a live
// one, or one on another machine, is not.
func TestGoneHere(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Skip(err)
	}
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		h    state.Holder
		want bool
	}{
		{"ended here", state.Holder{Host: host, PID: ended.Process.Pid}, true},
		{"alive here", state.Holder{Host: host, PID: os.Getpid()}, false},
		{"elsewhere", state.Holder{Host: host + "-other", PID: ended.Process.Pid}, false},
		{"no pid", state.Holder{Host: host}, false},
	} {
		if got := goneHere(tc.h); got != tc.want {
			t.Errorf("%s: goneHere = %v, want %v", tc.name, got, tc.want)
		}
	}
}
