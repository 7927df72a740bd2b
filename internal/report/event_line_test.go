package report

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var eventLines = []string{
	`{"time":"2026-11-26T20:29:03.559718947Z","event":"step_started","run":"20261126T202903Z-6fa62d","step":"stack/setup","kind":"setup","label":"record the start of the run"}`,
	`{"time":"2026-11-26T20:29:03.560872977Z","event":"step_finished","run":"r","step":"db/deploy","kind":"component","label":"deploy db","component":"db","status":"ok","duration_ms":1}`,
	`{"time":"2026-11-26T20:29:03Z","event":"output","component":"db","name":"db.password","value":"*****","secret":true}`,
	`{"time":"2026-11-26T20:29:03Z","event":"output","component":"db","name":"host","value":null,"secret":false}`,
	`{"time":"2026-11-26T20:29:03Z","event":"run_finished","status":"failed","components":[{"name":"db","verb":"deploy","status":"failed","duration_ms":3}]}`,
	`{"time":"2026-11-26T20:29:03Z","event":"step_finished","step":"a\"b","reason":"line\nbreak"}`,
	`{"time":"2026-11-26T20:29:03Z","event":"step_finished","step":"héllo","reason":"ok"}`,
	`{"Time":"2026-11-26T20:29:03Z","EVENT":"step_started","Step":"x"}`,
	`{"time":"2026-11-26T24:00:00Z","event":"step_started"}`,
	`{"time":"not a time","event":"step_started"}`,
	`{"time":null,"event":null,"step":"s","step":"t","secret":null}`,
	`{"step":true}`,
	`{"secret":"yes"}`,
	`{"duration_ms":1e400}`,
	`{"duration_ms":-0.5e3,"x":[1,2]}`,
	` { "event" : "step_started" , "step":"s" } `,
	`{}`,
	`{"event":"step_started",}`,
	`{"event":"step_started"`,
	`[]`,
	`{"event":"step_started"} x`,
	`{"value":"a","value":null}`,
	`{"nul":nullx}`,
}

// TestDecodeEventLikeUnmarshal: every line reads as json.Unmarshal reads it,
// the fast way or not.
func TestDecodeEventLikeUnmarshal(t *testing.T) {
	for _, line := range eventLines {
		checkDecodeEvent(t, []byte(line))
	}
	// The lines gantry writes take the fast way.
	for _, line := range eventLines[:4] {
		var ev event
		if !decodeFlatEvent([]byte(line), &ev) {
			t.Errorf("not read directly: %s", line)
		}
	}
}

func checkDecodeEvent(t *testing.T, line []byte) {
	t.Helper()
	var want, got event
	werr := json.Unmarshal(line, &want)
	gerr := decodeEvent(line, &got)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%q: json.Unmarshal: %v; decodeEvent: %v", line, werr, gerr)
	}
	if werr != nil {
		return
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("%q (-json.Unmarshal +decodeEvent):\n%s", line, diff)
	}
}

// FuzzDecodeEvent: decodeEvent reads anything as json.Unmarshal does.
func FuzzDecodeEvent(f *testing.F) {
	for _, line := range eventLines {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkDecodeEvent(t, line)
	})
}
