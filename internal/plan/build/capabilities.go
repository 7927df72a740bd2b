package build

import (
	"slices"
	"strings"
)

// CapabilitySet is a set of capabilities with where each comes from: fixed
// ones (the environment's, the stack's) stay; one a component provides is
// known while a component provides it. Its members are kept sorted and their
// list joined, since hub.provides is asked for every component: sorting them
// all each time was quadratic (2.2 s of a deploy of 4,000 components that
// provide one each). The zero value is empty and ready; it is not safe for
// concurrent use.
type CapabilitySet struct {
	fixed map[string]bool
	by    map[string]map[string]bool // capability -> components providing it
	of    map[string][]string        // component -> what it provides (Remove)
	known []string                   // every capability, sorted
	list  string                     // known joined, when listed
	// listed says list is up to date.
	listed bool
}

// Add records capabilities that no component removes.
func (c *CapabilitySet) Add(caps ...string) {
	for _, p := range caps {
		if !c.fixed[p] {
			if c.fixed == nil {
				c.fixed = map[string]bool{}
			}
			c.fixed[p] = true
			c.learn(p)
		}
	}
}

// AddFor records capabilities comp provides.
func (c *CapabilitySet) AddFor(comp string, caps ...string) {
	if len(caps) == 0 {
		return
	}
	if c.by == nil {
		c.by, c.of = map[string]map[string]bool{}, map[string][]string{}
	}
	for _, p := range caps {
		if c.by[p] == nil {
			c.by[p] = map[string]bool{}
			c.learn(p)
		}
		if !c.by[p][comp] {
			c.by[p][comp] = true
			c.of[comp] = append(c.of[comp], p)
		}
	}
}

// learn adds p to the known capabilities, if new.
func (c *CapabilitySet) learn(p string) {
	if i, found := slices.BinarySearch(c.known, p); !found {
		c.known = slices.Insert(c.known, i, p)
		c.listed = false
	}
}

// Remove forgets what comp provides: a capability stays known while
// something else provides it.
func (c *CapabilitySet) Remove(comp string) {
	for _, p := range c.of[comp] {
		comps := c.by[p]
		delete(comps, comp)
		if len(comps) > 0 {
			continue
		}
		delete(c.by, p)
		if c.fixed[p] {
			continue
		}
		if i, found := slices.BinarySearch(c.known, p); found {
			c.known = slices.Delete(c.known, i, i+1)
			c.listed = false
		}
	}
	delete(c.of, comp)
}

// Has reports whether p is known.
func (c *CapabilitySet) Has(p string) bool { return c.fixed[p] || c.by[p] != nil }

// Fixed are the capabilities no component removes, sorted.
func (c *CapabilitySet) Fixed() []string {
	out := make([]string, 0, len(c.fixed))
	for p := range c.fixed {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// String is the space-separated sorted list, as HUB_PROVIDES and
// hub.provides show it.
func (c *CapabilitySet) String() string {
	if !c.listed {
		c.list, c.listed = strings.Join(c.known, " "), true
	}
	return c.list
}
