package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/secret"
	"github.com/gantry-dev/gantry/internal/ui"
)

// heardAndReadEvents writes evs through an Events tapped by an
// EventCollector and returns the facts as the collector heard them (nil
// when it gave up) and as reading the file back gives them.
func heardAndReadEvents(t testing.TB, evs []ui.Event) (heard, read *runFacts) {
	return eventsHeardAndRead(t, func(events *ui.Events) {
		for _, ev := range evs {
			events.Emit(ev)
		}
	})
}

// eventsHeardAndRead has write write events through an Events tapped by an
// EventCollector, and returns the facts as heard and as read back.
func eventsHeardAndRead(t testing.TB, write func(*ui.Events)) (heard, read *runFacts) {
	path := filepath.Join(t.TempDir(), EventsFile)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	events := ui.NewEvents(f, "run-1")
	c := NewEventCollector()
	events.Tap(c)
	write(events)
	events.Flush()
	if err := events.Err(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	read, err = readEvents(path)
	if err != nil {
		t.Fatal(err)
	}
	return c.heard(), read
}

var factsOptions = cmp.Options{cmp.AllowUnexported(runFacts{}, stepRun{})}

// TestEventCollectorLikeFile: the facts a run's report takes from the
// events it heard are those reading its events file back gives, whatever
// the events hold.
func TestEventCollectorLikeFile(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 5, 0, 0, 123456789, time.UTC)
	berlin := time.FixedZone("CET", 3600)
	value := func(s string) *string { return &s }
	tests := []struct {
		name string
		evs  []ui.Event
	}{
		{name: "a run", evs: []ui.Event{
			{Time: t0, Event: "run_started", Stack: "s", Verb: "deploy", Components: []ui.ComponentJSON{{Name: "a", Verb: "deploy", Status: "waiting"}, {Name: "b", Verb: "deploy", Status: "waiting"}}},
			{Time: t0.Add(time.Millisecond), Event: "step_started", Step: "a/deploy", Component: "a"},
			{Time: t0.Add(2 * time.Millisecond), Event: "log", Step: "a/deploy", Component: "a", Line: value("hello")},
			{Time: t0.Add(3 * time.Millisecond), Event: "output", Step: "a/deploy", Component: "a", Name: "url", Value: value("http://a")},
			{Time: t0.Add(3 * time.Millisecond), Event: "output", Step: "a/deploy", Component: "a", Name: "db.password", Value: value("****")},
			{Time: t0.Add(3 * time.Millisecond), Event: "output", Step: "a/deploy", Component: "a", Name: "token", Value: value("****"), Secret: true},
			{Time: t0.Add(4 * time.Millisecond), Event: "output", Step: "a/deploy", Component: "a", Name: "url", Value: value("http://a2")},
			{Time: t0.Add(5 * time.Millisecond), Event: "step_finished", Step: "a/deploy", Component: "a", Status: "failed", Reason: "exit status 1", Warning: "on_fail: continue"},
			{Time: t0.Add(6 * time.Millisecond), Event: "run_finished", Status: "failed", Components: []ui.ComponentJSON{{Name: "a", Verb: "deploy", Status: "failed", DurationMS: 4, Reason: "exit status 1"}, {Name: "b", Verb: "deploy", Status: "skipped"}}},
		}},
		{name: "escapes and odd text", evs: []ui.Event{
			{Time: t0, Event: "step_started", Step: "a/<deploy>", Component: "a&b"},
			{Time: t0, Event: "step_finished", Step: "a/<deploy>", Component: "a&b", Status: "failed", Reason: "line1\nline2\t\"quoted\" \u2028 é 😀"},
			{Time: t0, Event: "output", Component: "a&b", Name: "n\\ame", Value: value("")},
		}},
		{name: "invalid UTF-8", evs: []ui.Event{
			{Time: t0, Event: "step_finished", Step: "a/deploy", Component: "a", Status: "failed", Reason: "bad \xff\xfe bytes"},
			{Time: t0, Event: "output", Component: "a", Name: "x\xc3", Value: value("v\xe2\x82")},
			{Time: t0, Event: "run_finished", Components: []ui.ComponentJSON{{Name: "a\xff", Verb: "deploy", Status: "ok"}}},
		}},
		{name: "times not in UTC, with a monotonic reading, going backwards", evs: []ui.Event{
			{Time: t0.In(berlin), Event: "run_started"},
			{Time: time.Now(), Event: "step_started", Step: "a/deploy"},
			{Time: t0, Event: "step_finished", Step: "a/deploy", Status: "ok"},
			{Event: "step_started", Step: "b/deploy"},
		}},
		{name: "a time no encoder writes: the event is not in the file, nor heard", evs: []ui.Event{
			{Time: t0, Event: "step_started", Step: "a/deploy"},
			{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Event: "step_finished", Step: "a/deploy", Status: "ok"},
			{Time: t0, Event: "step_started", Step: "b/deploy"},
		}},
		{name: "no events"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			heard, read := heardAndReadEvents(t, tt.evs)
			if heard == nil {
				t.Fatal("the collector gave up")
			}
			if diff := cmp.Diff(read, heard, factsOptions); diff != "" {
				t.Errorf("heard differs from read (-read +heard):\n%s", diff)
			}
		})
	}
}

