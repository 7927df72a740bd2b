package action

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/state"
)

// TestMigrateNeverOverwritesWhatMayBeNewer: a state at the destination that
// was updated later than the source, or in the same second (states record
// the second only), is refused without --force; the same state is nothing
// to do; an older one is overwritten.
func TestMigrateNeverOverwritesWhatMayBeNewer(t *testing.T) {
	at := time.Date(2026, 11, 26, 18, 0, 0, 0, time.UTC)
	stateOf := func(updated time.Time, status string) *state.State {
		return &state.State{Version: state.FormatVersion, Stack: "mig", Status: status, Updated: updated,
			Components: map[string]*state.Component{"a": {Status: status}}}
	}
	tests := []struct {
		name     string
		from, to *state.State
		force    bool
		wantErr  string // "" for a copy
		wantSame bool
	}{
		{"newer there", stateOf(at, "deployed"), stateOf(at.Add(time.Second), "failed"), false, "holds a newer state", false},
		{"same second another state", stateOf(at, "deployed"), stateOf(at, "failed"), false, "updated in the same second", false},
		{"same second forced", stateOf(at, "deployed"), stateOf(at, "failed"), true, "", false},
		{"newer there forced", stateOf(at, "deployed"), stateOf(at.Add(time.Second), "failed"), true, "", false},
		{"older there", stateOf(at.Add(time.Second), "deployed"), stateOf(at, "failed"), false, "", false},
		{"the same state", stateOf(at, "deployed"), stateOf(at, "deployed"), false, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			from, to := filepath.Join(dir, "from.state"), filepath.Join(dir, "to.state")
			for path, st := range map[string]*state.State{from: tt.from, to: tt.to} {
				b, err := state.Encode(st)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := os.ReadFile(to)
			out, err := (&Migrate{From: from, To: to, Force: tt.force}).Run(context.Background())
			after, _ := os.ReadFile(to)
			if tt.wantErr != "" {
				var inv *InvalidError
				if err == nil || !errors.As(err, &inv) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want an invalid-input error saying %q", err, tt.wantErr)
				}
				if string(after) != string(before) {
					t.Errorf("the destination changed although the copy was refused")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.Same != tt.wantSame {
				t.Errorf("Same = %v, want %v", out.Same, tt.wantSame)
			}
			got, err := state.ReadFile(to)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.from.Status || !got.Updated.Equal(tt.from.Updated) {
				t.Errorf("destination holds status %s updated %s, want the source's %s updated %s", got.Status, got.Updated, tt.from.Status, tt.from.Updated)
			}
		})
	}
}
