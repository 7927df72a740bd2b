package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/jsonstr"
)

// jsonEvent is an event as encoding/json writes it: what appendEvent must
// write, byte for byte.
func jsonEvent(t testing.TB, ev Event) []byte {
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(ev); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// awkward are strings whose escapes differ between encoders.
var awkward = []string{"", "plain", "quote \" back \\ slash", "<tag>&amp;", "\b\f\n\r\t\x00\x1f\x7f",
	"é 日本 🚀", "bad \xff\xfe utf8 \xc3", "line\u2028para\u2029", "\u00a0\ufeff", "%s {{.}} ${x}"}

func randEvent(r *rand.Rand) Event {
	str := func() string {
		if r.Intn(3) == 0 {
			return ""
		}
		if r.Intn(2) == 0 {
			return awkward[r.Intn(len(awkward))]
		}
		b := make([]byte, r.Intn(12))
		for i := range b {
			b[i] = byte(r.Intn(256))
		}
		return string(b)
	}
	ptr := func() *string {
		if r.Intn(2) == 0 {
			return nil
		}
		s := str()
		return &s
	}
	ev := Event{Time: time.Unix(r.Int63n(1<<34)-1<<33, r.Int63n(1e9)).In(time.FixedZone("z", (r.Intn(48)-24)*1800)),
		Event: str(), Run: str(), Stack: str(), Verb: str(), Step: str(), Kind: str(), Label: str(), Component: str(),
		Status: str(), Reason: str(), Warning: str(), Info: str(), Line: ptr(), Name: str(), Value: ptr(), Secret: r.Intn(2) == 0, LogDir: str()}
	if r.Intn(2) == 0 {
		d := r.Int63() - r.Int63()
		ev.DurationMS = &d
	}
	for i := r.Intn(4); i > 0; i-- {
		ev.Components = append(ev.Components, ComponentJSON{Name: str(), Verb: str(), Status: str(), DurationMS: r.Int63n(1e6), Reason: str()})
	}
	if r.Intn(2) == 0 {
		ev.Components = []ComponentJSON{} // empty, not nil: omitted as well
	}
	return ev
}

func TestAppendEventIsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewSource(20261125))
	for i := range 3000 {
		ev := randEvent(r)
		got, ok := appendEvent(nil, &ev)
		if !ok {
			continue
		}
		if want := jsonEvent(t, ev); !bytes.Equal(got, want) {
			t.Fatalf("event %d:\n got %s\nwant %s", i, got, want)
		}
	}
	for _, s := range awkward {
		if got, want := jsonstr.Append(nil, s), jsonEvent(t, Event{Event: s}); !bytes.Contains(want, got) {
			t.Errorf("%q: %s, not in %s", s, got, want)
		}
	}
}

// TestEmitFallsBack: what appendEvent cannot write goes through
// encoding/json, whose rules for it stand.
func TestEmitFallsBack(t *testing.T) {
	var b bytes.Buffer
	e := NewEvents(&b, "run")
	e.Emit(Event{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Event: "x"})
	e.Emit(Event{Time: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Event: "y"})
	e.Flush()
	if got := b.String(); got != `{"time":"2026-01-01T00:00:00Z","event":"y","run":"run"}`+"\n" {
		t.Errorf("events written: %q", got)
	}
}

func BenchmarkEmit(b *testing.B) {
	var sink bytes.Buffer
	e := NewEvents(&sink, "20261125T041119Z-c92432")
	d := int64(3)
	ev := Event{Time: time.Now().UTC(), Event: "step_finished", Step: "n00001/deploy", Kind: "component", Label: "deploy n00001",
		Component: "n00001", Status: "skipped", DurationMS: &d, Reason: "unchanged"}
	b.ReportAllocs()
	for b.Loop() {
		e.Emit(ev)
		if sink.Len() > 1<<20 {
			e.Flush()
			sink.Reset()
		}
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestEventsErr: a stream that could not be written says so once flushed,
// so that nobody takes what a tap heard for what it holds.
func TestEventsErr(t *testing.T) {
	e := NewEvents(failingWriter{}, "run")
	e.Emit(Event{Event: "step_started", Step: "a/deploy"})
	if err := e.Err(); err != nil {
		t.Fatalf("Err before the buffer was written: %v", err)
	}
	e.Flush()
	if err := e.Err(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Err after a failed flush = %v, want the write's error", err)
	}
	ok := NewEvents(io.Discard, "run")
	ok.Emit(Event{Event: "step_started", Step: "a/deploy"})
	ok.Flush()
	if err := ok.Err(); err != nil {
		t.Fatalf("Err of a stream written whole = %v", err)
	}
}
