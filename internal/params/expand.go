package params

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/internal/manifest"
)

// PendingError is a reference to an output of a component that has not run
// yet: gantry params shows such values as pending instead of failing.
type PendingError struct{ Component string }

func (e *PendingError) Error() string { return "pending output of " + e.Component }

// ComponentInput is what expanding one component's parameters needs.
type ComponentInput struct {
	Locked    *Locked
	Component *manifest.Component // meta.name is the stack's name for it
	Depends   []string
	Outputs   *OutputIndex
	// Provides is the space-separated list of capabilities known so far.
	Provides string
	// LeftOut are the components a partial stack left out (validate past
	// broken manifests). A plain name nothing here declares may be one of
	// theirs, and so is an output of one of them: such a value waits, as a
	// pending output does, instead of being an error.
	LeftOut map[string]bool
}

// Expanded is a component's parameters with their values.
type Expanded struct {
	Component string
	Values    []*Value // in manifest order
	byName    map[string]*Value
	x         *expander
	reads     *readLog
}

// Resolver resolves names as templates of the component see them: its own
// parameters first, then its scope (stack parameters and outputs).
func (e *Expanded) Resolver() Resolver {
	return &compResolver{x: e.x.fork(e.x.secrets), locals: true, reads: e.reads}
}

// fork is a copy of the expander for one resolver: resolvers of a
// component may be used at once (the entries of a parallel plugin list),
// so each has its own secrets flag (secrets is where it starts) and its
// own marks of the link parameters it is expanding — one's "visiting"
// mark seen by another was a false "link parameter cycle", and the map
// written by both a fatal concurrent write. The scope it reads (locked
// parameters, outputs, the component's values) is shared, read only.
func (x *expander) fork(secrets bool) *expander {
	c := *x
	c.secrets = secrets
	c.links = make(map[*Value]evalState, len(x.links))
	for v, st := range x.links {
		c.links[v] = st
	}
	return &c
}

// SecretTracking returns a Resolver like Resolver's and a function that
// reports whether any value it gave out was secret or computed from a secret,
// for consumers that must treat what they made from those values as secret
// (a rendered template is written 0600).
func (e *Expanded) SecretTracking() (Resolver, func() bool) {
	x := e.x.fork(false)
	return &compResolver{x: x, locals: true, reads: e.reads}, func() bool { return x.secrets }
}

// HasSecrets reports whether any of the component's values is secret and not
// empty.
func (e *Expanded) HasSecrets() bool {
	for _, v := range e.Values {
		if v.Secret && v.Value != "" {
			return true
		}
	}
	return false
}

// Suggest returns the parameter name closest to name when it looks like a typo.
func (e *Expanded) Suggest(name string) string {
	names := make([]string, 0, len(e.Values))
	for _, v := range e.Values {
		names = append(names, v.Name)
	}
	if e.x != nil && e.x.in.Locked != nil {
		names = append(names, e.x.in.Locked.names...)
	}
	return manifest.Suggest(name, names)
}

// IsSecret reports whether the value of name, as the component's templates see
// it, is secret.
func (e *Expanded) IsSecret(name string) bool {
	if v := e.byName[name]; v != nil {
		return v.Secret
	}
	return manifest.LooksSecret(name)
}

// SetProvides sets what hub.provides is for the component: the
// capabilities known when its verb runs.
func (e *Expanded) SetProvides(provides string) {
	if e.x != nil {
		e.x.in.Provides = provides
	}
}

// Provides is what hub.provides is for the component, as expanded or set;
// ok is false when nothing gave it.
func (e *Expanded) Provides() (provides string, ok bool) {
	if e == nil || e.x == nil {
		return "", false
	}
	return e.x.in.Provides, true
}

// ReadsProvides reports whether a value read hub.provides: the capabilities
// known when the component's verb runs, which the components run before it
// may change.
func (e *Expanded) ReadsProvides() bool { return e.x != nil && e.x.readProvides }

// Get returns the parameter named name, or nil.
func (e *Expanded) Get(name string) *Value { return e.byName[name] }

// Map returns name → value.
func (e *Expanded) Map() map[string]string {
	m := make(map[string]string, len(e.Values))
	for _, v := range e.Values {
		m[v.Name] = v.Value
	}
	return m
}

