package report

import (
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gantry-dev/gantry/internal/ui"
)

// EventCollector hears a run's events as they are written (ui.Events.Tap)
// and keeps what its report reads of them: the run that just ended then
// need not decode its events file again (a third of a report's time at
// 1,000 components). What it keeps is what reading the file back gives
// (TestEventCollectorLikeFile, FuzzEventCollector): the events whose
// strings are valid UTF-8, as almost all are, are taken as they are, and
// the others are decoded from their lines, as the file's reader does
// (encoding replaced their invalid bytes).
type EventCollector struct {
	mu    sync.Mutex
	facts *runFacts
	// spoiled says a line was written that the collector could not take
	// (one encoding/json wrote, or one too long for the file's reader):
	// the report then reads the file.
	spoiled bool
	// ev is the event being taken in (c.mu held).
	ev event
}

// NewEventCollector starts an empty collector.
func NewEventCollector() *EventCollector {
	return &EventCollector{facts: newRunFacts()}
}

// HeardEvent takes in one event (ui.EventTap).
func (c *EventCollector) HeardEvent(ev *ui.Event, line []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.spoiled {
		return
	}
	if line == nil || len(line) > maxEventLine {
		c.spoiled = true
		return
	}
	if ev.Event == "log" {
		return // the report reads logs from the log files
	}
	// Decoded into c.ev, which json.Unmarshal can point into without an
	// allocation per event; zeroed first, as readEvents' fresh event is.
	c.ev = event{}
	if !heardEvent(ev, &c.ev) && decodeEvent(line, &c.ev) != nil {
		c.spoiled = true
		return
	}
	c.facts.add(&c.ev)
}

// heard gives the facts heard, or nil when the file must be read instead.
func (c *EventCollector) heard() *runFacts {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.spoiled {
		return nil
	}
	return c.facts
}

// heardEvent makes the part of an event the report reads as decoding its
// line would: false when a string is not valid UTF-8 (its line holds it
// changed).
func heardEvent(ev *ui.Event, e *event) bool {
	if !validStrings(ev.Event, ev.Step, ev.Component, ev.Status, ev.Reason, ev.Warning, ev.Info, ev.Name) {
		return false
	}
	if ev.Value != nil && !utf8.ValidString(*ev.Value) {
		return false
	}
	// A time the line gave in UTC reads back as the same time in UTC; and
	// with no monotonic reading (Round(0)), as its line holds none.
	if ev.Time.Location() != time.UTC {
		return false
	}
	for _, c := range ev.Components {
		if !validStrings(c.Name, c.Verb, c.Status, c.Reason) {
			return false
		}
	}
	*e = event{Time: ev.Time.Round(0), Event: ev.Event, Step: ev.Step, Component: ev.Component, Status: ev.Status,
		Reason: ev.Reason, Warning: ev.Warning, Info: ev.Info, Name: ev.Name, Secret: ev.Secret}
	if ev.Value != nil {
		v := *ev.Value
		e.Value = &v
	}
	if len(ev.Components) > 0 {
		// Kept by the facts; the event's are its caller's.
		e.Components = append([]ui.ComponentJSON(nil), ev.Components...)
	}
	return true
}

func validStrings(ss ...string) bool {
	for _, s := range ss {
		if !utf8.ValidString(s) {
			return false
		}
	}
	return true
}
