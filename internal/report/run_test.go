package report

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/secret"
	"github.com/gantry-dev/gantry/internal/ui"
)

// The secret of the fake run: the db's password, which its script prints.
const fakeSecret = "Sup3r-Secret-Pw"

// fakePlan is the plan of a small stack: a pre-flight check, then net;
// db and cache after net (cache optional); api after db.
func fakePlan(t testing.TB) *plan.Plan {
	t.Helper()
	p := plan.New("shop", plan.VerbDeploy)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	p.Add(&plan.Node{ID: "pre-flight/tools", Kind: plan.KindStandard, Label: "check tools: make", Group: "pre-flight", Critical: true, Spec: plan.Tools{Tools: []string{"make"}}})
	comps := []struct {
		name      string
		after     []string
		mandatory bool
	}{{"net", nil, true}, {"db", []string{"net"}, true}, {"api", []string{"db"}, true}, {"cache", []string{"net"}, false}}
	for _, c := range comps {
		p.Add(&plan.Node{ID: c.name + "/begin", Kind: plan.KindBegin, Label: c.name + ": prepare", Component: c.name, Group: c.name, Hidden: true, Critical: c.mandatory, Spec: plan.Begin{Component: c.name}})
		p.Add(&plan.Node{ID: c.name + "/deploy", Kind: plan.KindComponent, Label: "deploy " + c.name, Component: c.name, Group: c.name, Action: "deploy", Verb: "deploy", Critical: c.mandatory, Spec: plan.Verb{Component: c.name, Verb: "deploy"}})
		p.Add(&plan.Node{ID: c.name + "/end", Kind: plan.KindEnd, Label: c.name + ": done", Component: c.name, Group: c.name, Hidden: true, Critical: c.mandatory, Always: true, Spec: plan.End{Component: c.name}})
		must(p.Connect(c.name+"/begin", c.name+"/deploy", plan.OnSuccess))
		must(p.Connect(c.name+"/deploy", c.name+"/end", plan.OnComplete))
		if len(c.after) == 0 {
			must(p.Connect("pre-flight/tools", c.name+"/begin", plan.OnSuccess))
		}
		for _, up := range c.after {
			must(p.Connect(up+"/end", c.name+"/begin", plan.OnSuccess))
		}
		p.Components[c.name] = &plan.Component{Name: c.name, Verb: "deploy", Action: "deploy", After: c.after, Depends: c.after}
	}
	p.Components["db"].Links = map[string][]plan.Link{"net": {{Kind: plan.LinkDepends}, {Kind: plan.LinkOutput, What: "net.cidr"}}}
	return p
}

// fakeStep is what one step of the fake run does, at milliseconds since
// the run started.
type fakeStep struct {
	id         string
	start, end int
	result     plan.Result
	lines      []string
	outputs    []plan.Note
}

