package plugin

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestDurationArg: a probe's seconds are positive and fit a time.Duration;
// NaN, zero, negative and huge values are refused (1e300 wrapped round to
// a negative interval: a busy loop).
func TestDurationArg(t *testing.T) {
	for _, tt := range []struct {
		v    any
		want time.Duration
		err  string
	}{
		{v: 2.5, want: 2500 * time.Millisecond},
		{v: int64(3), want: 3 * time.Second},
		{v: "0.1", want: 100 * time.Millisecond},
		{v: 0.0, err: "positive number of seconds"},
		{v: -1.0, err: "positive number of seconds"},
		{v: math.NaN(), err: "positive number of seconds"},
		{v: 1e300, err: "of at most 9223372036"},
		{v: "9300000000", err: "of at most 9223372036"},
		{v: "soon", err: "must be a number of seconds"},
	} {
		got, err := durationArg(map[string]any{"interval": tt.v}, "interval", time.Second)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("durationArg(%v) = %v, %v; want an error saying %q", tt.v, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("durationArg(%v) = %v, %v; want %v", tt.v, got, err, tt.want)
		}
	}
}
