package pgstate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/state/pgstate/pgtest"
)

// TestUnreachable: a database that cannot be reached or went away is a
// *state.UnavailableError (commands exit 1 for it), an answer it gave is
// not (a wrong password, a missing table, a serialization failure).
func TestUnreachable(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", fmt.Errorf("dial error: %w", dial), true},
		{"unknown host", &net.DNSError{Err: "no such host", Name: "db.invalid", IsNotFound: true}, true},
		{"connection cut", io.ErrUnexpectedEOF, true},
		{"out of connection slots", &pgconn.PgError{Code: "53300", Message: "remaining connection slots are reserved"}, true},
		{"server restarting", &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}, true},
		{"server starting", &pgconn.PgError{Code: "57P03", Message: "the database system is starting up"}, true},
		{"connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"wrong password", &pgconn.PgError{Code: "28P01", Message: "password authentication failed"}, false},
		{"no such database", &pgconn.PgError{Code: "3D000"}, false},
		{"no privilege", &pgconn.PgError{Code: "42501"}, false},
		{"serialization failure", &pgconn.PgError{Code: "40001"}, false},
		{"gantry's own", errors.New("the database's gantry schema is version 9"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Store{redacted: "postgres://u:*****@h/db"}
			err := s.failure("read the state from", tc.err)
			if got := state.IsUnavailable(err); got != tc.want {
				t.Errorf("IsUnavailable(%v) = %v, want %v", err, got, tc.want)
			}
			if got, want := state.IsRefused(err), Refused(tc.err); got != want {
				t.Errorf("IsRefused(%v) = %v, want %v", err, got, want)
			}
			if want := "read the state from postgres://u:*****@h/db: "; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
				t.Errorf("the error does not say what failed where: %v", err)
			}
		})
	}
}

// TestUnavailableFromEveryEntry: a closed port is unavailable to every use
// of a store a command starts with (read, lock, unlock); a wrong password on
// a live server is not.
func TestUnavailableFromEveryEntry(t *testing.T) {
	ctx := context.Background()
	dead := open(t, "postgres://u:pw@127.0.0.1:1/db?sslmode=disable&connect_timeout=2", "demo")
	_, rerr := dead.Read(ctx)
	_, lerr := dead.Lock(ctx, holder("r1"), state.LockOptions{})
	_, uerr := dead.Unlock(ctx)
	for what, err := range map[string]error{"read": rerr, "lock": lerr, "unlock": uerr} {
		if !state.IsUnavailable(err) {
			t.Errorf("%s of a closed port: %v, want a *state.UnavailableError", what, err)
		}
	}
	u, err := url.Parse(pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), "not-the-password")
	if _, err := open(t, u.String(), "demo").Read(ctx); err == nil || state.IsUnavailable(err) || !state.IsRefused(err) {
		t.Errorf("read with a wrong password: %v, want a *state.RefusedError", err)
	}
}
