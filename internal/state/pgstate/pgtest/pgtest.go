// Package pgtest gives tests a database of their own on the throwaway
// PostgreSQL server that scripts/test.sh starts (scripts/pg/start.sh).
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/gantry-dev/gantry/internal/testenv"
)

// Server is the server's DSN (GANTRY_TEST_POSTGRES). Without one the test
// skips, except in CI, where it fails.
func Server(t testing.TB) string {
	t.Helper()
	return testenv.Server(t, "GANTRY_TEST_POSTGRES", "PostgreSQL server", "scripts/pg/start.sh DIR starts a server and writes its DSN to DIR/dsn")
}

// Database creates an empty database on the test server for one test and
// returns its URL; the test's end drops it.
func Database(t testing.TB) string {
	t.Helper()
	u, drop, err := NewDatabase(Server(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	return u
}

// NewDatabase creates an empty database on the server at dsn and returns
// its URL and what drops it.
func NewDatabase(dsn string) (string, func(), error) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return "", nil, err
	}
	defer conn.Close(ctx)
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "t_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, err
	}
	u, err := url.Parse(dsn)
	if err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	return u.String(), func() {
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return
		}
		defer conn.Close(ctx)
		_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	}, nil
}
