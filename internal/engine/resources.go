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
func (r *run) busy(i int) (string, bool) {
	n := r.p.Nodes[i]
	for _, res := range n.Takes {
		if h, ok := r.holds.holder[res]; ok && h != i {
			return res, true
		}
	}
	return "", false
}

// wait sets step i aside until res is freed.
func (r *run) wait(i int, res string) {
	if r.holds.waiting == nil {
		r.holds.waiting = map[string][]int{}
	}
	r.holds.waiting[res] = append(r.holds.waiting[res], i)
}

// take records step i as the holder of what it takes.
func (r *run) take(i int) {
	n := r.p.Nodes[i]
	if len(n.Takes) == 0 {
		return
	}
	if r.holds.holder == nil {
		r.holds.holder = map[string]int{}
	}
	for _, res := range n.Takes {
		r.holds.holder[res] = i
	}
}

// free releases what step i frees, when a step of its group holds it — an
// end whose component never reached the step that takes the folder must
// not free another component's hold — and makes the steps waiting for it
// ready again (they check again when dispatched).
func (r *run) free(i int) {
	n := r.p.Nodes[i]
	for _, res := range n.Frees {
		h, ok := r.holds.holder[res]
		if !ok || r.p.Nodes[h].Group != n.Group {
			continue
		}
		delete(r.holds.holder, res)
		for _, w := range r.holds.waiting[res] {
			heap.Push(&r.ready, w)
		}
		delete(r.holds.waiting, res)
	}
}

// waitingNames lists the resources steps wait for, for the message of a
// plan that cannot go on.
func (r *run) waitingNames() string {
	var names []string
	for res, ws := range r.holds.waiting {
		if len(ws) > 0 {
			names = append(names, res+" (held by "+r.p.Nodes[r.holds.holder[res]].ID+")")
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
