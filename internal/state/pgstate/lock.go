package pgstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gantry-dev/gantry/internal/state"
)

// lockPoll is how often a run waiting for the lock tries again.
const lockPoll = 250 * time.Millisecond

// keepAlive is how often a held lock's session is checked: a session that
// died took the advisory lock with it. A variable for the tests.
var keepAlive = time.Second

// LockKey is the advisory lock of a stack: a 64-bit hash of its name, so
// that stacks in one database lock apart.
func LockKey(stack string) int64 {
	h := fnv.New64a()
	h.Write([]byte("gantry-stack\x00" + stack))
	return int64(h.Sum64())
}

// advisoryHeld is the session holding a stack's advisory lock, 0 when none:
// pg_locks shows a bigint key as its high and low halves.
const advisoryHeld = `SELECT coalesce((SELECT pid FROM pg_locks
	WHERE locktype = 'advisory' AND granted AND objsubid = 1
	  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
	  AND classid = (($1::bigint >> 32) & 4294967295)::bigint::oid
	  AND objid = ($1::bigint & 4294967295)::bigint::oid LIMIT 1), 0)`

// lock is a stack's advisory lock, held by a session of its own for the
// whole run.
type lock struct {
	s     *Store
	stack string
	runID string
	mu    sync.Mutex
	conn  *pgx.Conn // the session holding the advisory lock

	lost        chan struct{}
	why         error         // why lost was closed (l.mu)
	nudge       chan struct{} // a write found the lock session gone: check now
	stop        chan struct{}
	done        chan struct{}
	lostOnce    sync.Once
	releaseOnce sync.Once
}

// Lock takes the stack's session advisory lock, at once or within
// o.Timeout, and records who holds it; a holder that is waited for is told
// to o.Waiting whenever it changes. A run that a workflow holds the state
// for (docs/temporal.md) holds it as a lock would.
func (s *Store) Lock(ctx context.Context, h state.Holder, o state.LockOptions) (state.Lock, error) {
	l, _, err := s.lock(ctx, h, o, false)
	return l, err
}