// TestEventCollectorGivesUp: a line encoding/json wrote, or one too long
// for the file's reader, makes the collector give up: the report reads
// the file (and says what it cannot read).
func TestEventCollectorGivesUp(t *testing.T) {
	ev := &ui.Event{Time: time.Now().UTC(), Event: "step_started", Step: "a/deploy"}
	for name, line := range map[string][]byte{"encoding/json's line": nil, "a line too long": make([]byte, maxEventLine+1)} {
		c := NewEventCollector()
		c.HeardEvent(ev, []byte("{}\n"))
		c.HeardEvent(ev, line)
		c.HeardEvent(ev, []byte("{}\n"))
		if c.heard() != nil {
			t.Errorf("%s: the collector kept facts", name)
		}
	}
}

// TestEventCollectorThroughObservers: the events of steps as the executor
// reports them (StepStarted, StepFinished, outputs) give the same facts
// heard as read.
func TestEventCollectorThroughObservers(t *testing.T) {
	t0 := time.Now()
	n := &plan.Node{ID: "a/deploy", Kind: plan.KindComponent, Label: "deploy a", Component: "a"}
	skipped := &plan.Node{ID: "b/deploy", Kind: plan.KindComponent, Label: "deploy b", Component: "b"}
	heard, read := eventsHeardAndRead(t, func(events *ui.Events) {
		events.StepStarted(n, t0)
		events.Note(n, plan.Note{Kind: plan.NoteOutput, Name: "url", Value: "http://a"})
		events.Log(n, "a line", t0.Add(time.Millisecond))
		events.StepFinished(n, plan.Ok(), t0, t0.Add(1500*time.Microsecond))
		events.StepFinished(skipped, plan.Result{Status: plan.Skipped, Reason: "a failed"}, t0, t0.Add(time.Millisecond))
	})
	if heard == nil {
		t.Fatal("the collector gave up")
	}
	if diff := cmp.Diff(read, heard, factsOptions); diff != "" {
		t.Errorf("heard differs from read (-read +heard):\n%s", diff)
	}
}