// fakeRun writes the folder of a run of fakePlan as a run does, through
// the same observers (behind the masking of secrets): net deploys and
// prints an output; db prints the secret and fails; api is skipped; the
// optional cache deploys and ends last, with a secret output.
func fakeRun(t testing.TB) (dir string, p *plan.Plan) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "20260101T000000Z-abcdef")
	p = fakePlan(t)
	runLog, err := ui.NewRunLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	events := ui.NewEvents(f, filepath.Base(dir))
	tracker := ui.NewTracker(p)
	masker := secret.NewMasker(fakeSecret)
	obs := ui.Masked{Masker: masker, Next: ui.Multi{tracker, runLog, events}}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	events.Emit(ui.Event{Time: t0, Event: "run_started", Stack: p.Stack, Verb: p.Verb, Components: ui.Components(tracker.Components())})
	fail := plan.Fail(errors.New("make deploy exited with status 2"))
	steps := []fakeStep{
		{id: "pre-flight/tools", start: 0, end: 2, result: plan.Ok()},
		{id: "net/begin", start: 2, end: 3, result: plan.Ok()},
		{id: "net/deploy", start: 3, end: 300, result: plan.Ok(), lines: []string{"creating network"},
			outputs: []plan.Note{{Kind: plan.NoteOutput, Name: "net.cidr", Value: "10.0.0.0/16"}}},
		{id: "net/end", start: 300, end: 301, result: plan.Ok()},
		{id: "db/begin", start: 301, end: 302, result: plan.Ok()},
		{id: "cache/begin", start: 400, end: 401, result: plan.Ok()},
		{id: "db/deploy", start: 302, end: 540, result: fail, lines: []string{"connecting with " + fakeSecret, "retry 1", "ERROR: connection refused to db.local:5432"}},
		{id: "db/end", start: 540, end: 541, result: plan.Skip(plan.CauseUpstream, "db failed")},
		{id: "api/begin", start: 541, end: 541, result: plan.Skip(plan.CauseUpstream, "db failed")},
		{id: "api/deploy", start: 541, end: 541, result: plan.Skip(plan.CauseUpstream, "db failed")},
		{id: "api/end", start: 541, end: 542, result: plan.Skip(plan.CauseUpstream, "db failed")},
		{id: "cache/deploy", start: 401, end: 900, result: plan.Ok(), lines: []string{"cache warming", "\x1b[32mcache ready\x1b[0m\x1b]0;title\x07"},
			outputs: []plan.Note{{Kind: plan.NoteOutput, Name: "cache.url", Value: "redis://cache"}, {Kind: plan.NoteOutput, Name: "cache.token", Value: "T0ken-Value", Secret: true}}},
		{id: "cache/end", start: 900, end: 901, result: plan.Ok()},
	}
	// The executor's events, in the order of their times: a step's start
	// with its lines and outputs, its end; a skipped step has only its end.
	type fed struct {
		ms    int
		step  fakeStep
		start bool
	}
	var feed []fed
	for _, s := range steps {
		if s.result.Status != plan.Skipped {
			feed = append(feed, fed{s.start, s, true})
		}
		feed = append(feed, fed{s.end, s, false})
	}
	sort.SliceStable(feed, func(i, j int) bool { return feed[i].ms < feed[j].ms })
	var now time.Time
	events.SetClock(func() time.Time { return now })
	for _, f := range feed {
		n, s := p.Node(f.step.id), f.step
		now = at(f.ms)
		if !f.start {
			obs.StepFinished(n, s.result, at(s.start), at(s.end))
			continue
		}
		obs.StepStarted(n, at(s.start))
		for _, l := range s.lines {
			obs.Log(n, l, now)
		}
		for _, o := range s.outputs {
			o.At = now
			obs.Note(n, o)
		}
	}
	events.Emit(ui.Event{Time: at(905), Event: "run_finished", Stack: p.Stack, Verb: p.Verb, Status: "failed", Components: ui.Components(tracker.Components())})
	events.Flush()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := runLog.Close(); err != nil {
		t.Fatal(err)
	}
	pf, err := os.Create(filepath.Join(dir, PlanFile))
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(pf)
	if err := p.EncodeJSON(bw, false); err != nil {
		t.Fatal(err)
	}
	_ = bw.Flush()
	_ = pf.Close()
	sf, _ := os.Create(filepath.Join(dir, SummaryFile))
	ui.WriteSummary(sf, tracker.Components(), 905*time.Millisecond)
	_ = sf.Close()
	params := &Params{
		Stack: []Param{NewParam("db.password", "", fakeSecret, "hub.yaml:20", "", false, masker.Text), NewParam("db.host", "", "db.local", "hub.yaml:22", "", false, masker.Text)},
		Components: map[string][]Param{"db": {
			NewParam("db.password", "", fakeSecret, "hub.yaml:20", "PASSWORD", false, masker.Text),
			NewParam("conn", "", "postgres://app:"+fakeSecret+"@db", "db/hub-component.yaml:9", "CONN", false, masker.Text),
			NewParam("net.cidr", "", "10.0.0.0/16", "output:net", "", false, masker.Text),
		}},
	}
	if err := SaveParams(dir, params); err != nil {
		t.Fatal(err)
	}
	return dir, p
}

