package state

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func sample() *State {
	s := New("demo")
	s.DeploymentID = "abc"
	s.Parameters = map[string]string{"db.password|db": "x", "weird": "line1\nline2: \"q\""}
	s.Provides = map[string][]string{"postgres": {"db"}}
	c := s.Component("db")
	c.Status = StatusDeployed
	c.Started = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	c.Parameters = []Parameter{{Name: "db.port", Value: "5432", Env: "DB_PORT"}}
	c.Outputs = map[string]string{"db.host": "localhost", "true": "yes"}
	s.Component("true").Status = StatusFailed
	return s
}

func TestRecorderWritesWhatEncodeWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hub.yaml.state")
	r := NewRecorder(path, New("demo"))
	fixed := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r.Now = func() time.Time { return fixed }
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			v := r.UpdateComponent(string(rune('a'+i)), func(c *Component) { c.Status = StatusDeployed; c.Order = i })
			if err := r.Wait(v); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	r.UpdateStack(func(s *State) { s.Status = StatusDeployed })
	r.RemoveComponent("c")
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := Encode(r.Snapshot())
	if string(got) != string(want) {
		t.Errorf("file differs from Encode:\n%s\n---\n%s", got, want)
	}
	st, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Components) != 19 || st.Status != StatusDeployed {
		t.Errorf("read back %d components, status %q", len(st.Components), st.Status)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("state mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestRecorderReportsWriteErrors(t *testing.T) {
	r := NewRecorder(filepath.Join(t.TempDir(), "missing", "dir", "state"), New("demo"))
	v := r.UpdateStack(func(s *State) { s.Status = StatusDeployed })
	if err := r.Wait(v); err == nil {
		t.Fatal("want a write error")
	}
	_ = r.Close()
}

// lockFile takes a state file's lock at once.
func lockFile(path string, h Holder) (Lock, error) {
	return NewFileStore(path).Lock(context.Background(), h, LockOptions{})
}

func TestLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hub.yaml.state")
	h := Holder{Host: "h", PID: os.Getpid(), RunID: "r1", Command: "deploy", Since: time.Unix(0, 0).UTC()}
	l, err := lockFile(path, h)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lockFile(path, Holder{})
	le, ok := err.(*LockedError)
	if !ok || le.Holder == nil || le.Holder.RunID != "r1" {
		t.Fatalf("second acquire: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	l2, err := lockFile(path, h)
	if err != nil {
		t.Fatalf("acquire after release: %v", err)
	}
	_ = l2.Release()
	if res, err := Unlock(path); err != nil || res.Stale != nil {
		t.Fatalf("unlock of a free lock: %+v %v", res, err)
	}
}

// TestLockWaits: with a timeout, a second run waits for a held state file
// lock, is told who holds it, and takes it once the holder lets go; without
// one, or past it, it fails naming the holder.
func TestLockWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hub.yaml.state")
	held, err := lockFile(path, Holder{Host: "h", PID: 1, RunID: "r1", Command: "gantry deploy"})
	if err != nil {
		t.Fatal(err)
	}
	var told []string
	o := LockOptions{Timeout: time.Minute, Waiting: func(h *Holder) {
		told = append(told, h.RunID)
		held.Release() // the holder ends once the waiter has been told
	}}
	l, err := NewFileStore(path).Lock(context.Background(), Holder{RunID: "r2"}, o)
	if err != nil {
		t.Fatalf("waiting for the lock: %v", err)
	}
	if len(told) != 1 || told[0] != "r1" {
		t.Errorf("the waiter was told of %v, want [r1]", told)
	}
	// A wait that ends before the holder lets go fails naming the holder.
	o = LockOptions{Timeout: time.Nanosecond}
	var le *LockedError
	if _, err := NewFileStore(path).Lock(context.Background(), Holder{RunID: "r3"}, o); !errors.As(err, &le) || le.Holder == nil || le.Holder.RunID != "r2" {
		t.Fatalf("a wait past its timeout: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
}

// TestUnlockNeverBreaksAHeldLock: whatever host the record names, a lock
// whose flock is held is refused; a stale record is cleared.
func TestUnlockNeverBreaksAHeldLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hub.yaml.state")
	l, err := lockFile(path, Holder{Host: "another-host", PID: 1, RunID: "r1", Command: "gantry deploy", Since: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	var le *LockedError
	if _, err := Unlock(path); !errors.As(err, &le) || le.Holder.Host != "another-host" {
		t.Fatalf("unlock of a held lock: %v", err)
	}
	if _, err := lockFile(path, Holder{}); !errors.As(err, &le) {
		t.Fatalf("the held lock was broken: %v", err)
	}
	if err := l.(*fileLock).fl.Unlock(); err != nil { // the holder dies without releasing
		t.Fatal(err)
	}
	res, err := Unlock(path)
	if err != nil || res.Stale == nil || res.Stale.RunID != "r1" {
		t.Fatalf("unlock of a stale record: %+v %v", res, err)
	}
}

// TestCloneIsDeep: the recorder works on a clone while the run reads the
// original without a lock; no change to the clone may reach the original,
// down to nested plugin instances' resources.
func TestCloneIsDeep(t *testing.T) {
	s := sample()
	s.Component("db").Plugins = []PluginInstance{{Name: "pinned", Children: []PluginInstance{{Name: "kubernetes", Key: "k", Resources: []Resource{{Kind: "Service", Name: "a"}}}}}}
	c := s.Clone()
	c.Component("new").Status = StatusIncomplete
	c.Components["db"].Plugins[0].Children[0].Resources[0].Name = "changed"
	c.Components["db"].Plugins[0].Children[0].Resources = nil
	c.Components["db"].Outputs["db.host"] = "changed"
	if _, ok := s.Components["new"]; ok {
		t.Error("a component added to the clone is in the original")
	}
	if got := s.Components["db"].Plugins[0].Children[0].Resources; len(got) != 1 || got[0].Name != "a" {
		t.Errorf("the original's nested resources changed: %+v", got)
	}
	if s.Components["db"].Outputs["db.host"] != "localhost" {
		t.Error("the original's outputs changed")
	}
}

// TestRecordOverLeavesTheStateItRecordsOver: a recorder over a state the
// run's steps read shares its component records until it changes one; no
// change it makes — to a record, nested plugin resources, the stack's
// fields, a removal, records it absorbs — reaches that state, and what it
// writes is what it would have written with a deep copy.
func TestRecordOverLeavesTheStateItRecordsOver(t *testing.T) {
	before := sample()
	before.Component("db").Plugins = []PluginInstance{{Name: "pinned", Children: []PluginInstance{{Name: "kubernetes", Key: "k", Resources: []Resource{{Kind: "Service", Name: "a"}}}}}}
	want, err := Encode(before)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	over, _ := NewFileStore(filepath.Join(dir, "over.state")).Writer(context.Background())
	deep, _ := NewFileStore(filepath.Join(dir, "deep.state")).Writer(context.Background())
	recorders := []*Recorder{RecordOver(over, before, nil), RecordFrom(deep, before.Clone(), nil)}
	fixed := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, r := range recorders {
		r.Now = func() time.Time { return fixed }
		r.UpdateComponent("db", func(c *Component) {
			c.Status = StatusIncomplete
			c.Outputs["db.host"] = "changed"
			c.Plugins[0].Children[0].Resources[0].Name = "changed"
			c.Parameters[0].Value = "changed"
		})
		r.UpdateComponent("new", func(c *Component) { c.Status = StatusDeployed })
		r.RemoveComponent("true")
		r.UpdateStack(func(s *State) { s.Status = StatusFailed; s.Parameters["weird"] = "changed" })
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := Encode(before); string(got) != string(want) {
		t.Errorf("the state recorded over changed:\n%s\n---\nwas\n%s", got, want)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "over.state"))
	b, _ := os.ReadFile(filepath.Join(dir, "deep.state"))
	if string(a) != string(b) {
		t.Errorf("recording over wrote\n%s\n---\nrecording a deep copy wrote\n%s", a, b)
	}
}
