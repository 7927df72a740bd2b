// Package ui renders what a run does: live display on a terminal, plain lines
// otherwise, JSON events for machines, run logs and the final summary. It is
// fed only by the executor's events.
package ui

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
)

// Component statuses in summaries.
const (
	Deployed   = "deployed"
	Undeployed = "undeployed"
	Failed     = "failed"
	Skipped    = "skipped"
	Unchanged  = "unchanged"
	Running    = "running"
	Waiting    = "waiting"
	Done       = "done"
)

// ComponentRun is what one component (or stack-level group) did in a run.
type ComponentRun struct {
	Name     string
	Verb     string
	Status   string
	Reason   string
	Started  time.Time
	Ended    time.Time
	LastLine string
	Current  string // the step running now, its label expanded once known
	// Tolerated says a failure did not fail the run: the component is
	// optional (none of its steps is critical).
	Tolerated bool
	// After are the components it waits for (its edges in the plan).
	After []string
	// Group says it is a stack-level group (pre-flight, …), not a
	// component.
	Group bool
	order int
	// verbStep says the running step is the component's verb, whose last
	// line says more than its label.
	verbStep bool
	// critical is set when a step of the group is critical.
	critical bool
}

// Duration is how long the component's steps took.
func (c *ComponentRun) Duration() time.Duration {
	if c.Started.IsZero() || c.Ended.IsZero() {
		return 0
	}
	return c.Ended.Sub(c.Started)
}

// ShownStatus is the status as the display and the summary show it: a
// failure that did not fail the run is "failed (optional)".
func (c *ComponentRun) ShownStatus() string {
	if c.Status == Failed && c.Tolerated {
		return Failed + " (optional)"
	}
	return c.Status
}

// Detail is what the live line says of a running component: the last line
// of its verb's output (its label until there is one), or the label of
// another step with its last line (a probe's attempts).
func (c *ComponentRun) Detail() string {
	switch {
	case c.LastLine == "":
		return c.Current
	case c.verbStep || c.Current == "":
		return c.LastLine
	}
	if kind, what, ok := strings.Cut(c.Current, ": "); ok && strings.HasPrefix(c.LastLine, what) {
		// The line says the label again (a gate's question after "gate:
		// "): once is enough.
		return kind + ": " + c.LastLine
	}
	return c.Current + ": " + c.LastLine
}

// Tracker follows a run's events and keeps per-component summaries, and
// what the live display draws: how many components are in each state and
// which are running, without going through all of them.
type Tracker struct {
	mu    sync.Mutex
	verb  string
	stack string
	comps map[string]*ComponentRun
	list  []*ComponentRun // plan order
	// running are the groups running, in the order they started.
	running []*ComponentRun
	// counts are the components (not the stack's groups) by status.
	counts map[string]int
	// firstWaiting is where in list the first waiting group may be: no
	// group before it waits (a group never waits again).
	firstWaiting int
}

// NewTracker prepares a tracker for a plan: every component, and every
// group with a step people see, starts waiting. Groups of bookkeeping only
// (the run's set-up and finalisation) are not tracked.
func NewTracker(p *plan.Plan) *Tracker {
	t := &Tracker{verb: p.Verb, stack: p.Stack, comps: make(map[string]*ComponentRun, len(p.Components)), counts: map[string]int{}}
	t.Add(p)
	return t
}

// Add tracks the groups of another plan of the run that are not tracked yet
// (a run's plan built again after the installation handler's prepare may
// have more).
func (t *Tracker) Add(p *plan.Plan) {
	t.mu.Lock()
	defer t.mu.Unlock()
	shown := make(map[string]bool, len(p.Components))
	for _, n := range p.Nodes {
		if !n.Hidden || n.Kind == plan.KindComponent {
			shown[groupOf(n)] = true
		}
	}
	for _, n := range p.Nodes {
		g := groupOf(n)
		if !shown[g] {
			continue
		}
		c, ok := t.comps[g]
		if !ok {
			c = &ComponentRun{Name: g, Verb: p.Verb, Status: Waiting, order: len(t.list)}
			if info := p.Components[g]; info != nil {
				c.After = info.After
			} else if n.Component == "" {
				c.Group = true
			}
			t.comps[g] = c
			t.list = append(t.list, c)
			if !c.Group {
				t.counts[Waiting]++
			}
		}
		if n.Kind == plan.KindComponent && n.Verb != "" {
			c.Verb = n.Verb
		}
		c.critical = c.critical || n.Critical
		c.Tolerated = !c.critical
	}
}

func groupOf(n *plan.Node) string {
	if n.Group != "" {
		return n.Group
	}
	return n.ID
}

// setStatus moves a group to a status, keeping the counts and the running
// list; t.mu is held.
func (t *Tracker) setStatus(c *ComponentRun, s string) {
	if c.Status == s {
		return
	}
	if !c.Group {
		t.counts[c.Status]--
		t.counts[s]++
	}
	if c.Status == Running {
		if i := slices.Index(t.running, c); i >= 0 {
			t.running = slices.Delete(t.running, i, i+1)
		}
	}
	if s == Running {
		t.running = append(t.running, c)
	}
	c.Status = s
}