// lock takes the advisory lock; with attach, a state a workflow holds is
// not refused: its run is returned, and the lock named after it.
func (s *Store) lock(ctx context.Context, h state.Holder, o state.LockOptions, attach bool) (state.Lock, *WorkflowRun, error) {
	if s.stack == "" {
		return nil, nil, errors.New("the state's lock needs the stack's name")
	}
	var conn *pgx.Conn
	fail := func(err error) (state.Lock, *WorkflowRun, error) {
		if conn != nil {
			conn.Close(context.Background())
		}
		return nil, nil, err
	}
	key := LockKey(s.stack)
	var wf *WorkflowRun
	// back is when the database answered again after it went away while
	// this run waited (broke; zero before): a run that held the lock then
	// is taking it back on a new session (watch), and is let.
	var back time.Time
	broke := false
	// regainingSince is how long ago the session of the run the holder
	// record names ended, when the last try left the lock to it (-1: the
	// database came back a moment ago); 0 when it did not.
	var regainingSince time.Duration
	try := func() (bool, *state.Holder, error) {
		if conn == nil {
			c, err := s.connect(ctx)
			if err != nil {
				return false, nil, err
			}
			conn = c
			if broke {
				back, broke = time.Now(), false
			}
		}
		// A lock no session holds is left, for a moment, to the run the
		// holder record names if its session just ended: it is taking
		// the lock back. Looked at before the lock is tried, so that
		// that run never finds it held by this one.
		regainingSince = 0
		var pid int32
		if err := conn.QueryRow(ctx, advisoryHeld, key).Scan(&pid); err != nil {
			return false, nil, s.failure("read the state's lock in", err)
		}
		if pid == 0 {
			h, ended, err := s.regaining(ctx, conn, !back.IsZero() && time.Since(back) < regainGrace)
			if err != nil || h != nil {
				regainingSince = ended
				if ended == 0 {
					regainingSince = -1 // the database came back: every session ended with it
				}
				return false, h, err
			}
		}
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&ok); err != nil {
			return false, nil, s.failure("take the stack's lock in", err)
		}
		if !ok {
			holder, err := s.holder(ctx, conn)
			return false, holder, err
		}
		w, err := s.workflowRow(ctx, conn)
		if err == nil && w != nil && !attach {
			// A workflow holds the state and no client is attached to
			// it: as held as a lock.
			_, err = conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, key)
			return false, &w.Holder, err
		}
		wf = w
		return err == nil, nil, err
	}
	wait := try
	if o.Timeout > 0 {
		// A run that waits for the lock rides out a restart of the
		// database, or a network cut, as the run it waits for does: it
		// connects again and goes on waiting, within its timeout (and
		// outage); when that ends with the database still away, that is
		// the error.
		waitCtx, cancel := context.WithTimeout(ctx, o.Timeout)
		defer cancel()
		wait = func() (taken bool, h *state.Holder, err error) {
			err = s.retry(waitCtx, "wait for the state's lock", func() error {
				taken, h, err = try()
				if err != nil {
					broke = true
					if conn != nil {
						// A new session for the next attempt: this one
						// broke, or may hold the advisory lock it failed
						// after.
						conn.Close(context.Background())
						conn = nil
					}
				}
				return err
			})
			return taken, h, err
		}
	}
	err := state.WaitLock(ctx, s.redacted, o, lockPoll, wait)
	var le *state.LockedError
	if errors.As(err, &le) && regainingSince != 0 {
		le.Regaining.Ended, le.Regaining.FreeIn = max(regainingSince, 0), regainGrace-max(regainingSince, 0)
	}
	if err != nil {
		return fail(err)
	}
	// A client cut off by the network keeps its session, and the lock, on
	// the server until TCP gives up (hours): a session idle past this ends,
	// and the lock with it. The watcher's pings keep a live run's busy.
	// (PostgreSQL 14 and later; older servers keep the default.)
	_, _ = conn.Exec(ctx, `SET idle_session_timeout = '30s'`)
	runID := h.RunID
	if wf != nil {
		// A client attaching to the workflow's run: the row stays the
		// workflow's, naming the client — but for since, which stays the
		// run's start: the next client to attach counts the run's duration
		// from it, not from this attach.
		runID, h.RunID, h.Workflow = wf.RunID, wf.RunID, wf.Workflow
		if !wf.Holder.Since.IsZero() {
			h.Since = wf.Holder.Since
		}
		data, _ := json.Marshal(h)
		_, err = conn.Exec(ctx, `UPDATE gantry_locks SET holder = $3, session_pid = pg_backend_pid() WHERE stack = $1 AND run_id = $2`,
			s.stack, runID, data)
	} else {
		data, _ := json.Marshal(h)
		_, err = conn.Exec(ctx, `INSERT INTO gantry_locks (stack, run_id, holder, session_pid, since)
		VALUES ($1, $2, `+aliveNow+`, pg_backend_pid(), now())
		ON CONFLICT (stack) DO UPDATE SET run_id = $2, holder = `+aliveNow+`, session_pid = pg_backend_pid(), since = now(), workflow = NULL`,
			s.stack, runID, data)
	}
	if err != nil {
		return fail(s.failure("record the state's lock holder in", err))
	}
	l := &lock{s: s, conn: conn, stack: s.stack, runID: runID, lost: make(chan struct{}), nudge: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	s.mu.Lock()
	s.runID, s.held = runID, l
	s.mu.Unlock()
	go l.watch()
	return l, wf, nil
}

// regainGrace is how long a run leaves the lock to the run its holder
// record names, once that run's session ended (the record says it was
// alive within this, or the database came back less than this ago): that
// run's watcher takes the lock back within a few seconds (keepAlive, then
// retry's backoff of up to lastRetry), and a run taking the lock first
// would make it lose the lock, and stop, for no one's fault. A variable
// for the tests.
var regainGrace = 3*lastRetry + 5*time.Second

// aliveNow is the holder record ($3) marked alive now: the lock's watcher
// marks it again at every check (heartbeat), so that a run finding the
// advisory lock free can tell a holder whose session ended a moment ago
// from one long gone. A key of the record, not a column: gantry that knows
// no heartbeat reads the record as before.
const aliveNow = `($3::jsonb || jsonb_build_object('alive', now()))`