// Env returns the NAME=value pairs of parameters with env:, in manifest order,
// each value trimmed of leading and trailing white space as the Hub CLI does
// (so a value of only spaces is empty, seed 000).
func (e *Expanded) Env() []string {
	var env []string
	for _, v := range e.Values {
		if v.Env != "" {
			env = append(env, v.Env+"="+Trimmed(v.Value))
		}
	}
	return env
}

// Trimmed is a value as the environment and templates get it: without
// leading and trailing white space, as the Hub CLI gives it (a value of only
// spaces is empty). Values keep their spaces everywhere else: in expansions,
// outputs and the state.
func Trimmed(v string) string { return strings.TrimSpace(v) }

type expander struct {
	in      ComponentInput
	name    string
	kind    string // the component's meta.kind: outputs of its kind are hidden
	locals  map[string]*Value
	links   map[*Value]evalState
	diags   manifest.Diagnostics
	secrets bool // the value being expanded used a secret
	// overBudget is set once the budget's error has been reported for this
	// component.
	overBudget bool
	// readProvides is set when a value read hub.provides, which changes as
	// a run goes on.
	readProvides bool
}

// ExpandComponent expands a component's parameters top to bottom (seed 000
// "On each component deploy"): each is looked up in scope — name|component,
// then dep:name for each of its depends, then the plain name, outputs of
// earlier components before stack parameters — and only when nothing is found
// does the manifest's value or default apply. Parameters see the ones above them.
func ExpandComponent(in ComponentInput) (*Expanded, manifest.Diagnostics) {
	x := &expander{in: in, name: in.Component.Meta.Name, locals: map[string]*Value{}, links: map[*Value]evalState{}}
	x.kind = in.Component.Meta.Kind
	if x.kind == "" && in.Outputs != nil {
		x.kind = in.Outputs.Kind(x.name)
	}
	out := &Expanded{Component: x.name, byName: map[string]*Value{}, x: x, reads: &readLog{}}
	for i := range in.Component.Parameters {
		p := &in.Component.Parameters[i]
		v := x.expand(p)
		out.Values = append(out.Values, v)
		out.byName[v.Name] = v
		x.locals[v.Name] = v
	}
	return out, x.diags
}

func (x *expander) expand(p *manifest.Parameter) *Value {
	v := &Value{Name: p.Name, Env: p.Env, Pos: p.Pos, Secret: p.IsSecret()}
	x.secrets = false
	s, src, err := x.global(p.Name)
	// Only "the name itself is not in scope" falls back to the manifest's value;
	// errors from inside a link parameter are wrapped and reported.
	ue, notFound := err.(*UnknownError)
	switch {
	case err == nil:
		v.Value, v.Source = s, src
		v.Secret = v.Secret || x.secrets
		return v
	case !notFound || ue.Name != p.Name || ue.Component != "":
		x.fail(v, err)
		return v
	}
	raw, src := string(p.Value), v.Pos.FileLine()
	if raw == "" && p.Default != "" {
		raw, src = string(p.Default), SourceDefault
	}
	if raw != "" {
		s, err := Expand(raw, &compResolver{x: x, locals: true})
		if err != nil {
			x.fail(v, err)
			return v
		}
		// What a value or default expands to is the value, empty or not
		// (the Hub CLI checks only parameters that have none).
		v.Value, v.Source = s, src
		v.Secret = v.Secret || x.secrets
		return v
	}
	if p.AllowsEmpty() {
		v.Source = v.Pos.FileLine()
		return v
	}
	if len(x.in.LeftOut) > 0 {
		v.Pending, v.Source = leftOut, "output:"+leftOut
		return v
	}
	x.diags.Errorf(v.Pos, "", "component %s: parameter %q has no value: it is not a stack parameter, an output of %s or an earlier component, and has no value or default here; add it to the stack's parameters or allow it to be empty with empty: allow",
		x.name, p.Name, x.dependsText())
	return v
}

// leftOut is what a value of a partial stack waits for when it names
// something a component left out may declare (ComponentInput.LeftOut): shown
// where a pending output's component would be.
const leftOut = "(a component left out)"