// StepStarted marks the component running; a step people see becomes what
// its live line shows, the last line of the step before it gone.
func (t *Tracker) StepStarted(n *plan.Node, at time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.comps[groupOf(n)]
	if c == nil {
		return
	}
	if c.Started.IsZero() {
		c.Started = at
	}
	if c.Status == Waiting {
		t.setStatus(c, Running)
	}
	if !n.Hidden {
		c.Current, c.LastLine, c.verbStep = n.Label, "", n.Kind == plan.KindComponent
	}
}

// StepFinished updates the component's status from its steps.
func (t *Tracker) StepFinished(n *plan.Node, r plan.Result, started, ended time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.comps[groupOf(n)]
	if c == nil {
		return
	}
	if r.Cause != plan.CauseNotNeeded {
		c.Ended = ended
	}
	switch {
	case r.Status == plan.Failed:
		if c.Status != Failed {
			t.setStatus(c, Failed)
			c.Reason = firstLine(r.Reason)
		}
	case r.Cause == plan.CauseNotNeeded:
	case r.Status == plan.Skipped && c.Status != Failed:
		if r.Cause == plan.CauseUnchanged {
			t.setStatus(c, Unchanged)
			c.Reason = ""
		} else if c.Status != Skipped && c.Status != Unchanged {
			t.setStatus(c, Skipped)
			c.Reason = r.Reason
		}
	case n.Kind == plan.KindBegin && r.Status == plan.OK && r.Reason != "":
		// Why it runs after all (changed since the plan said unchanged).
		c.Reason = firstLine(r.Reason)
	case n.Kind == plan.KindEnd && r.Status == plan.OK:
		switch c.Verb {
		case plan.VerbDeploy:
			t.setStatus(c, Deployed)
		case plan.VerbUndeploy:
			t.setStatus(c, Undeployed)
		default:
			t.setStatus(c, Done)
		}
		c.Current = ""
	case n.Component == "" && r.Status == plan.OK && c.Status == Running:
		t.setStatus(c, Done)
	}
	if c.Started.IsZero() {
		c.Started = started
	}
}

// NotStarted marks every group still waiting skipped, for reason: the run
// ended before their steps could start (a lock another run held once the
// installation handler had prepared, a workspace refused).
func (t *Tracker) NotStarted(reason string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.list {
		if c.Status == Waiting {
			t.setStatus(c, Skipped)
			c.Reason = reason
		}
	}
}

// Log keeps the component's last line for the live display, sanitized: no
// escape sequence or control character of a component reaches the terminal.
// A line with nothing visible leaves the last one shown.
func (t *Tracker) Log(n *plan.Node, line string, _ time.Time) {
	line = Sanitize(line)
	if strings.TrimSpace(line) == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.comps[groupOf(n)]; c != nil {
		c.LastLine = line
	}
}

// Note takes a step's label with its values expanded (plan.NoteLabel) as
// what the component's live line shows.
func (t *Tracker) Note(n *plan.Node, note plan.Note) {
	if note.Kind != plan.NoteLabel || n.Hidden {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c := t.comps[groupOf(n)]; c != nil {
		c.Current = Sanitize(note.Value)
	}
}

// Components returns a copy of every component's run, in plan order.
func (t *Tracker) Components() []ComponentRun {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]ComponentRun, len(t.list))
	for i, c := range t.list {
		out[i] = *c
	}
	return out
}

// Component returns one component's run.
func (t *Tracker) Component(name string) (ComponentRun, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.comps[name]
	if !ok {
		return ComponentRun{}, false
	}
	return *c, true
}

// Live is what the live display draws at one moment.
type Live struct {
	Verb, Stack string
	// Active is how many groups are running (the stack's included): the
	// live lines there would be.
	Active int
	// Counts are the components (not the stack's groups) by status;
	// Total all of them.
	Counts map[string]int
	Total  int
	// Running are the first groups running, oldest first; Waiting the
	// first components waiting, in plan order, each with what it waits
	// for (Blocked: the components it runs after that have not ended).
	Running []ComponentRun
	Waiting []Queued
}

// Queued is a component waiting to start.
type Queued struct {
	Name    string
	Blocked []string
}

// Live returns the counts, the first maxRunning groups running and the
// first maxWaiting components waiting. It costs what it returns, not the
// size of the run.
func (t *Tracker) Live(maxRunning, maxWaiting int) Live {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := Live{Verb: t.verb, Stack: t.stack, Counts: make(map[string]int, len(t.counts))}
	for s, n := range t.counts {
		l.Counts[s] = n
		l.Total += n
	}
	l.Active = len(t.running)
	for _, c := range t.running[:min(maxRunning, len(t.running))] {
		l.Running = append(l.Running, *c)
	}
	for t.firstWaiting < len(t.list) && t.list[t.firstWaiting].Status != Waiting {
		t.firstWaiting++
	}
	for i := t.firstWaiting; i < len(t.list) && len(l.Waiting) < maxWaiting; i++ {
		c := t.list[i]
		if c.Status != Waiting || c.Group {
			continue
		}
		q := Queued{Name: c.Name}
		for _, a := range c.After {
			if d := t.comps[a]; d != nil && (d.Status == Waiting || d.Status == Running) {
				q.Blocked = append(q.Blocked, a)
			}
		}
		l.Waiting = append(l.Waiting, q)
	}
	return l
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
