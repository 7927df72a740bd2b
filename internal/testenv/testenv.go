// Package testenv is what the tests of several packages share: the
// throwaway servers scripts/test.sh starts for them, found by the
// environment variables it exports, and a buffer to watch output in.
package testenv

import (
	"os"
	"testing"
)

// Server is the value of the variable env, where scripts/test.sh puts a
// test server's address (what: "PostgreSQL server"). Without one ("" or
// "0") the test skips, saying how to start one (start), except in CI
// (CI=true), where it fails: there the tests must run.
func Server(t testing.TB, env, what, start string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" || v == "0" {
		if os.Getenv("CI") == "true" {
			t.Fatal("no " + what + ": " + env + " is not set (scripts/test.sh starts one)")
		}
		t.Skip(env + " is not set: " + start)
	}
	return v
}