// leftOutMay reports whether err is about a name a component left out may
// declare: a plain name nothing here defines, in a ${...} or an expression,
// or an output of a component left out.
func (x *expander) leftOutMay(err error) bool {
	if len(x.in.LeftOut) == 0 {
		return false
	}
	var ue *UnknownError
	var ee *ExprError
	switch {
	case errors.As(err, &ue):
		return ue.Component == "" || x.in.LeftOut[ue.Component]
	case errors.As(err, &ee):
		return ee.Unknown != ""
	}
	return false
}

func (x *expander) dependsText() string {
	if len(x.in.Depends) == 0 {
		return "a dependency"
	}
	return strings.Join(x.in.Depends, ", ")
}

func (x *expander) fail(v *Value, err error) {
	var pe *PendingError
	if errors.As(err, &pe) {
		v.Pending, v.Source = pe.Component, "output:"+pe.Component
		return
	}
	if x.leftOutMay(err) {
		v.Pending, v.Source = leftOut, "output:"+leftOut
		return
	}
	var be *BudgetError
	if errors.As(err, &be) {
		if x.overBudget {
			return
		}
		x.overBudget = true
	}
	var ue *UnknownError
	if errors.As(err, &ue) && ue.Component == "" && ue.Suggestion == "" {
		names := append(x.in.Outputs.declared(), x.in.Locked.names...)
		for n := range x.locals {
			names = append(names, n)
		}
		// An output this component cannot see (of a later component,
		// or of its kind) is declared under the very name.
		names = slices.DeleteFunc(names, func(n string) bool { return n == ue.Name })
		ue.Suggestion = manifest.Suggest(ue.Name, names)
	}
	x.diags.Errorf(v.Pos, "", "component %s: parameter %q: %v", x.name, v.Name, err)
}

// global looks a name up in the component's scope, outside its own parameters;
// it returns the value and its source.
func (x *expander) global(name string) (string, string, error) {
	switch name {
	case ComponentName:
		return x.name, SourceImplicit, nil
	case Provides:
		x.readProvides = true
		return x.in.Provides, SourceImplicit, nil
	}
	l := x.in.Locked
	if v := l.Get(manifest.QualifiedName(name, x.name)); v != nil {
		return x.topLevel(v)
	}
	for _, dep := range x.in.Depends {
		if x.in.Outputs.hidden(dep, x.kind) {
			continue
		}
		if r := x.in.Outputs.get(dep, name); r.found {
			return x.output(r, name)
		}
	}
	if r := x.in.Outputs.plain(name, x.name, x.kind); r.found {
		return x.output(r, name)
	}
	if v := l.Get(name); v != nil {
		return x.topLevel(v)
	}
	// No suggestion here: a miss is the normal way to fall back to the
	// component's own value; fail adds one when the miss becomes an error.
	return "", "", &UnknownError{Name: name}
}

// explainMiss adds to the miss of a name the component declares as its
// own output why it misses. Only where a miss is an error (a resolver's
// lookup), not in global, whose misses are the normal way a parameter
// falls back to its own value.
func (x *expander) explainMiss(err error) error {
	ue, ok := err.(*UnknownError)
	if !ok || ue.Component != "" || ue.Hint != "" || x.in.Component == nil {
		return err
	}
	for _, o := range x.in.Component.Outputs {
		if o.Name == ue.Name {
			return &UnknownError{Name: ue.Name, Hint: "it is an output of " + x.name + " itself, and a component does not see its own outputs"}
		}
	}
	return err
}

func (x *expander) output(r outputResult, name string) (string, string, error) {
	if r.pending {
		return "", "", &PendingError{Component: r.comp}
	}
	if x.in.Outputs.IsSecret(r.comp, name) {
		x.secrets = true
	}
	return r.value, "output:" + r.comp, nil
}

// topLevel returns a locked parameter's value; a link parameter is expanded
// here, in this component's scope, so that it can read outputs.
func (x *expander) topLevel(v *Value) (string, string, error) {
	if v.Secret {
		x.secrets = true
	}
	if !v.Link {
		return v.Value, v.Source, nil
	}
	switch x.links[v] {
	case visiting:
		return "", "", fmt.Errorf("link parameter cycle through %q", v.QName())
	case failed:
		return "", "", errReported
	}
	x.links[v] = visiting
	s, err := Expand(v.Value, &compResolver{x: x})
	if err != nil {
		x.links[v] = failed
		if errors.Is(err, errReported) {
			return "", "", err
		}
		var pe *PendingError
		if errors.As(err, &pe) {
			delete(x.links, v)
			return "", "", err
		}
		return "", "", fmt.Errorf("link parameter %q (%s): %w", v.QName(), v.Pos.FileLine(), err)
	}
	delete(x.links, v)
	return s, v.Source, nil
}

