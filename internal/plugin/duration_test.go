package plugin

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestIntervalArg: a probe's interval is at least 10 ms and fits a
// time.Duration; NaN, zero, negative, tiny and huge values are refused
// (1e300 wrapped round to a negative interval, 1e-300 rounded to zero:
// busy loops).
func TestIntervalArg(t *testing.T) {
	for _, tt := range []struct {
		v    any
		want time.Duration
		err  string
	}{
		{v: 2.5, want: 2500 * time.Millisecond},
		{v: int64(3), want: 3 * time.Second},
		{v: "0.1", want: 100 * time.Millisecond},
		{v: 0.01, want: 10 * time.Millisecond},
		{v: 0.0, err: "from 0.01 to 9223372036"},
		{v: -1.0, err: "from 0.01 to 9223372036"},
		{v: math.NaN(), err: "from 0.01 to 9223372036"},
		{v: 1e-300, err: "from 0.01 to 9223372036, got 1e-300"},
		{v: "1e-9", err: "from 0.01 to 9223372036"},
		{v: 0.005, err: "from 0.01 to 9223372036"},
		{v: 1e300, err: "from 0.01 to 9223372036"},
		{v: "9300000000", err: "from 0.01 to 9223372036"},
		{v: "soon", err: "must be a number of seconds"},
	} {
		got, err := intervalArg(map[string]any{"interval": tt.v}, "interval", time.Second)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("intervalArg(%v) = %v, %v; want an error saying %q", tt.v, got, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("intervalArg(%v) = %v, %v; want %v", tt.v, got, err, tt.want)
		}
	}
}
