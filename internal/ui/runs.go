package ui

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/procstat"
)

// RunInfo summarises one run folder, from its events.
type RunInfo struct {
	ID         string
	Dir        string
	Verb       string
	Started    time.Time
	Duration   time.Duration
	Status     string // ok, failed, interrupted, unfinished
	Components []ComponentJSON
	// At is when the run began, for ordering runs: Started, or for a run
	// without a run_started event the time its folder was last changed.
	At time.Time
	// Tag says whose run it is and which process runs it (run.json); the
	// zero Tag for a run an older gantry kept.
	Tag RunTag
}

// RunTagFile is the file of a run folder that says whose run it is.
const RunTagFile = "run.json"

// RunTag says whose run a run folder holds: State is the base name of the
// state file of the stack (hub.yaml.state; for a database, of the state
// file the stack's manifest would have), which tells apart the runs of
// two stacks in one folder; PID and Host the gantry process that runs it,
// for following a run while it goes on, and Boot and Started which process
// of that pid it is (the machine's boot, the process's start in clock ticks
// since it: a pid is reused, by any process after a reboot); Parent the run
// of the same stack it runs inside (a gantry invoke from a component), ""
// for a run of its own.
type RunTag struct {
	State   string `json:"state"`
	PID     int    `json:"pid"`
	Host    string `json:"host"`
	Boot    string `json:"boot,omitempty"`
	Started uint64 `json:"started,omitempty"`
	Parent  string `json:"parent,omitempty"`
}

// WriteRunTag writes a run folder's run.json.
func WriteRunTag(dir string, tag RunTag) error {
	b, err := json.Marshal(tag)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, RunTagFile), append(b, '\n'), 0o600)
}

// Running reports whether the gantry process the tag names is still
// running: its pid, of this boot, started when the tag says (a tag of an
// older gantry, without a start, is taken at its pid). A run of another
// host is taken as running, one without a tag as ended.
func (t RunTag) Running() bool {
	if t.PID <= 0 {
		return false
	}
	if !t.OnThisHost() {
		return true
	}
	if t.Boot != "" && t.Boot != procstat.BootID() {
		return false
	}
	if t.Started > 0 {
		st, ok := procstat.Read(t.PID)
		return ok && st.Start == t.Started && st.State != 'Z' && st.State != 'X'
	}
	err := syscall.Kill(t.PID, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// OnThisHost reports whether the tag's gantry ran on this machine, where
// its pid can be looked at.
func (t RunTag) OnThisHost() bool {
	host, _ := os.Hostname()
	return t.Host == host
}

// ReadRunTag reads a run folder's run.json; the zero tag without one.
func ReadRunTag(dir string) RunTag {
	var tag RunTag
	if b, err := os.ReadFile(filepath.Join(dir, RunTagFile)); err == nil {
		_ = json.Unmarshal(b, &tag)
	}
	return tag
}

// Latest is the latest of runs (newest first, as ListRuns gives them) that
// runs inside no other: a gantry invoke from a component is part of the
// run that called it, which is the one going on. false when every run is
// nested.
func Latest(runs []RunInfo) (RunInfo, bool) {
	for _, r := range runs {
		if r.Tag.Parent == "" {
			return r, true
		}
	}
	return RunInfo{}, false
}

// ListRuns reads the run folders below runsDir of the stack whose state
// file has the base name state ("": every stack's), newest first. Runs are
// ordered by when they began, to the nanosecond: run ids have one-second
// resolution, so two runs of the same second (a deploy and the undeploy right
// after it) would otherwise come in the order of their random suffixes.
func ListRuns(runsDir, state string) ([]RunInfo, error) {
	entries, err := os.ReadDir(runsDir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []RunInfo
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(runsDir, e.Name())
		tag := ReadRunTag(dir)
		if state != "" && tag.State != "" && tag.State != state {
			continue
		}
		ri := ReadRun(dir)
		ri.Tag = tag
		if ri.At.IsZero() {
			if fi, err := e.Info(); err == nil {
				ri.At = fi.ModTime()
			}
		}
		out = append(out, ri)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].At.Equal(out[j].At) {
			return out[i].At.After(out[j].At)
		}
		return out[i].ID > out[j].ID
	})
	return out, nil
}

// ReadRun summarises a run folder; a run without a run_finished event (it was
// killed) is "unfinished".
func ReadRun(dir string) RunInfo {
	ri := RunInfo{ID: filepath.Base(dir), Dir: dir, Status: "unfinished"}
	f, err := os.Open(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return ri
	}
	defer f.Close()
	eachEvent(f, "run_", func(ev *Event) {
		switch ev.Event {
		case "run_started":
			ri.Verb, ri.Started, ri.At, ri.Components = ev.Verb, ev.Time, ev.Time, ev.Components
		case "run_finished":
			ri.Status, ri.Components = ev.Status, ev.Components
			if ev.DurationMS != nil {
				ri.Duration = time.Duration(*ev.DurationMS) * time.Millisecond
			}
		}
	})
	if ri.Status == "unfinished" && len(ri.Components) > 0 {
		// Killed before it said how its components ended: their steps
		// say how far each got.
		if _, err := f.Seek(0, io.SeekStart); err == nil {
			ri.Components = statusesFromSteps(f, ri.Components)
		}
	}
	return ri
}

