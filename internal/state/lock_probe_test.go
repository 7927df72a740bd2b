package state

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestHeldByTakesNoLock: whether a run holds a state file's lock is told
// from its record — the process it names alive, on this host, with the
// lock file open — without trying the flock (a deploy starting in that
// instant would fail with "locked"); only a record that cannot be judged
// here (another host) falls back to trying it.
func TestHeldByTakesNoLock(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Skip("no hostname:", err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	alive := exec.Command("sleep", "600")
	if err := alive.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = alive.Process.Kill(); _ = alive.Wait() })

	tests := []struct {
		name string
		// lock: the test takes the flock (a real holder); open: it only
		// opens the lock file, as a holder's descriptor, without the flock.
		lock, open bool
		record     *Holder
		want       bool
	}{
		{"a run of this process holds it", true, false, &Holder{Host: host, PID: os.Getpid(), RunID: "r1"}, true},
		// The flock is free, the record's process has the file open: the
		// answer is the record's, so the flock was not tried.
		{"told by the record, not the flock", false, true, &Holder{Host: host, PID: os.Getpid(), RunID: "r1"}, true},
		{"its run was killed", false, false, &Holder{Host: host, PID: gone.Process.Pid, RunID: "r1"}, false},
		{"its pid is another process's now", false, false, &Holder{Host: host, PID: alive.Process.Pid, RunID: "r1"}, false},
		{"another host's run: the flock is tried", true, false, &Holder{Host: host + "-elsewhere", PID: 1, RunID: "r1"}, true},
		{"another host's record, the flock free", false, false, &Holder{Host: host + "-elsewhere", PID: 1, RunID: "r1"}, false},
		{"no record", false, false, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "hub.yaml.state")
			if tt.lock {
				l, err := lockFile(path, Holder{Host: host, PID: os.Getpid(), RunID: "r1", Since: time.Now()})
				if err != nil {
					t.Fatal(err)
				}
				defer l.Release()
			}
			var data []byte
			if tt.record != nil {
				data, _ = json.Marshal(tt.record)
			}
			if err := os.WriteFile(LockPath(path), data, 0o600); err != nil {
				t.Fatal(err)
			}
			if tt.open {
				f, err := os.Open(LockPath(path))
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
			}
			held, h, err := NewFileStore(path).HeldBy(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if held != tt.want {
				t.Fatalf("held = %v, want %v", held, tt.want)
			}
			if held && (h == nil || h.RunID != "r1") {
				t.Errorf("holder %+v, want the record's", h)
			}
		})
	}
}
