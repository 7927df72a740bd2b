package pgstate

import (
	"context"
	"strings"
	"testing"
)

// TestOpenRefusesTwoStacks: a location naming the stack twice is refused
// (the first one won, in silence), without its password.
func TestOpenRefusesTwoStacks(t *testing.T) {
	_, err := Open(context.Background(), "postgres://u:s3cr3t-pw@db:5432/gantry?stack=chain&stack=kl", "")
	if err == nil || !strings.Contains(err.Error(), "names a stack 2 times (stack=): name it once") || strings.Contains(err.Error(), "s3cr3t-pw") {
		t.Errorf("Open = %v", err)
	}
	if _, err := Open(context.Background(), "postgres://u@db/gantry?stack=chain", ""); err != nil {
		t.Errorf("one stack refused: %v", err)
	}
}
