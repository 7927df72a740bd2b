package pgstate

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/state/pgstate/pgtest"
)

func open(t *testing.T, url, stack string) *Store {
	t.Helper()
	s, err := Open(context.Background(), url, stack)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.(*Store)
}

// setFor sets one of the package's tuning variables for the test, and back
// when it ends.
func setFor(t *testing.T, v *time.Duration, d time.Duration) {
	old := *v
	*v = d
	t.Cleanup(func() { *v = old })
}

func holder(run string) state.Holder {
	return state.Holder{Host: "h", PID: 1, RunID: run, Command: "gantry deploy", Since: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func sample() *state.State {
	s := state.New("demo")
	s.Status = state.StatusDeployed
	s.Parameters = map[string]string{"hub.deploymentId": "d1"}
	for _, n := range []string{"db", "web", "api"} {
		c := s.Component(n)
		c.Status = state.StatusDeployed
		c.Outputs = map[string]string{"url": "http://" + n}
	}
	return s
}

// read decodes what the store holds now.
func read(t *testing.T, s *Store) *state.State {
	t.Helper()
	f, err := s.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st, err := f.Decode(s.String())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestRecordAndReadBack: a run's changes written through the recorder read
// back as the state the recorder holds, document for document the same as
// the file backend writes, and a component removed is gone.
func TestRecordAndReadBack(t *testing.T) {
	url := pgtest.Database(t)
	s := open(t, url, "demo")
	l, err := s.Lock(context.Background(), holder("r1"), state.LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	w, err := s.Writer(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := state.Record(w, sample())
	r.UpdateComponent("web", func(c *state.Component) { c.Status = state.StatusFailed; c.Reason = "boom" })
	if err := r.Wait(r.RemoveComponent("api")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r.Snapshot(), read(t, open(t, url, "demo"))); diff != "" {
		t.Errorf("read back during the run (-want +got):\n%s", diff)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := open(t, url, "").Read(context.Background()) // the only stack
	if err != nil {
		t.Fatal(err)
	}
	want, _ := state.Encode(r.Snapshot())
	if string(f.Snapshot) != string(want) {
		t.Errorf("the document read back is not what the file backend writes:\n%s\nwant:\n%s", f.Snapshot, want)
	}
}

// TestLockHeldWaitedForAndUnlocked: a second run is told who holds the lock
// and fails at once, or waits for it; unlock never breaks a live lock and
// clears a stale holder record.
func TestLockHeldWaitedForAndUnlocked(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	a, b := open(t, url, "demo"), open(t, url, "demo")
	la, err := a.Lock(ctx, holder("r1"), state.LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var le *state.LockedError
	if _, err := b.Lock(ctx, holder("r2"), state.LockOptions{}); !errors.As(err, &le) || le.Holder == nil || le.Holder.RunID != "r1" {
		t.Fatalf("second lock: %v", err)
	}
	if _, err := b.Unlock(ctx); !errors.As(err, &le) || le.Holder.RunID != "r1" {
		t.Fatalf("unlock of a live lock: %v", err)
	}
	// Waiting: the holder lets go once the waiter has been told about it.
	told := make(chan *state.Holder, 1)
	got := make(chan error, 1)
	go func() {
		l, err := b.Lock(ctx, holder("r2"), state.LockOptions{Timeout: time.Minute, Waiting: func(h *state.Holder) { told <- h }})
		if err == nil {
			err = l.Release()
		}
		got <- err
	}()
	if h := <-told; h == nil || h.RunID != "r1" {
		t.Fatalf("the waiter was told of %v", h)
	}
	if err := la.Release(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("the waiter: %v", err)
	}
	// A holder record whose session is gone is stale.
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO gantry_locks (stack, run_id, holder, session_pid) VALUES ('demo', 'r9', '{"runId":"r9","host":"gone"}', 1)`); err != nil {
		t.Fatal(err)
	}
	res, err := a.Unlock(ctx)
	if err != nil || res.Stale == nil || res.Stale.RunID != "r9" {
		t.Fatalf("unlock of a stale record: %+v %v", res, err)
	}
	if res, err := a.Unlock(ctx); err != nil || res.Stale != nil {
		t.Fatalf("unlock again: %+v %v", res, err)
	}
}

// startRun locks the store for a run and records sample() through it,
// written once.
func startRun(t *testing.T, s *Store, run string) (state.Lock, *state.Recorder) {
	t.Helper()
	l, err := s.Lock(context.Background(), holder(run), state.LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Writer(context.Background())
	if err != nil {
		l.Release()
		t.Fatal(err)
	}
	r := state.Record(w, sample())
	if err := r.Wait(r.UpdateStack(func(*state.State) {})); err != nil {
		l.Release()
		t.Fatal(err)
	}
	return l, r
}

// lockSession is the backend pid of the session holding a lock.
func lockSession(l state.Lock) uint32 { return l.(*lock).currentConn().PgConn().PID() }

// terminate ends a backend, as a server restart or a network cut does, and
// waits until it is gone: until then its advisory locks still show as held
// (pg_terminate_backend alone only signals it, and a loaded machine may
// take its time).
func terminate(t *testing.T, url string, pid uint32) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var gone bool
	// The timeout (ms) is a bound against a hang, not a measure of speed.
	if err := conn.QueryRow(context.Background(), `SELECT pg_terminate_backend($1, 600000)`, pid).Scan(&gone); err != nil {
		t.Fatal(err)
	}
	if !gone {
		t.Fatalf("backend %d did not end", pid)
	}
}

// TestLockTakenBackAfterItsSessionDied: a run whose lock session died (a
// server restart) takes the lock back on a new session, writes on, and a
// second run still finds the stack locked by it.
func TestLockTakenBackAfterItsSessionDied(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	setFor(t, &keepAlive, 20*time.Millisecond)
	a := open(t, url, "demo")
	la, r := startRun(t, a, "r1")
	defer la.Release()
	old := lockSession(la)
	terminate(t, url, old)
	// The write waits for the lock to be taken back, then goes through.
	if err := r.Wait(r.UpdateComponent("web", func(c *state.Component) { c.Reason = "after" })); err != nil {
		t.Fatalf("a write after the lock session died: %v", err)
	}
	// The watcher records the new session in the holder record, which
	// the write's fence checks, a moment before it keeps it as its own.
	for deadline := time.Now().Add(time.Minute); lockSession(la) == old; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the write went through on the dead session's lock")
		}
	}
	var le *state.LockedError
	l2, err := open(t, url, "demo").Lock(ctx, holder("r2"), state.LockOptions{})
	if err == nil {
		l2.Release()
	}
	if !errors.As(err, &le) || le.Holder == nil || le.Holder.RunID != "r1" {
		t.Fatalf("a second run after the lock was taken back: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, a).Components["web"].Reason; got != "after" {
		t.Errorf("web's reason = %q", got)
	}
}

// TestLockLeftToTheRunTakingItBack: a run finding the lock free while its
// holder record says that run was alive a moment ago is refused, naming it:
// its session ended (a server restart, a network cut) and it is taking the
// lock back. Once the record says it is gone longer, the lock is taken.
func TestLockLeftToTheRunTakingItBack(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	setFor(t, &keepAlive, time.Hour) // the run does not take its lock back here
	a, b := open(t, url, "demo"), open(t, url, "demo")
	la, r := startRun(t, a, "r1")
	defer la.Release()
	defer r.Close()
	terminate(t, url, lockSession(la))
	var le *state.LockedError
	lb, err := b.Lock(ctx, holder("r2"), state.LockOptions{})
	if err == nil {
		lb.Release()
	}
	if !errors.As(err, &le) || le.Holder == nil || le.Holder.RunID != "r1" {
		t.Fatalf("a run while the holder's session ended a moment ago: %v", err)
	}
	setFor(t, &regainGrace, 0)
	lb, err = b.Lock(ctx, holder("r2"), state.LockOptions{})
	if err != nil {
		t.Fatalf("a run once the holder is gone longer: %v", err)
	}
	lb.Release()
}

// TestSlowAnswerKeepsTheLock: a run's lock record held by a transaction
// (a state write waiting on a slow commit, a DBA's job) for longer than the
// watcher's checks does not make the run lose its lock: the record is
// marked alive softly, and the session is alive.
func TestSlowAnswerKeepsTheLock(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	setFor(t, &keepAlive, 20*time.Millisecond)
	a := open(t, url, "demo")
	la, r := startRun(t, a, "r1")
	defer la.Release()
	session := lockSession(la)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// Held past the second the watcher's check once waited for, a
	// hundred checks long.
	if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `SELECT 1 FROM gantry_locks WHERE stack = 'demo' FOR SHARE`)
		if err == nil {
			_, err = tx.Exec(ctx, `SELECT pg_sleep(2)`)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-la.Lost():
		t.Fatalf("the lock was lost: %v", la.Why())
	default:
	}
	if err := r.Wait(r.UpdateComponent("web", func(c *state.Component) { c.Reason = "after" })); err != nil {
		t.Fatalf("a write after the slow answer: %v", err)
	}
	if lockSession(la) != session {
		t.Error("the lock was taken again on a new session")
	}
	r.Close()
}

// TestUnlockLeavesALockBeingTakenBack: gantry unlock does not remove the
// record of a run whose session ended a moment ago (it is taking its lock
// back), and says so.
func TestUnlockLeavesALockBeingTakenBack(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	setFor(t, &keepAlive, time.Hour)
	la, r := startRun(t, open(t, url, "demo"), "r1")
	defer la.Release()
	defer r.Close()
	terminate(t, url, lockSession(la))
	_, err := open(t, url, "demo").Unlock(ctx)
	var le *state.LockedError
	if !errors.As(err, &le) || le.Regaining.FreeIn <= 0 || !strings.Contains(err.Error(), "whose database session ended") {
		t.Fatalf("unlock of a lock being taken back: %v", err)
	}
}

// TestLostLockWritesNothing: a run whose lock session ended and whose lock
// another run took meanwhile writes nothing over that run's state.
func TestLostLockWritesNothing(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	setFor(t, &keepAlive, time.Hour) // the run does not notice before the other run locks
	// Nor is it given time to take its lock back (TestLockLeftToTheRunTakingItBack).
	setFor(t, &regainGrace, 0)
	a, b := open(t, url, "demo"), open(t, url, "demo")
	la, r := startRun(t, a, "r1")
	defer la.Release()
	terminate(t, url, lockSession(la))
	// The advisory lock goes when the terminated backend has exited.
	lb, err := b.Lock(ctx, holder("r2"), state.LockOptions{Timeout: time.Minute})
	if err != nil {
		t.Fatalf("the lock after the first run lost it: %v", err)
	}
	defer lb.Release()
	err = r.Wait(r.UpdateStack(func(s *state.State) { s.Status = state.StatusFailed }))
	if err == nil || !strings.Contains(err.Error(), "no longer holds the stack's lock") {
		t.Fatalf("a write after the lock was lost: %v", err)
	}
	if err := r.Close(); err == nil {
		t.Error("closing the recorder wrote the state without the lock")
	}
	// Asked to look, the watcher finds the session gone and the lock
	// another run's, and says so at once rather than retrying.
	la.(*lock).check()
	select {
	case <-la.Lost():
		if !errors.Is(la.Why(), state.ErrLockTaken) {
			t.Errorf("lost, why: %v", la.Why())
		}
	case <-time.After(time.Minute):
		t.Error("the lock another run took was not reported lost")
	}
	if st := read(t, b); st.Status != state.StatusDeployed {
		t.Errorf("the other run's state was written over: status %q", st.Status)
	}
}

// TestSchemaMigratesOnceAndRefusesNewer: the schema is created by the first
// gantry that connects, left alone by the next, and a newer one is refused.
func TestSchemaMigratesOnceAndRefusesNewer(t *testing.T) {
	url := pgtest.Database(t)
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		if _, err := open(t, url, "demo").Read(ctx); err != nil {
			t.Fatalf("read %d: %v", i+1, err)
		}
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE gantry_schema SET version = 99`); err != nil {
		t.Fatal(err)
	}
	if _, err := open(t, url, "demo").Read(ctx); err == nil || !strings.Contains(err.Error(), "use a newer gantry") {
		t.Fatalf("a newer schema: %v", err)
	}
}

// TestPasswordNeverShown: errors and names of a store hide its password.
func TestPasswordNeverShown(t *testing.T) {
	const pw = "s3cr3t-pw-42"
	s := open(t, "postgres://u:"+pw+"@127.0.0.1:1/db?sslmode=disable&connect_timeout=2", "demo")
	_, err := s.Read(context.Background())
	if err == nil {
		t.Fatal("read from a closed port succeeded")
	}
	for _, text := range []string{err.Error(), s.String()} {
		if strings.Contains(text, pw) {
			t.Errorf("the password shows: %s", text)
		}
	}
	if _, err := Open(context.Background(), "postgres://u:"+pw+"@h/db?sslmode=bogus", "x"); err == nil || strings.Contains(err.Error(), pw) {
		t.Errorf("a bad URL: %v", err)
	}
}
