package report

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/secret"
	"github.com/gantry-dev/gantry/internal/ui"
)

// Files of a run's folder the report reads (besides the logs and
// ParamsFile), and the one it writes.
const (
	PlanFile    = "plan.json"
	EventsFile  = "events.jsonl"
	SummaryFile = "summary.txt"
	ReportFile  = "report.html"
)

// stepRun is what the events say of one step.
type stepRun struct {
	started, ended time.Time
	status         string
	reason         string
	warning        string
	info           string
}

// runFacts are what a run's events say: when it ran, how each step and
// component ended, the outputs components produced.
type runFacts struct {
	id       string
	started  time.Time
	finished time.Time
	// last is the time of the latest event, log lines included: where a
	// run killed before its end ended.
	last   time.Time
	status string
	// why is why the run failed when no failed component says it (its
	// run_finished reason).
	why   string
	steps map[string]*stepRun
	// comps are the components' and groups' lines of run_finished (or
	// run_started when the run did not finish).
	comps   map[string]ui.ComponentJSON
	order   []string
	outputs map[string][]Output
	// outputAt is where each output is in outputs: a component may print
	// many thousands.
	outputAt map[string]map[string]int
}

func newRunFacts() *runFacts {
	return &runFacts{status: "unfinished", steps: map[string]*stepRun{}, comps: map[string]ui.ComponentJSON{},
		outputs: map[string][]Output{}, outputAt: map[string]map[string]int{}}
}

// LoadRun reads the folder of a run and makes the model of its report.
func LoadRun(dir string) (*Model, error) {
	f, err := os.Open(filepath.Join(dir, PlanFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s is not the folder of a run: it has no %s", dir, PlanFile)
		}
		return nil, fmt.Errorf("read the run's plan: %w", err)
	}
	p, err := plan.ReadJSON(bufio.NewReaderSize(f, 1<<16))
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, PlanFile), err)
	}
	return LoadRunOf(dir, p, nil)
}

// Heard is what the run that just ended heard of its own folder as it wrote
// it: its logs, its events, its plan's part of the model and its
// parameters, each nil when it must be read (or made) from the folder
// instead.
type Heard struct {
	Logs   *LogCollector
	Events *EventCollector
	// Plan is the part of the report the run's plan makes, worked out
	// while it ran.
	Plan *PlanModel
	// Params are the run's parameters as the run just kept them in its
	// folder (SaveParams), nil when they must be read from it: read back,
	// the 20,000 parameters of 1,000 components took 61 ms. They are masked
	// again as those read are, whoever made them.
	Params *Params
	// Mask, when set, masks the report's texts again (Model.Remask) with
	// every secret the run knows at its end.
	Mask func(string) string
}

// LoadRunOf makes the model of the report of the run whose folder is dir
// and whose plan (the one its plan.json holds) is p: the run that just
// ended has it at hand, and need not read it back; nor its logs, events
// and parameters, where heard has them (nil: they are read from the folder).
func LoadRunOf(dir string, p *plan.Plan, heard *Heard) (*Model, error) {
	if heard == nil {
		heard = &Heard{}
	}
	// The logs are read while the events are: both take time at a
	// thousand components.
	groups := groupsOf(p)
	logs := make([]*Log, len(groups))
	logsRead := make(chan error, 1)
	if heard.Logs != nil {
		for i, g := range groups {
			logs[i] = heard.Logs.log(g)
		}
		logsRead <- nil
	} else {
		go func() { logsRead <- readLogs(dir, groups, logs) }()
	}
	facts := heard.Events.heard()
	var err error
	if facts == nil {
		facts, err = readEvents(filepath.Join(dir, EventsFile))
	}
	if err == nil {
		facts.id = filepath.Base(dir)
	}
	var params *Params
	if err == nil {
		if heard.Params != nil {
			params = heard.Params.masked()
		} else {
			params, err = readParams(dir)
		}
	}
	if lerr := <-logsRead; err == nil {
		err = lerr
	}
	if err != nil {
		return nil, err
	}
	var m *Model
	if pm, index, ok := heard.Plan.take(p); ok {
		m = complete(pm, index, p, params, facts)
	} else {
		m = assemble(p, params, facts)
	}
	if b, err := os.ReadFile(filepath.Join(dir, SummaryFile)); err == nil {
		m.Summary = string(b)
	}
	byName := make(map[string]*Log, len(groups))
	for i, g := range groups {
		byName[g] = logs[i]
	}
	for _, c := range m.Components {
		c.Log = byName[c.Name]
	}
	m.Remask(heard.Mask)
	m.sanitizeLogs()
	if m.Status == "unfinished" {
		tag := ui.ReadRunTag(dir)
		switch {
		case tag.PID > 0 && !tag.OnThisHost():
			// Whether it still runs cannot be told from here.
			m.Elsewhere = tag.Host
		case tag.Running():
			m.Live = fmt.Sprintf("pid %d on %s", tag.PID, tag.Host)
		}
	}
	return m, nil
}

