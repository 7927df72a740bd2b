// Package ui renders what a run does: live display on a terminal, plain lines
// otherwise, JSON events for machines, run logs and the final summary. It is
// fed only by the executor's events.
package ui

import (
	"sort"
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
	Current  string // the step running now
	order    int
}

// Duration is how long the component's steps took.
func (c *ComponentRun) Duration() time.Duration {
	if c.Started.IsZero() || c.Ended.IsZero() {
		return 0
	}
	return c.Ended.Sub(c.Started)
}

// Tracker follows a run's events and keeps per-component summaries.
type Tracker struct {
	mu    sync.Mutex
	verb  string
	comps map[string]*ComponentRun
}

// NewTracker prepares a tracker for a plan: every component, and every
// group with a step people see, starts waiting. Groups of bookkeeping only
// (the run's set-up and finalisation) are not tracked.
func NewTracker(p *plan.Plan) *Tracker {
	t := &Tracker{verb: p.Verb, comps: map[string]*ComponentRun{}}
	t.Add(p)
	return t
}

// Add tracks the groups of another plan of the run that are not tracked yet
// (a run's plan built again after the installation handler's prepare may
// have more).
func (t *Tracker) Add(p *plan.Plan) {
	t.mu.Lock()
	defer t.mu.Unlock()
	shown := map[string]bool{}
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
		if _, ok := t.comps[g]; !ok {
			t.comps[g] = &ComponentRun{Name: g, Verb: p.Verb, Status: Waiting, order: len(t.comps)}
		}
		if n.Kind == plan.KindComponent && n.Verb != "" {
			t.comps[g].Verb = n.Verb
		}
	}
}

func groupOf(n *plan.Node) string {
	if n.Group != "" {
		return n.Group
	}
	return n.ID
}

// StepStarted marks the component running.
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
		c.Status = Running
	}
	if !n.Hidden {
		c.Current = n.Label
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
			c.Status, c.Reason = Failed, firstLine(r.Reason)
		}
	case r.Cause == plan.CauseNotNeeded:
	case r.Status == plan.Skipped && c.Status != Failed:
		if r.Cause == plan.CauseUnchanged {
			c.Status, c.Reason = Unchanged, ""
		} else if c.Status != Skipped && c.Status != Unchanged {
			c.Status, c.Reason = Skipped, r.Reason
		}
	case n.Kind == plan.KindEnd && r.Status == plan.OK:
		switch c.Verb {
		case plan.VerbDeploy:
			c.Status = Deployed
		case plan.VerbUndeploy:
			c.Status = Undeployed
		default:
			c.Status = Done
		}
		c.Current = ""
	case n.Component == "" && r.Status == plan.OK && c.Status == Running:
		c.Status = Done
	}
	if c.Started.IsZero() {
		c.Started = started
	}
}

// Log keeps the component's last line for the live display, sanitized: no
// escape sequence or control character of a component reaches the terminal.
// A line with nothing visible leaves the last one shown.
func (t *Tracker) Log(n *plan.Node, line string) {
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

// Components returns a copy of every component's run, in plan order.
func (t *Tracker) Components() []ComponentRun {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]ComponentRun, 0, len(t.comps))
	for _, c := range t.comps {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].order < out[j].order })
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

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Note is not tracked.
func (t *Tracker) Note(*plan.Node, plan.Note) {}