// FuzzEventCollector: any text in any field, any time: the facts heard are
// the facts read, or the collector gives up.
func FuzzEventCollector(f *testing.F) {
	f.Add("step_finished", "a/deploy", "a", "failed", "why", "name", "value", int64(0), int64(0), false)
	f.Add("output", "a/deploy", "a\xff", "", "re\nason", "db.password", "v\u2028", int64(1e18), int64(3600), true)
	f.Add("run_finished", "", "", "ok", "", "", "", int64(-1e18), int64(-7200), false)
	f.Fuzz(func(t *testing.T, kind, step, comp, status, reason, name, value string, nanos, offset int64, secret bool) {
		// Times in UTC take the collector's own path; others are decoded
		// from their lines.
		at := time.Unix(0, nanos).UTC()
		if offset%2 != 0 {
			at = at.In(time.FixedZone("z", int(offset%(30*3600))))
		}
		ev := ui.Event{Time: at, Event: kind, Step: step, Component: comp, Status: status, Reason: reason, Warning: reason,
			Name: name, Value: &value, Secret: secret}
		if kind == "run_started" || kind == "run_finished" {
			ev.Components = []ui.ComponentJSON{{Name: comp, Verb: step, Status: status, Reason: reason, DurationMS: nanos}}
		}
		// A second event sees the first one's time, when it goes back.
		later := ui.Event{Time: at.Add(-time.Second), Event: "step_finished", Step: step, Component: comp, Status: status}
		heard, read := heardAndReadEvents(t, []ui.Event{ev, later})
		if heard == nil {
			return
		}
		if diff := cmp.Diff(read, heard, factsOptions); diff != "" {
			t.Errorf("heard differs from read (-read +heard):\n%s", diff)
		}
	})
}

// TestHeardModelLikeRead: the report of a run made from what it heard
// (its logs, its events, its plan's part worked out while it ran) is the
// report gantry report makes from the run's folder.
func TestHeardModelLikeRead(t *testing.T) {
	dir, p, heard := bigRunHeard(t, 120)
	heard.Plan = PreparePlan(p)
	got, err := LoadRunOf(dir, p, heard)
	if err != nil {
		t.Fatal(err)
	}
	want, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	got.Generated, want.Generated = "", ""
	// The plan read back from plan.json has empty lists where the run's
	// has none: the page's JSON is the same (omitempty).
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("heard differs from read (-read +heard):\n%s", diff)
	}
	// The plan's part is handed out once: a second report makes its own.
	again, err := LoadRunOf(dir, p, heard)
	if err != nil {
		t.Fatal(err)
	}
	again.Generated = ""
	if diff := cmp.Diff(want, again, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("second report differs from read (-read +heard):\n%s", diff)
	}
}

// TestHeardParamsNotReadBack: the report of a run that hands it the
// parameters it just kept is the one made from the folder, and does not
// read them back (a params.json spoiled after they were kept is not seen).
func TestHeardParamsNotReadBack(t *testing.T) {
	dir, p, heard := bigRunHeard(t, 30)
	params := &Params{
		Stack: []Param{
			NewParam("region", "", "eu-west-1", "hub.yaml:3", "", false, nil),
			NewParam("db.password", "", "hunter2", "env:DB_PASSWORD", "DB_PASSWORD", false, nil),
		},
		Components: map[string][]Param{
			"c0001": {NewParam("replicas", "", "3", "default", "", false, nil)},
			"c0007": {NewParam("token", "", "s3cr3t", "file:token.txt", "", true, nil)},
			// Not made by NewParam: masked all the same.
			"c0009": {{Name: "api.token", Value: "clear-t0ken", Source: "default"}},
		},
	}
	if err := SaveParams(dir, params); err != nil {
		t.Fatal(err)
	}
	want, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	heard.Params = params
	got, err := LoadRunOf(dir, p, heard)
	if err != nil {
		t.Fatal(err)
	}
	got.Generated, want.Generated = "", ""
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("heard parameters differ from read (-read +heard):\n%s", diff)
	}
	if len(got.Params) != 2 || !got.Params[1].Secret || got.Params[1].Value != secret.Mask {
		t.Errorf("stack parameters = %+v, want region and the masked password", got.Params)
	}
	var page bytes.Buffer
	if err := Write(&page, got); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"hunter2", "s3cr3t", "clear-t0ken"} {
		if bytes.Contains(page.Bytes(), []byte(s)) {
			t.Errorf("the page holds the secret %s", s)
		}
	}

	if err := os.WriteFile(filepath.Join(dir, ParamsFile), []byte("spoiled"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRun(dir); err == nil {
		t.Fatal("LoadRun read a spoiled params.json without an error: the test cannot tell a read")
	}
	if _, err := LoadRunOf(dir, p, heard); err != nil {
		t.Errorf("LoadRunOf with the parameters heard read them back: %v", err)
	}
}
