package ui

import (
	"strings"
	"time"

	"github.com/gantry-dev/gantry/internal/plan"
)

// expandsLabel reports whether a step says its label with its values
// expanded once it runs (plan.NoteLabel): an injected step, a readiness
// check or an entry of a plugin list that runs a plugin, whose label names
// values (${…}, #{…}, {{…}}).
func expandsLabel(n *plan.Node) bool {
	switch s := n.Spec.(type) {
	case plan.Injected, plan.Ready:
	case plan.Entry:
		if s.Kind() != plan.KindPlugin || s.List == plan.ListVanished {
			return false
		}
	default:
		return false
	}
	return strings.Contains(n.Label, "${") || strings.Contains(n.Label, "#{") || strings.Contains(n.Label, "{{")
}

// stepLabels holds back the start line of a step whose label names values
// until the step says what they are (plan.NoteLabel) — or says anything
// else first, an expansion that failed — and keeps the expanded label for
// the line of its end.
type stepLabels struct {
	held     map[string]time.Time // the steps held back: when they started
	expanded map[string]string
}

// hold holds back the start line of n, which started at, when its label
// is to be expanded.
func (s *stepLabels) hold(n *plan.Node, at time.Time) bool {
	if !expandsLabel(n) {
		return false
	}
	if s.held == nil {
		s.held = map[string]time.Time{}
	}
	s.held[n.ID] = at
	return true
}

// release returns whether n's start line was held back (and is no
// longer), and when n started.
func (s *stepLabels) release(n *plan.Node) (time.Time, bool) {
	at, ok := s.held[n.ID]
	if !ok {
		return time.Time{}, false
	}
	delete(s.held, n.ID)
	return at, true
}

// expand keeps the label n said (plan.NoteLabel).
func (s *stepLabels) expand(n *plan.Node, label string) {
	if s.expanded == nil {
		s.expanded = map[string]string{}
	}
	s.expanded[n.ID] = label
}

// label is n's label, expanded when it said so.
func (s *stepLabels) label(n *plan.Node) string {
	if l, ok := s.expanded[n.ID]; ok {
		return l
	}
	return n.Label
}

// done forgets n.
func (s *stepLabels) done(n *plan.Node) {
	delete(s.held, n.ID)
	delete(s.expanded, n.ID)
}

// titled is how a step is announced: its label (as the plan has it, or
// expanded), after its injection point.
func titled(n *plan.Node, label string) string {
	if n.Point != "" {
		return n.Point + ": " + label
	}
	return label
}
