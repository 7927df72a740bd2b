package engine

import (
	"container/heap"
	"sort"
	"strings"
)

// Resources (plan.Node.Takes and Frees) keep steps that must not overlap
// apart without ordering them: a step that takes a resource another step
// holds waits, outside the --parallel slots, until a step of the holder's
// group frees it. A step that waits takes no slot, so the holder's own later
// steps can always run and free it.

// holds records which step holds each resource.
type holds struct {
	holder  map[string]int   // resource → the step that took it
	waiting map[string][]int // resource → steps waiting for it, in plan order
}

// busy returns a resource step i takes that another group holds.
func (s *Scheduler) busy(i int) (string, bool) {
	n := s.p.Nodes[i]
	for _, res := range n.Takes {
		if h, ok := s.holds.holder[res]; ok && h != i {
			return res, true
		}
	}
	return "", false
}

// wait sets step i aside until res is freed.
func (s *Scheduler) wait(i int, res string) {
	if s.holds.waiting == nil {
		s.holds.waiting = map[string][]int{}
	}
	s.holds.waiting[res] = append(s.holds.waiting[res], i)
}

// take records step i as the holder of what it takes.
func (s *Scheduler) take(i int) {
	n := s.p.Nodes[i]
	if len(n.Takes) == 0 {
		return
	}
	if s.holds.holder == nil {
		s.holds.holder = map[string]int{}
	}
	for _, res := range n.Takes {
		s.holds.holder[res] = i
	}
}

// free releases what step i frees, when a step of its group holds it — an
// end whose component never reached the step that takes the folder must
// not free another component's hold — and makes the steps waiting for it
// ready again (they check again when dispatched).
func (s *Scheduler) free(i int) {
	n := s.p.Nodes[i]
	for _, res := range n.Frees {
		h, ok := s.holds.holder[res]
		if !ok || s.p.Nodes[h].Group != n.Group {
			continue
		}
		delete(s.holds.holder, res)
		for _, w := range s.holds.waiting[res] {
			heap.Push(&s.ready, w)
		}
		delete(s.holds.waiting, res)
	}
}

// waitingNames lists the resources steps wait for, for the message of a
// plan that cannot go on.
func (s *Scheduler) waitingNames() string {
	var names []string
	for res, ws := range s.holds.waiting {
		if len(ws) > 0 {
			names = append(names, res+" (held by "+s.p.Nodes[s.holds.holder[res]].ID+")")
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