// regaining reads the run the holder record names when it may be taking
// the lock back: its session ended less than regainGrace ago (ended: how
// long ago its record was last marked alive), or, with sinceBack, whatever
// the record says (the database came back a moment ago, and every session
// ended with it). nil when none is (or a workflow holds the lock: the
// advisory lock tells of that as it is).
func (s *Store) regaining(ctx context.Context, conn *pgx.Conn, sinceBack bool) (h *state.Holder, ended time.Duration, err error) {
	var data []byte
	var ago *float64
	err = conn.QueryRow(ctx, `SELECT holder, extract(epoch FROM now() - (holder->>'alive')::timestamptz)::float8
		FROM gantry_locks WHERE stack = $1 AND workflow IS NULL`, s.stack).Scan(&data, &ago)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, s.failure("read the state's lock in", err)
	}
	recent := ago != nil && *ago >= 0 && time.Duration(*ago*float64(time.Second)) < regainGrace
	if recent {
		ended = time.Duration(*ago * float64(time.Second))
	}
	if !recent && !sinceBack {
		return nil, 0, nil
	}
	var holder state.Holder
	if json.Unmarshal(data, &holder) != nil {
		return &state.Holder{}, ended, nil
	}
	if goneHere(holder) {
		// It died: no one is taking the lock back.
		return nil, 0, nil
	}
	return &holder, ended, nil
}

// goneHere reports whether the holder's process ran on this machine and
// is gone. A holder elsewhere, or one whose pid another process took
// since, is waited for the grace's length.
func goneHere(h state.Holder) bool {
	host, err := os.Hostname()
	if err != nil || h.Host != host || h.PID <= 0 {
		return false
	}
	return syscall.Kill(h.PID, 0) == syscall.ESRCH
}

// holder reads who holds the stack's lock: the holder record of the session
// that holds the advisory lock; nil when that session did not say.
func (s *Store) holder(ctx context.Context, conn *pgx.Conn) (*state.Holder, error) {
	var pid int32
	if err := conn.QueryRow(ctx, advisoryHeld, LockKey(s.stack)).Scan(&pid); err != nil {
		return nil, s.failure("read the state's lock in", err)
	}
	var data []byte
	err := conn.QueryRow(ctx, `SELECT holder FROM gantry_locks WHERE stack = $1 AND session_pid = $2`, s.stack, pid).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) || pid == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, s.failure("read the state's lock holder in", err)
	}
	var h state.Holder
	if json.Unmarshal(data, &h) != nil {
		return nil, nil
	}
	return &h, nil
}

// watch checks the lock's session now and then. A session that died (a
// server restart, a network cut) took the advisory lock with it: the lock
// is taken back on a new session as soon as the database answers, unless
// another run took it meanwhile — then Lost says so, and the fence refuses
// this run's writes.
func (l *lock) watch() {
	defer close(l.done)
	t := time.NewTicker(keepAlive)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		case <-l.nudge:
		}
		// A slow answer is not a dead session: the deadline is generous
		// (pgx closes a connection whose query it gives up on).
		ctx, cancel := context.WithTimeout(context.Background(), max(keepAlive, pingTimeout))
		err := l.currentConn().Ping(ctx)
		if err == nil {
			l.heartbeat(ctx)
		}
		cancel()
		if err == nil {
			continue
		}
		if err := l.regain(); err != nil {
			l.lostOnce.Do(func() {
				l.mu.Lock()
				l.why = err
				l.mu.Unlock()
				close(l.lost)
			})
			return
		}
	}
}

// pingTimeout bounds the watcher's check of the lock's session.
const pingTimeout = 10 * time.Second

// heartbeat marks the holder record alive now (aliveNow), softly: it waits
// for no lock on the record (a state write holds one until it commits) and
// for no standby, and a heartbeat that does not go through is tried again
// at the next check — what tells a live session from a dead one is the
// ping.
func (l *lock) heartbeat(ctx context.Context) {
	err := pgx.BeginFunc(ctx, l.currentConn(), func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '100ms'`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE gantry_locks SET holder = jsonb_set(holder, '{alive}', to_jsonb(now()))
			WHERE stack = $1 AND run_id = $2`, l.stack, l.runID)
		return err
	})
	if err != nil {
		slog.Debug("the state's lock record was not marked alive", "state", l.s.redacted, "err", l.s.scrub(err))
	}
}

