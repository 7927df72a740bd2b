// Package pgstate keeps stacks' states in PostgreSQL (DESIGN section 8): a
// row per stack and per component holding the same parts of the state
// document the file backend's journal records, every batch of changes
// written in one transaction, and a session advisory lock held for a run.
package pgstate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gantry-dev/gantry/internal/state"
)

func init() { state.RegisterBackend(Open, "postgres", "postgresql") }

// stackParam names the stack in a location's query, for the commands
// without a manifest when the database holds several stacks.
const stackParam = "stack"

// defaultConnectTimeout bounds a connection attempt unless the URL's
// connect_timeout says otherwise: an unreachable server is an error in
// seconds, not a hang.
const defaultConnectTimeout = 10 * time.Second

// Store is one stack's state in a PostgreSQL database.
type Store struct {
	location string // as given: it may hold the password
	redacted string
	cfg      *pgx.ConnConfig
	secret   string // the password, scrubbed from every error
	secret2  string // the client key's password (sslpassword)

	mu    sync.Mutex
	conn  *pgx.Conn // reads and writes; the lock has a session of its own
	stack string    // "" until found (a command without a manifest)
	runID string    // the run whose lock this store holds
	held  *lock
}

// Open opens the state of the stack named stack in the database at a
// postgres:// URL. Nothing is connected before the first use.
func Open(_ context.Context, location, stack string) (state.Store, error) {
	s := &Store{location: location, redacted: state.Redact(location)}
	u, err := url.Parse(location)
	if err != nil {
		return nil, fmt.Errorf("state %s: not a valid URL", s.redacted)
	}
	if u.User != nil {
		s.secret, _ = u.User.Password()
	}
	q := u.Query()
	if q.Has("password") {
		s.secret = q.Get("password")
	}
	if q.Has("sslpassword") {
		s.secret2 = q.Get("sslpassword")
	}
	if n := len(q[stackParam]); n > 1 {
		return nil, fmt.Errorf("state %s names a stack %d times (%s=): name it once", s.redacted, n, stackParam)
	}
	named := q.Get(stackParam)
	q.Del(stackParam)
	u.RawQuery = q.Encode()
	if named != "" && stack != "" && named != stack {
		return nil, fmt.Errorf("state %s names stack %q (stack=), but the stack here is %q", s.redacted, named, stack)
	}
	s.stack = stack
	if s.stack == "" {
		s.stack = named
	}
	s.cfg, err = pgx.ParseConfig(u.String())
	if err != nil {
		return nil, fmt.Errorf("state %s: %s", s.redacted, s.scrub(err))
	}
	if !q.Has("connect_timeout") {
		s.cfg.ConnectTimeout = defaultConnectTimeout
	}
	s.cfg.RuntimeParams["application_name"] = "gantry"
	return s, nil
}

func (s *Store) String() string { return s.redacted }

// Identity names the state the store holds the same however its URL is
// spelt (user, password, options, what the environment fills in): the
// server, the database and the stack ("" until found, for a command
// without a manifest). It holds no secret.
func (s *Store) Identity() string {
	host := net.JoinHostPort(s.cfg.Host, strconv.Itoa(int(s.cfg.Port)))
	return "postgres://" + host + "/" + url.PathEscape(s.cfg.Database) + "?" + stackParam + "=" + url.QueryEscape(s.Stack())
}

// Secrets are what the store's URL holds that no output may show: its
// password.
func (s *Store) Secrets() []string {
	var out []string
	for _, secret := range []string{s.secret, s.secret2} {
		if secret != "" {
			out = append(out, secret)
		}
	}
	return out
}

// scrub removes the password from an error's text: drivers quote what
// they were given.
func (s *Store) scrub(err error) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	for _, secret := range s.Secrets() {
		text = strings.ReplaceAll(text, secret, "*****")
	}
	if text == err.Error() {
		return err
	}
	return errors.New(text)
}

// connectError is a session that could not be opened.
type connectError struct{ err error }

func (e *connectError) Error() string { return e.err.Error() }
func (e *connectError) Unwrap() error { return e.err }