// compResolver resolves references inside a component: its parameters above
// the one being expanded first (when locals), then the component's scope.
type compResolver struct {
	x      *expander
	locals bool
	// reads, when set, records what the resolver gives out of names
	// outside the component's parameters (Expanded.Reads).
	reads *readLog
}

func (r *compResolver) Lookup(name string) (string, error) {
	if r.locals {
		if v, ok := r.x.locals[name]; ok {
			if v.Pending != "" {
				return "", &PendingError{Component: v.Pending}
			}
			if v.Secret {
				r.x.secrets = true
			}
			return v.Value, nil
		}
	}
	if r.reads == nil {
		s, _, err := r.x.global(name)
		return s, r.x.explainMiss(err)
	}
	before := r.x.secrets
	r.x.secrets = false
	s, source, err := r.x.global(name)
	err = r.x.explainMiss(err)
	secret := r.x.secrets
	r.x.secrets = before || secret
	from, isOutput := strings.CutPrefix(source, "output:")
	if !isOutput {
		from = ""
	}
	// A plain name with a colon (a mustache tag {{z:z.out}}) names nothing
	// a stack defines, and its key would be an output's (ReadKey).
	if !strings.Contains(name, ":") {
		r.record(name, s, from, err, secret)
	}
	return s, err
}

// SecretRead reports whether the value being expanded read a secret.
func (r *compResolver) SecretRead() bool { return r.x.secrets }

// Budget is the budget of the parameters the component was expanded with.
func (r *compResolver) Budget() *Budget { return r.x.in.Locked.budget }

func (r *compResolver) Output(component, name string) (string, error) {
	if r.reads == nil {
		return r.output(component, name)
	}
	before := r.x.secrets
	r.x.secrets = false
	s, err := r.output(component, name)
	secret := r.x.secrets
	r.x.secrets = before || secret
	r.record(ReadKey(component, name), s, component, err, secret)
	return s, err
}

// output is Output without recording the read.
func (r *compResolver) output(component, name string) (string, error) {
	if r.x.in.Outputs.hidden(component, r.x.kind) {
		hint := fmt.Sprintf("%s is of the same kind as %s (meta.kind %s): a component does not see the outputs of components of its kind", component, r.x.name, r.x.kind)
		if component == r.x.name {
			hint = fmt.Sprintf("a component does not see its own outputs, nor those of other components of its kind (meta.kind %s)", r.x.kind)
		}
		return "", &UnknownError{Name: name, Component: component, Hint: hint}
	}
	res := r.x.in.Outputs.get(component, name)
	if !res.found {
		if r.x.in.Outputs.Known(component) {
			return "", &UnknownError{Name: name, Component: component, Hint: "the component did not produce it"}
		}
		if _, ok := r.x.in.Outputs.pos[component]; !ok {
			return "", &UnknownError{Name: name, Component: component, Hint: "there is no component " + component}
		}
		return "", &PendingError{Component: component}
	}
	s, _, err := r.x.output(res, name)
	return s, err
}

// Recorded returns the parameters a component ran with, as the state recorded
// them, for verbs that must not depend on the current manifest (undeploy).
// Templates see these values, then outputs of other components.
func Recorded(component string, values []*Value, outputs *OutputIndex, locked *Locked) *Expanded {
	x := &expander{
		in:     ComponentInput{Component: &manifest.Component{Meta: manifest.ComponentMeta{Name: component}}, Outputs: outputs, Locked: locked},
		name:   component,
		locals: map[string]*Value{},
		links:  map[*Value]evalState{},
	}
	if outputs != nil {
		x.kind = outputs.Kind(component)
	}
	if x.in.Locked == nil {
		x.in.Locked = &Locked{index: map[string]*Value{}, budget: NewBudget()}
	}
	out := &Expanded{Component: component, byName: map[string]*Value{}, x: x}
	for _, v := range values {
		out.Values = append(out.Values, v)
		out.byName[v.Name] = v
		x.locals[v.Name] = v
	}
	return out
}