// errOwnSession says the advisory lock is still held by the session this
// run lost: the server has not noticed it is gone yet. Retried (it is not
// the server's answer).
var errOwnSession = errors.New("the session this run lost still holds the stack's lock on the server")

// errRecordGone says this run's lock record was removed while its session
// was away (gantry unlock): another run may take the lock any moment.
var errRecordGone error = lockTaken("this run's lock record was removed (gantry unlock) while its database session was away")

// lockTaken is a reason a run's lock was taken from it (state.ErrLockTaken).
type lockTaken string

func (e lockTaken) Error() string        { return string(e) }
func (e lockTaken) Is(target error) bool { return target == state.ErrLockTaken }

// errTaken says another run holds the stack's lock, or held it since.
var errTaken error = lockTaken("another run took the state's lock")

// regain takes the lock back on a new session, retrying while the
// database is away; the error says why it could not: another run took it
// (errTaken), or the database stayed away past outage.
func (l *lock) regain() error {
	lostPID := l.currentConn().PgConn().PID()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-l.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := l.s.retry(ctx, "take the state's lock back", func() error {
		conn, err := l.s.connect(ctx)
		if err != nil {
			return err
		}
		_, _ = conn.Exec(ctx, `SET idle_session_timeout = '30s'`)
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, LockKey(l.stack)).Scan(&ok); err != nil {
			conn.Close(context.Background())
			return err
		}
		if !ok {
			// Held: by this run's own lost session, which the server
			// has not seen end yet (a network cut, a check given up
			// on), or by another run.
			err := errTaken
			var pid int32
			if conn.QueryRow(ctx, advisoryHeld, LockKey(l.stack)).Scan(&pid) == nil && (pid == 0 || uint32(pid) == lostPID) {
				if pid != 0 {
					_, _ = conn.Exec(ctx, `SELECT pg_terminate_backend($1)`, pid)
				}
				err = errOwnSession
			}
			conn.Close(context.Background())
			return err
		}
		// The holder record still names this run: nobody locked the stack
		// in between (a run that did rewrote it; gantry unlock removed it).
		tag, err := conn.Exec(ctx, `UPDATE gantry_locks SET session_pid = pg_backend_pid(), holder = jsonb_set(holder, '{alive}', to_jsonb(now()))
			WHERE stack = $1 AND run_id = $2`, l.stack, l.runID)
		if err == nil && tag.RowsAffected() != 1 {
			var other string
			err = errTaken
			if conn.QueryRow(ctx, `SELECT run_id FROM gantry_locks WHERE stack = $1`, l.stack).Scan(&other) == pgx.ErrNoRows {
				err = errRecordGone
			}
		}
		if err != nil {
			conn.Close(context.Background())
			return err
		}
		l.mu.Lock()
		old := l.conn
		l.conn = conn
		l.mu.Unlock()
		old.Close(context.Background())
		return nil
	})
	if err != nil {
		select {
		case <-l.stop: // the run is over: nothing more to start or write
		default:
			slog.Warn("the state's lock is lost: this run starts nothing more and writes nothing more to the state", "state", l.s.redacted, "err", l.s.scrub(err))
		}
		return l.s.scrub(err)
	}
	return nil
}

func (l *lock) currentConn() *pgx.Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conn
}

// check asks the watcher to check the lock's session now.
func (l *lock) check() {
	select {
	case l.nudge <- struct{}{}:
	default:
	}
}

// Lost is closed when the lock's session ended and was not taken back.
func (l *lock) Lost() <-chan struct{} { return l.lost }

// Why says why the lock was lost: state.ErrLockTaken when another run took
// it, else the database's error; nil while it is held.
func (l *lock) Why() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.why
}