// TestLoadRun reads the fake run's folder back: statuses, times, the
// waiting before each, the critical path, outputs and logs, secrets masked.
func TestLoadRun(t *testing.T) {
	dir, _ := fakeRun(t)
	m, err := LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind != KindRun || m.Status != "failed" || m.Run != filepath.Base(dir) || m.DurationMS != 905 || !m.ParamsKept {
		t.Errorf("run: kind %s status %s run %s took %dms kept params %v", m.Kind, m.Status, m.Run, m.DurationMS, m.ParamsKept)
	}
	want := []struct {
		name, status      string
		ready, start, end int64
		critical, group   bool
	}{
		{"net", "deployed", 2, 2, 301, true, false},
		{"db", "failed", 301, 301, 541, false, false},
		{"api", "skipped", 541, 541, 542, false, false},
		{"cache", "deployed", 301, 400, 901, true, false},
		{"pre-flight", "done", 0, 0, 2, true, true},
	}
	if len(m.Components) != len(want) {
		t.Fatalf("%d components, want %d", len(m.Components), len(want))
	}
	for i, w := range want {
		c := m.Components[i]
		if c.Name != w.name || c.Status != w.status || c.Ready != w.ready || c.Start != w.start || c.End != w.end || c.Critical != w.critical || c.Group != w.group {
			t.Errorf("component %d: %s %s ready %d start %d end %d critical %v group %v; want %+v", i, c.Name, c.Status, c.Ready, c.Start, c.End, c.Critical, c.Group, w)
		}
	}
	names := func(ix []int) (out []string) {
		for _, i := range ix {
			out = append(out, m.Components[i].Name)
		}
		return out
	}
	if got := strings.Join(names(m.Critical), " "); got != "pre-flight net cache" {
		t.Errorf("critical path %q, want pre-flight net cache", got)
	}
	db := m.Components[1]
	if db.Why != "make deploy exited with status 2" || db.Log == nil || len(db.Log.Failing) == 0 ||
		!strings.Contains(db.Log.Failing[0].Text, "ERROR: connection refused") {
		t.Errorf("db: why %q, log %+v; want its failure and its failing line", db.Why, db.Log)
	}
	if s := db.Steps[0]; s.Status != "failed" || s.Start != 302 || s.End != 540 || s.Ready != 302 {
		t.Errorf("db's deploy step: %+v", s)
	}
	cache := m.Components[3]
	if len(cache.Outputs) != 2 || cache.Outputs[1].Value != secret.Mask || !cache.Outputs[1].Secret || cache.Outputs[0].Value != "redis://cache" {
		t.Errorf("cache's outputs: %+v", cache.Outputs)
	}
	// As the terminal shows it: no escape sequences.
	if l := cache.Log; l == nil || !slices.ContainsFunc(l.Lines, func(s string) bool { return strings.HasSuffix(s, "Z cache ready") }) {
		t.Errorf("cache's log: %+v; want its colored line without escape sequences", l)
	}
	if len(m.Edges) != 3 || m.Edges[0].Label != "depends, output net.cidr" || !m.Edges[1].Critical || m.Edges[0].Critical {
		t.Errorf("edges: %+v", m.Edges)
	}
	if len(db.Params) != 3 || db.Params[0].Value != secret.Mask || db.Params[1].Value != "postgres://app:*****@db" || db.Params[2].Source != "output:net" {
		t.Errorf("db's parameters: %+v", db.Params)
	}
	if !strings.Contains(m.Summary, "COMPONENT") {
		t.Errorf("summary: %q", m.Summary)
	}
}