// statusesFromSteps is the components' lines of a run that did not finish,
// each with the status its steps' events give it (StatusFromSteps): a
// component's steps name it, a stack-level group's begin with its name.
func statusesFromSteps(events io.Reader, comps []ComponentJSON) []ComponentJSON {
	type steps struct {
		status map[string]string // by step, "running" until it finished
		named  bool              // the steps name the component
	}
	of := make(map[string]*steps, len(comps))
	for _, c := range comps {
		of[c.Name] = &steps{status: map[string]string{}}
	}
	eachEvent(events, "step_", func(ev *Event) {
		name, _, _ := strings.Cut(ev.Step, "/")
		if ev.Component != "" {
			name = ev.Component
		}
		st := of[name]
		if st == nil {
			return
		}
		st.named = st.named || ev.Component != ""
		switch ev.Event {
		case "step_started":
			st.status[ev.Step] = Running
		case "step_finished":
			st.status[ev.Step] = ev.Status
		}
	})
	out := make([]ComponentJSON, len(comps))
	for i, c := range comps {
		st := of[c.Name]
		statuses := make([]string, 0, len(st.status)+1)
		for _, s := range st.status {
			statuses = append(statuses, s)
		}
		if BetweenSteps(c.Name, func(step string) (string, bool) { s, ok := st.status[step]; return s, ok }) {
			statuses = append(statuses, Running)
		}
		c.Status = StatusFromSteps(c.Verb, !st.named, statuses)
		out[i] = c
	}
	return out
}

// eachEvent calls fn with each event of a run's events.jsonl whose name
// begins with prefix (run_, step_); the others are passed over unread.
func eachEvent(events io.Reader, prefix string, fn func(*Event)) {
	sc := bufio.NewScanner(events)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	mark := `"event":"` + prefix
	for sc.Scan() {
		line := sc.Bytes()
		if !strings.Contains(string(line[:min(len(line), 80)]), mark) {
			continue
		}
		var ev Event
		if json.Unmarshal(line, &ev) == nil {
			fn(&ev)
		}
	}
}

// BetweenSteps reports whether a component of a run killed before it ended
// had begun (its begin step ran) and its end step, which records it, never
// finished: it was under way, whatever its other steps say. status gives a
// step's status ("" or Running until it finished) and whether it started.
func BetweenSteps(name string, status func(step string) (string, bool)) bool {
	if _, begun := status(name + "/begin"); !begun {
		return false
	}
	end, _ := status(name + "/end")
	return end == "" || end == Running
}

// StatusFromSteps is a component's status, or a stack-level group's, when
// a run's events do not say how it ended (it was killed before it
// finished), from its steps' statuses ("ok", "failed", "skipped", Running):
// failed or running when a step is; skipped when every step that ended was;
// else done as its verb says (a group's is done); waiting when no step
// ended.
func StatusFromSteps(verb string, group bool, steps []string) string {
	ended, skipped := 0, 0
	for _, s := range steps {
		switch s {
		case Failed:
			return Failed
		case Running:
			return Running
		case Skipped:
			skipped++
			ended++
		case "ok":
			ended++
		}
	}
	switch {
	case ended == 0:
		return Waiting
	case skipped == ended:
		return Skipped
	case verb == plan.VerbDeploy && !group:
		return Deployed
	case verb == plan.VerbUndeploy && !group:
		return Undeployed
	}
	return Done
}

// Counts says how many components ended how: "3 deployed, 1 failed".
func (r RunInfo) Counts() string {
	n := map[string]int{}
	var order []string
	for _, c := range r.Components {
		if n[c.Status] == 0 {
			order = append(order, c.Status)
		}
		n[c.Status]++
	}
	parts := make([]string, len(order))
	for i, s := range order {
		parts[i] = fmt.Sprintf("%d %s", n[s], s)
	}
	return strings.Join(parts, ", ")
}

// Logs lists the log files of a run folder: component name → path, and the
// names in the order the run met them.
func Logs(dir string) ([]string, map[string]string) {
	paths := map[string]string{}
	var names []string
	for _, c := range ReadRun(dir).Components {
		p := filepath.Join(dir, c.Name+".log")
		if _, err := os.Stat(p); err == nil {
			names = append(names, c.Name)
			paths[c.Name] = p
		}
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	sort.Strings(matches)
	for _, m := range matches {
		name := strings.TrimSuffix(filepath.Base(m), ".log")
		if _, ok := paths[name]; !ok {
			names = append(names, name)
			paths[name] = m
		}
	}
	return names, paths
}