// connect opens a session with the schema migrated.
func (s *Store) connect(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, s.cfg)
	if err != nil {
		return nil, s.failure("connect to", err)
	}
	if err := migrate(ctx, conn); err != nil {
		conn.Close(context.Background())
		return nil, s.failure("prepare the gantry schema in", err)
	}
	return conn, nil
}

// session is the store's connection for reads and writes, opened on first
// use and again after it broke.
func (s *Store) session(ctx context.Context) (*pgx.Conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil && !s.conn.IsClosed() {
		return s.conn, nil
	}
	conn, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	s.conn = conn
	return conn, nil
}

// dropSession forgets a connection that failed, so that the next use
// connects again.
func (s *Store) dropSession(conn *pgx.Conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == conn {
		conn.Close(context.Background())
		s.conn = nil
	}
}

// stackName is the stack the store holds: the one named, or the only one
// the database holds.
func (s *Store) stackName(ctx context.Context, conn *pgx.Conn) (string, error) {
	s.mu.Lock()
	name := s.stack
	s.mu.Unlock()
	if name != "" {
		return name, nil
	}
	rows, err := conn.Query(ctx, `SELECT stack FROM gantry_stacks UNION SELECT stack FROM gantry_locks ORDER BY 1`)
	if err != nil {
		return "", err
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", err
	}
	switch len(names) {
	case 0:
		return "", nil
	case 1:
		s.mu.Lock()
		s.stack = names[0]
		s.mu.Unlock()
		return names[0], nil
	}
	return "", fmt.Errorf("%s holds the states of %d stacks (%s): name one with ?%s=NAME", s.redacted, len(names), strings.Join(names, ", "), stackParam)
}

// Read reads the stack's record and its components' in one snapshot of the
// database and assembles them into the state document. A database that
// cannot be reached is an error at once: a command that starts finds out.
func (s *Store) Read(ctx context.Context) (state.Files, error) {
	files, err := s.read(ctx)
	var ce *connectError
	if err != nil && !errors.As(err, &ce) && unreachable(err) {
		// The session broke since its last use — a restart while the
		// command waited for the lock — but the database may be there:
		// once more, on a new session.
		files, err = s.read(ctx)
	}
	return files, s.readError(err)
}

// ReadWaiting is Read for a run under way (a step on a worker taking in
// what the run's other workers recorded): while the database is away it
// waits for it, as the run's writes do (outage), instead of failing the
// step.
func (s *Store) ReadWaiting(ctx context.Context) (state.Files, error) {
	var files state.Files
	err := s.retry(ctx, "read the state", func() error {
		var err error
		files, err = s.read(ctx)
		return err
	})
	return files, s.readError(err)
}

// readError is the error of a read that failed: one that could not
// connect says so as it is (it names the database already).
func (s *Store) readError(err error) error {
	var ce *connectError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return ce.err
	}
	return s.failure("read the state from", err)
}

// read is one attempt at Read; a session that broke is dropped, so that
// the next attempt connects again.
func (s *Store) read(ctx context.Context) (state.Files, error) {
	conn, err := s.session(ctx)
	if err != nil {
		return state.Files{}, &connectError{err}
	}
	var files state.Files
	err = pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		stack, err := s.stackName(ctx, tx.Conn())
		if err != nil || stack == "" {
			return err
		}
		var header []byte
		err = tx.QueryRow(ctx, `SELECT header FROM gantry_stacks WHERE stack = $1`, stack).Scan(&header)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT name, record FROM gantry_components WHERE stack = $1`, stack)
		if err != nil {
			return err
		}
		frags := map[string][]byte{}
		var names []string
		var name string
		var record []byte
		_, err = pgx.ForEachRow(rows, []any{&name, &record}, func() error {
			frags[name] = record
			names = append(names, name)
			return nil
		})
		if err != nil {
			return err
		}
		slices.Sort(names)
		files.Snapshot = state.Assemble(header, frags, names)
		return nil
	})
	if err != nil {
		if isConnError(err) || unreachable(err) {
			s.dropSession(conn)
		}
		return state.Files{}, err
	}
	return files, nil
}

// Close closes the store's sessions.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		s.conn.Close(context.Background())
		s.conn = nil
	}
	return nil
}

// isConnError tells a broken connection from an error the server reported.
func isConnError(err error) bool {
	var pe *pgconn.PgError
	return !errors.As(err, &pe)
}