// TestLoadRunOfAKilledRun: a run killed half-way has no run_finished
// event and a last line cut short: the report still reads it, and what
// was running ends where the run does.
func TestLoadRunOfAKilledRun(t *testing.T) {
	dir, p := fakeRun(t)
	killed(t, dir, `"step_finished","run":"20260101T000000Z-abcdef","step":"cache/deploy"`, `{"time":"2026-01-01T00:00:00.9Z","event":"step_fin`)
	m, err := LoadRunOf(dir, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != "unfinished" || m.Live != "" {
		t.Errorf("status %q (live %q), want unfinished and not live: no gantry runs it", m.Status, m.Live)
	}
	for _, c := range m.Components {
		if c.Name == "cache" && (c.Status != "running" || c.End < c.Start) {
			t.Errorf("cache: %s from %d to %d; want running, ending where the run does", c.Status, c.Start, c.End)
		}
	}
	// A run whose gantry still runs (here: this test) is live, not killed:
	// its report says so rather than that its gantry is gone.
	host, _ := os.Hostname()
	if err := ui.WriteRunTag(dir, ui.RunTag{State: "hub.yaml.state", PID: os.Getpid(), Host: host}); err != nil {
		t.Fatal(err)
	}
	if m, err = LoadRunOf(dir, p, nil); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("pid %d on %s", os.Getpid(), host); m.Live != want {
		t.Errorf("live %q, want %q", m.Live, want)
	}
	// Another host's: not known to run still, nor to be gone.
	if err := ui.WriteRunTag(dir, ui.RunTag{State: "hub.yaml.state", PID: os.Getpid(), Host: "ci-runner-7"}); err != nil {
		t.Fatal(err)
	}
	if m, err = LoadRunOf(dir, p, nil); err != nil {
		t.Fatal(err)
	}
	if m.Live != "" || m.Elsewhere != "ci-runner-7" {
		t.Errorf("another host's run: live %q, elsewhere %q; want only elsewhere", m.Live, m.Elsewhere)
	}
}

// TestLoadRunKilledWhilePrinting: a run killed while a step printed ends
// where its last event does, a log line included (its report said the run
// took as long as its last step event: "took 1ms", the step "ran 0ms").
func TestLoadRunKilledWhilePrinting(t *testing.T) {
	dir, p := fakeRun(t)
	events := filepath.Join(dir, EventsFile)
	b, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	var warming string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		switch {
		case strings.Contains(l, `"run_finished"`), strings.Contains(l, `"step":"cache/end"`),
			strings.Contains(l, `"step_finished"`) && strings.Contains(l, `"step":"cache/deploy"`):
			continue
		case strings.Contains(l, "cache warming"):
			warming = l
		}
		kept = append(kept, l)
	}
	if warming == "" {
		t.Fatal("no log line of cache in the fake run")
	}
	// The same line printed 3 s into the run, the last event before the kill.
	later := strings.Replace(warming, `"time":"2026-01-01T00:00:00.401Z"`, `"time":"2026-01-01T00:00:03Z"`, 1)
	if later == warming {
		t.Fatalf("unexpected log line %s", warming)
	}
	kept = append(kept, later)
	if err := os.WriteFile(events, []byte(strings.Join(kept, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := LoadRunOf(dir, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.DurationMS != 3000 {
		t.Errorf("the run took %d ms, want 3000 (its last log line)", m.DurationMS)
	}
	for _, c := range m.Components {
		if c.Name == "cache" && (c.Status != "running" || c.End != 3000) {
			t.Errorf("cache: %s ending at %d ms, want running until 3000", c.Status, c.End)
		}
	}
}

// TestLoadRunKilledBeforeAnEnd: a component whose steps ended but whose end
// step never recorded it (the run was killed between them) was under way,
// not deployed.
func TestLoadRunKilledBeforeAnEnd(t *testing.T) {
	dir, p := fakeRun(t)
	killed(t, dir, `"step":"net/end"`, "")
	m, err := LoadRunOf(dir, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range m.Components {
		if c.Name == "net" && c.Status != "running" {
			t.Errorf("net: %s, want running", c.Status)
		}
	}
}

// killed makes the events of the run in dir those of a run killed before
// its end: no run_finished, no event that holds drop, and tail after the
// last line (a line cut short).
func killed(t *testing.T, dir, drop, tail string) {
	t.Helper()
	events := filepath.Join(dir, EventsFile)
	b, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.Contains(l, `"run_finished"`) && !strings.Contains(l, drop) {
			kept = append(kept, l)
		}
	}
	if err := os.WriteFile(events, []byte(strings.Join(kept, "\n")+tail), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLoadRunRefusesAFolderWithoutPlan(t *testing.T) {
	_, err := LoadRun(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "is not the folder of a run") {
		t.Errorf("LoadRun: %v, want it to say the folder is not a run's", err)
	}
}

// TestReadEventsLineTooLong: a line longer than any gantry writes (a
// damaged file) is named by its number and what to do, not bufio's
// "token too long".
func TestReadEventsLineTooLong(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events.jsonl")
	long := bytes.Repeat([]byte("x"), maxEventLine+1)
	if err := os.WriteFile(path, append([]byte("{}\n{}\n"), long...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := readEvents(path)
	if err == nil || !strings.Contains(err.Error(), "line 3 is longer than 64 MiB, which gantry never writes: the file is damaged") {
		t.Errorf("readEvents = %v", err)
	}
}
