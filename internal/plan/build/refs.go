package build

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/state"
)

// Components are what ${component:output} can name: the stack's
// components, and the ones its state records (an orphan's outputs are read
// from its record).
type Components struct {
	Res    *elaborate.Result
	Before *state.State // nil before the first run
}

// exists reports whether ${name:output} can name a component: one of
// the stack, or one its state records (an orphan's outputs are read from
// its record). A partial stack lacks the components it left out, and
// says yes.
func (cs Components) exists(name string) bool {
	if cs.Res.Partial || cs.Res.Component(name) != nil {
		return true
	}
	return cs.Before != nil && cs.Before.Components[name] != nil
}

// undeployedOrphan reports whether name is a component only the state
// records, as undeployed: it has no outputs to read.
func (cs Components) undeployedOrphan(name string) bool {
	if cs.Res.Partial || cs.Res.Component(name) != nil || cs.Before == nil {
		return false
	}
	rec := cs.Before.Components[name]
	return rec != nil && rec.Status == state.StatusUndeployed
}

// kindOf is the meta.kind of a component of the stack, "" for one the
// stack does not have.
func (cs Components) kindOf(name string) string {
	if c := cs.Res.Component(name); c != nil {
		return c.Meta.Kind
	}
	return ""
}

// suggest is the component a mistaken name may mean: one spelt close to
// it, or a leaf of a nested stack of that name (db for web.db: steps name
// components by their whole path).
func (cs Components) suggest(name string) string {
	names := cs.names()
	if s := manifest.Suggest(name, names); s != "" {
		return s
	}
	var leaf string
	for _, n := range names {
		if strings.HasSuffix(n, "."+name) {
			if leaf != "" {
				return "" // more than one: no guess
			}
			leaf = n
		}
	}
	return leaf
}

// names are the stack's components and the state's not undeployed, for
// suggestions: each once (a deployed one is in both, and a leaf found
// twice would read as two), sorted (the same suggestion among equally
// near ones, whatever the map's order).
func (cs Components) names() []string {
	var names []string
	for _, c := range cs.Res.Components {
		if c != nil {
			names = append(names, c.Meta.Name)
		}
	}
	if cs.Before != nil {
		for name, rec := range cs.Before.Components {
			if rec.Status != state.StatusUndeployed {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// RefProblem says why a reference of component c (nil: the stack's;
// known: the names it sees) can never resolve, "" when it can: a name
// nothing defines, a component neither the stack nor its state has, an
// output of its own kind. where says where the reference is (` in "text"`), after the name;
// names may be nil (no hints for plain names).
func RefProblem(names *Names, cs Components, r params.Part, where string, c *manifest.Component, known func(string) bool) string {
	kind := metaKind(c)
	switch {
	case r.Component == "":
		return UnknownName(names, known, r.Name, where, c)
	case !cs.exists(r.Component):
		msg := fmt.Sprintf("unknown output %s:%s%s: there is no component %s", r.Component, r.Name, where, r.Component)
		if s := cs.suggest(r.Component); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
		return msg
	case kind != "" && cs.kindOf(r.Component) == kind:
		return fmt.Sprintf("unknown output %s:%s%s: a component does not see its own outputs, nor those of other components of its kind (meta.kind %s)", r.Component, r.Name, where, kind)
	}
	return ""
}

// NameCheck is RefProblem for component c's texts (nil c: the stack's
// own), which a plugin checks before anything runs: it takes a reference's
// component ("" for a plain ${name}) and name. It also refuses the outputs
// of an orphan recorded undeployed, which a step may tolerate failing to
// read (on_fail) and a plugin's inputs cannot. names is the stack's (not
// nil).
func NameCheck(names *Names, cs Components, c *manifest.Component) func(component, name string) string {
	known := KnownNames(names, c)
	return func(component, name string) string {
		if msg := RefProblem(names, cs, params.Part{Component: component, Name: name}, "", c, known); msg != "" {
			return msg
		}
		if component != "" && cs.undeployedOrphan(component) {
			// Steps may tolerate this failure (on_fail); a plugin's
			// inputs cannot.
			return fmt.Sprintf("unknown output %s:%s: %s is no longer in the stack and its record says undeployed: it has no outputs", component, name, component)
		}
		return ""
	}
}

// metaKind is component c's meta.kind, "" for the stack's own texts (nil
// c).
func metaKind(c *manifest.Component) string {
	if c == nil {
		return ""
	}
	return c.Meta.Kind
}
