package pgstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gantry-dev/gantry/internal/state"
)

// lockPoll is how often a run waiting for the lock tries again.
const lockPoll = 250 * time.Millisecond

// keepAlive is how often a held lock's session is checked: a session that
// died took the advisory lock with it. A variable for the tests.
var keepAlive = 5 * time.Second

// lockKey is the advisory lock of a stack: a 64-bit hash of its name, so
// that stacks in one database lock apart.
func lockKey(stack string) int64 {
	h := fnv.New64a()
	h.Write([]byte("gantry-stack\x00" + stack))
	return int64(h.Sum64())
}

// advisoryHeld is the session holding a stack's advisory lock, 0 when none:
// pg_locks shows a bigint key as its high and low halves.
const advisoryHeld = `SELECT coalesce((SELECT pid FROM pg_locks
	WHERE locktype = 'advisory' AND granted AND objsubid = 1
	  AND classid = (($1::bigint >> 32) & 4294967295)::bigint::oid
	  AND objid = ($1::bigint & 4294967295)::bigint::oid LIMIT 1), 0)`

// lock is a stack's advisory lock, held by a session of its own for the
// whole run.
type lock struct {
	s        *Store
	conn     *pgx.Conn
	stack    string
	lost     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	lostOnce sync.Once
}

// Lock takes the stack's session advisory lock, at once or within
// o.Timeout, and records who holds it; a holder that is waited for is told
// to o.Waiting whenever it changes.
func (s *Store) Lock(ctx context.Context, h state.Holder, o state.LockOptions) (state.Lock, error) {
	if s.stack == "" {
		return nil, errors.New("the state's lock needs the stack's name")
	}
	conn, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (state.Lock, error) {
		conn.Close(context.Background())
		return nil, err
	}
	key := lockKey(s.stack)
	var deadline time.Time
	if o.Timeout > 0 {
		deadline = time.Now().Add(o.Timeout)
	}
	var told *state.Holder
	for {
		var ok bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, key).Scan(&ok); err != nil {
			return fail(fmt.Errorf("lock the state in %s: %w", s.redacted, s.scrub(err)))
		}
		if ok {
			break
		}
		holder, err := s.holder(ctx, conn)
		if err != nil {
			return fail(err)
		}
		if deadline.IsZero() || !time.Now().Before(deadline) {
			return fail(&state.LockedError{Path: s.redacted, Holder: holder})
		}
		if o.Waiting != nil && (told == nil || holder != nil && *holder != *told) {
			o.Waiting(holder)
			if holder == nil {
				holder = &state.Holder{}
			}
			told = holder
		}
		t := time.NewTimer(min(lockPoll, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return fail(ctx.Err())
		case <-t.C:
		}
	}
	data, _ := json.Marshal(h)
	_, err = conn.Exec(ctx, `INSERT INTO gantry_locks (stack, run_id, holder, session_pid, since)
		VALUES ($1, $2, $3, pg_backend_pid(), now())
		ON CONFLICT (stack) DO UPDATE SET run_id = $2, holder = $3, session_pid = pg_backend_pid(), since = now()`,
		s.stack, h.RunID, data)
	if err != nil {
		return fail(fmt.Errorf("record the state's lock holder in %s: %w", s.redacted, s.scrub(err)))
	}
	s.mu.Lock()
	s.runID = h.RunID
	s.mu.Unlock()
	l := &lock{s: s, conn: conn, stack: s.stack, lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go l.watch()
	return l, nil
}

// holder reads who holds the stack's lock: the holder record of the session
// that holds the advisory lock; nil when that session did not say.
func (s *Store) holder(ctx context.Context, conn *pgx.Conn) (*state.Holder, error) {
	var pid int32
	if err := conn.QueryRow(ctx, advisoryHeld, lockKey(s.stack)).Scan(&pid); err != nil {
		return nil, fmt.Errorf("read the state's lock in %s: %w", s.redacted, s.scrub(err))
	}
	var data []byte
	err := conn.QueryRow(ctx, `SELECT holder FROM gantry_locks WHERE stack = $1 AND session_pid = $2`, s.stack, pid).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) || pid == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the state's lock holder in %s: %w", s.redacted, s.scrub(err))
	}
	var h state.Holder
	if json.Unmarshal(data, &h) != nil {
		return nil, nil
	}
	return &h, nil
}

// watch checks the lock's session now and then: when it is gone, the
// advisory lock went with it and Lost says so.
func (l *lock) watch() {
	defer close(l.done)
	t := time.NewTicker(keepAlive)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), keepAlive)
			err := l.conn.Ping(ctx)
			cancel()
			if err != nil {
				l.lostOnce.Do(func() { close(l.lost) })
				return
			}
		}
	}
}

// Lost is closed when the lock's session ended.
func (l *lock) Lost() <-chan struct{} { return l.lost }

// Release removes the holder record and ends the session, which releases
// the advisory lock.
func (l *lock) Release() error {
	close(l.stop)
	<-l.done
	ctx, cancel := context.WithTimeout(context.Background(), defaultConnectTimeout)
	defer cancel()
	_, err := l.conn.Exec(ctx, `DELETE FROM gantry_locks WHERE stack = $1 AND session_pid = pg_backend_pid()`, l.stack)
	l.conn.Close(ctx)
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
	if err != nil || stack == "" {
		return state.UnlockResult{}, err
	}
	s.mu.Lock()
	s.stack = stack
	s.mu.Unlock()
	var pid int32
	if err := conn.QueryRow(ctx, advisoryHeld, lockKey(stack)).Scan(&pid); err != nil {
		return state.UnlockResult{}, fmt.Errorf("read the state's lock in %s: %w", s.redacted, s.scrub(err))
	}
	if pid != 0 {
		h, err := s.holder(ctx, conn)
		if err != nil {
			return state.UnlockResult{}, err
		}
		return state.UnlockResult{}, &state.LockedError{Path: s.redacted, Holder: h}
	}
	var data []byte
	err = conn.QueryRow(ctx, `DELETE FROM gantry_locks WHERE stack = $1 RETURNING holder`, stack).Scan(&data)
	if errors.Is(err, pgx.ErrNoRows) {
		return state.UnlockResult{}, nil
	}
	if err != nil {
		return state.UnlockResult{}, fmt.Errorf("remove the stale lock in %s: %w", s.redacted, s.scrub(err))
	}
	var h state.Holder
	if json.Unmarshal(data, &h) != nil {
		return state.UnlockResult{Stale: &state.Holder{}}, nil
	}
	return state.UnlockResult{Stale: &h}, nil
}
