package terraform

import (
	"context"
	"io"
	"testing"
)

// handed says whether the turn went to the waiter c.
func handed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// TestTurnQueue: the turn goes to the waiters in the order they came; one
// that leaves is skipped, and one that leaves after the turn reached it
// hands it on.
func TestTurnQueue(t *testing.T) {
	var q turnQueue
	if c := q.take(); c != nil {
		t.Fatal("a free turn was not taken at once")
	}
	a, b, c := q.take(), q.take(), q.take()
	if a == nil || b == nil || c == nil {
		t.Fatal("a taken turn was taken again")
	}
	q.leave(b) // b gives up while queued
	q.release()
	if !handed(a) || handed(c) {
		t.Fatal("the turn did not go to the first waiter alone")
	}
	if err := q.wait(context.Background(), a); err != nil {
		t.Fatalf("a waiter given the turn: %v", err)
	}
	q.release()
	if !handed(c) {
		t.Fatal("the turn did not reach the waiter still queued")
	}
	// c had the turn handed to it, then leaves (interrupted): it goes on,
	// here to nobody, so it is free.
	q.leave(c)
	if d := q.take(); d != nil {
		t.Fatal("a turn left by its holder was not free")
	}
	// An interrupted wait leaves the queue.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e := q.take()
	if err := q.wait(ctx, e); err == nil {
		t.Fatal("a wait with its context ended did not end")
	}
	q.release()
	if q.taken || len(q.waiters) != 0 {
		t.Fatalf("released with nobody waiting: taken %v, %d waiting", q.taken, len(q.waiters))
	}
}

// TestUnlockTwice: calling a lock's unlock again, after another init took
// the cache, leaves that init's turn alone.
func TestUnlockTwice(t *testing.T) {
	cache := t.TempDir()
	first, err := lockPluginCaches(context.Background(), []string{cache}, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	first()
	second, err := lockPluginCaches(context.Background(), []string{cache}, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer second()
	first()
	if q := cacheTurn(cache); !q.taken {
		t.Fatal("a second unlock of the first init freed the turn the second holds")
	}
}