// Release removes the holder record and ends the session, which releases
// the advisory lock.
func (l *lock) Release() error {
	l.releaseOnce.Do(func() { close(l.stop) })
	<-l.done
	ctx, cancel := context.WithTimeout(context.Background(), defaultConnectTimeout)
	defer cancel()
	conn := l.currentConn()
	// A row a workflow holds stays: the run goes on without its client.
	_, err := conn.Exec(ctx, `DELETE FROM gantry_locks WHERE stack = $1 AND session_pid = pg_backend_pid() AND workflow IS NULL`, l.stack)
	// Unlocked here, not by the session's end: the server ends a closed
	// session a moment later, and a run (or unlock) trying the lock at
	// once would find it still held.
	if err == nil {
		_, err = conn.Exec(ctx, `SELECT pg_advisory_unlock($1)`, LockKey(l.stack))
	}
	conn.Close(ctx)
	select {
	case <-l.lost:
		return nil // nothing of it was left to release
	default:
	}
	if err != nil {
		return fmt.Errorf("release the state's lock in %s: %w", l.s.redacted, l.s.scrub(err))
	}
	return nil
}

// Unlock removes the holder record of a session that is gone; a lock a
// live session holds is never broken.
func (s *Store) Unlock(ctx context.Context) (state.UnlockResult, error) {
	conn, err := s.session(ctx)
	if err != nil {
		return state.UnlockResult{}, err
	}
	stack, err := s.stackName(ctx, conn)
	if err != nil && unreachable(err) {
		return state.UnlockResult{}, s.failure("read the stacks in", err)
	}
	if err != nil || stack == "" {
		return state.UnlockResult{}, err
	}
	s.mu.Lock()
	s.stack = stack
	s.mu.Unlock()
	// A run whose session ended a moment ago is taking its lock back:
	// its record is not stale yet. Looked at before the lock is taken
	// below, which that run would read as taken by another run.
	var pid int32
	if err := conn.QueryRow(ctx, advisoryHeld, LockKey(stack)).Scan(&pid); err != nil {
		return state.UnlockResult{}, s.failure("read the state's lock in", err)
	}
	if pid == 0 {
		h, ended, err := s.regaining(ctx, conn, false)
		if err != nil {
			return state.UnlockResult{}, err
		}
		if h != nil {
			le := &state.LockedError{Path: s.redacted, Holder: h}
			le.Regaining.Ended, le.Regaining.FreeIn = ended, regainGrace-ended
			return state.UnlockResult{}, le
		}
	}
	// Holding the lock while the record goes: a run that takes it in
	// between would otherwise lose its own record.
	var free bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, LockKey(stack)).Scan(&free); err != nil {
		return state.UnlockResult{}, s.failure("read the state's lock in", err)
	}
	if !free {
		h, err := s.holder(ctx, conn)
		if err != nil {
			return state.UnlockResult{}, err
		}
		return state.UnlockResult{}, &state.LockedError{Path: s.redacted, Holder: h}
	}
	defer conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1)`, LockKey(stack))
	// A workflow's run holds the state without a session: only the engine
	// can tell it is gone (gantry unlock --engine).
	if w, err := s.workflowRow(ctx, conn); err != nil || w != nil {
		if err != nil {
			return state.UnlockResult{}, err
		}
		return state.UnlockResult{}, &state.LockedError{Path: s.redacted, Holder: &w.Holder}
	}
	var data []byte
	err = conn.QueryRow(ctx, `DELETE FROM gantry_locks WHERE stack = $1 RETURNING holder`, stack).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return state.UnlockResult{}, nil
	}
	if err != nil {
		return state.UnlockResult{}, s.failure("remove the stale lock in", err)
	}
	var h state.Holder
	if json.Unmarshal(data, &h) != nil {
		return state.UnlockResult{Stale: &state.Holder{}}, nil
	}
	return state.UnlockResult{Stale: &h}, nil
}

// HeldBy reports whether a run holds the stack's lock now: a session holds
// its advisory lock, or a workflow holds the state (state.LockProbe). It
// only reads.
func (s *Store) HeldBy(ctx context.Context) (bool, *state.Holder, error) {
	if s.stack == "" {
		return false, nil, nil
	}
	conn, err := s.connect(ctx)
	if err != nil {
		return false, nil, err
	}
	defer conn.Close(context.Background())
	var pid int32
	if err := conn.QueryRow(ctx, advisoryHeld, LockKey(s.stack)).Scan(&pid); err != nil {
		return false, nil, s.failure("read the state's lock in", err)
	}
	if pid != 0 {
		h, err := s.holder(ctx, conn)
		return true, h, err
	}
	w, err := s.workflowRow(ctx, conn)
	if err != nil || w == nil {
		return false, nil, err
	}
	return true, &w.Holder, nil
}