// groupsOf lists the groups of a plan's steps, each once: the components
// and the stack-level groups, whose logs a run keeps.
func groupsOf(p *plan.Plan) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range p.Nodes {
		if g := componentOf(n); !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	return out
}

// event is the part of an event line the report reads.
type event struct {
	Time       time.Time          `json:"time"`
	Event      string             `json:"event"`
	Step       string             `json:"step"`
	Component  string             `json:"component"`
	Status     string             `json:"status"`
	Reason     string             `json:"reason"`
	Warning    string             `json:"warning"`
	Info       string             `json:"info"`
	Name       string             `json:"name"`
	Value      *string            `json:"value"`
	Secret     bool               `json:"secret"`
	Components []ui.ComponentJSON `json:"components"`
}

// maxEventLine bounds a line of the events the report reads (with its
// newline): a longer one makes the file unreadable to it.
const maxEventLine = 64 << 20

// logEvent starts the lines of log events, which the report skips: the
// logs are read from their files.
var logEvent = []byte(`"event":"log"`)

// readEvents reads a run's events. A run that was killed may have left a
// last line cut short: it is ignored.
func readEvents(path string) (*runFacts, error) {
	facts := newRunFacts()
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return facts, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the run's events: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 256<<10), maxEventLine)
	// The time of the last log line, read once at the end: a run's log
	// lines are most of its events.
	var lastLog []byte
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		if bytes.Contains(line[:min(len(line), 80)], logEvent) {
			if t, ok := eventTime(line); ok {
				lastLog = append(lastLog[:0], t...)
			}
			continue
		}
		var ev event
		if decodeEvent(line, &ev) != nil {
			continue
		}
		facts.add(&ev)
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("read the run's events %s: line %d is longer than %d MiB, which gantry never writes: the file is damaged (move it aside for a report without the run's events)", path, n+1, maxEventLine>>20)
	} else if err != nil {
		return nil, fmt.Errorf("read the run's events %s: %w", path, err)
	}
	if t, err := time.Parse(time.RFC3339Nano, string(lastLog)); err == nil && t.After(facts.last) {
		facts.last = t
	}
	return facts, nil
}

// eventTime is the time an event's line begins with ({"time":"…",), as
// events are written, without decoding the line.
func eventTime(line []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"time":"`))
	if !ok {
		return nil, false
	}
	i := bytes.IndexByte(rest[:min(len(rest), 40)], '"')
	if i < 0 {
		return nil, false
	}
	return rest[:i], true
}

// add takes one event in.
func (r *runFacts) add(ev *event) {
	if ev.Time.After(r.last) {
		r.last = ev.Time
	}
	step := func() *stepRun {
		s := r.steps[ev.Step]
		if s == nil {
			s = &stepRun{}
			r.steps[ev.Step] = s
		}
		return s
	}
	switch ev.Event {
	case "run_started":
		r.started = ev.Time
		r.setComponents(ev.Components)
	case "run_finished":
		r.finished, r.status, r.why = ev.Time, ev.Status, ev.Reason
		r.setComponents(ev.Components)
	case "step_started":
		step().started = ev.Time
	case "step_finished":
		s := step()
		s.ended, s.status, s.reason, s.warning, s.info = ev.Time, ev.Status, ev.Reason, ev.Warning, ev.Info
	case "output":
		if ev.Value != nil && ev.Component != "" {
			r.setOutput(ev.Component, maskedOutput(ev.Name, *ev.Value, ev.Secret))
		}
	}
}

// setOutput keeps a component's output; one printed again replaces the
// value printed before.
func (r *runFacts) setOutput(comp string, o Output) {
	at := r.outputAt[comp]
	if at == nil {
		at = map[string]int{}
		r.outputAt[comp] = at
	}
	if i, ok := at[o.Name]; ok {
		r.outputs[comp][i] = o
		return
	}
	at[o.Name] = len(r.outputs[comp])
	r.outputs[comp] = append(r.outputs[comp], o)
}

func (r *runFacts) setComponents(comps []ui.ComponentJSON) {
	for _, c := range comps {
		if _, ok := r.comps[c.Name]; !ok {
			r.order = append(r.order, c.Name)
		}
		r.comps[c.Name] = c
	}
}

// maskedOutput is an output as the report keeps it: the events hold
// secret values masked already; a name that says the value is secret
// masks it too.
func maskedOutput(name, value string, isSecret bool) Output {
	if isSecret || secret.Named(name) {
		return Output{Name: name, Value: secret.Mask, Secret: true}
	}
	return Output{Name: name, Value: value}
}
