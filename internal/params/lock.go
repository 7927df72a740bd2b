package params

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gantry-dev/gantry/internal/inputfile"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/secret"
)

// Names of the implicit parameters.
const (
	DeploymentID  = "hub.deploymentId"
	StackName     = "hub.stackName"
	ComponentName = "hub.componentName"
	Provides      = "hub.provides"
)

// Sources of values, as gantry params shows them (besides file:line of a
// definition).
const (
	SourceDefault   = "default"
	SourcePrompt    = "prompt"
	SourceState     = "state"
	SourceGenerated = "generated"
	SourceImplicit  = "implicit"
)

// Value is a parameter with its value and where the value came from.
type Value struct {
	Name      string
	Component string // qualifier of a top-level parameter
	Value     string
	Source    string // file:line, env:VAR, file:PATH, default, prompt, state, output:COMPONENT
	Env       string // environment variable the value is exported as
	Link      bool   // a link parameter: Value is the unexpanded template
	Secret    bool
	Pending   string // the component whose output is not known yet (gantry params without state)
	Pos       manifest.Pos
}

// QName is name|component.
func (v *Value) QName() string { return manifest.QualifiedName(v.Name, v.Component) }

// Prompter asks the user for a parameter's value. It is only given to Lock when
// stdin is a terminal.
type Prompter interface {
	Prompt(p *manifest.Parameter, current string) (string, error)
}

// LockInput is what locking the top-level parameters needs besides the stack.
type LockInput struct {
	Stack *manifest.Stack
	// Env looks up environment variables (the OS environment with -e overrides).
	Env func(name string) (string, bool)
	// Prompt asks for missing user parameters; nil when stdin is not a terminal.
	Prompt Prompter
	// State holds the values of the last run by qualified name.
	State map[string]string
	// DeploymentID is the id kept in state; a new one is generated when empty.
	DeploymentID string
	// Outputs names the outputs each component declares, for hints when a
	// parameter refers to one.
	Outputs map[string][]string
	// Lenient reports parameters without a value as warnings (gantry validate,
	// which runs where secrets are not set).
	Lenient bool
}

// Locked is the locked set of top-level parameters: it never changes during a run.
type Locked struct {
	StackName    string
	DeploymentID string
	list         []*Value
	index        map[string]*Value
	names        []string // plain names, for suggestions
	// budget bounds the work of the lock and of every expansion of a
	// component with these parameters.
	budget *Budget
}

// Budget returns the budget shared by the expansions of these parameters.
func (l *Locked) Budget() *Budget { return l.budget }

// WithBudget returns the same parameters whose expansions are charged to b.
func (l *Locked) WithBudget(b *Budget) *Locked {
	c := *l
	c.budget = b
	return &c
}

// SecretNames returns the qualified names of the secret values whose names
// do not look secret, sorted: those declared secret or computed from a
// secret. The state records them so that what shows it masks them too.
func (l *Locked) SecretNames() []string {
	var out []string
	for _, v := range l.list {
		if v.Secret && !manifest.LooksSecret(v.Name) {
			out = append(out, v.QName())
		}
	}
	return out
}

// Values returns the locked parameters, sorted by qualified name, implicit ones
// included.
func (l *Locked) Values() []*Value { return l.list }

// Get returns the parameter with the qualified name, or nil.
func (l *Locked) Get(qname string) *Value { return l.index[qname] }

// Map returns qualified name → value, for the state.
func (l *Locked) Map() map[string]string {
	m := make(map[string]string, len(l.list))
	for _, v := range l.list {
		m[v.QName()] = v.Value
	}
	return m
}

// NewDeploymentID returns a random id for a new deployment.
func NewDeploymentID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

type evalState uint8

const (
	unvisited evalState = iota
	visiting
	done
	failed
)

// errReported stands for an error already reported on another parameter, so
// that one mistake gives one message.
var errReported = errors.New("reported")

type locker struct {
	// overBudget is set once the budget's error has been reported: the
	// parameters that fail after it fail for the same reason.
	overBudget bool
	in         LockInput
	l          *Locked
	tmpl       map[*Value]*Template
	state      map[*Value]evalState
	stack      []*Value
	diags      manifest.Diagnostics
	outputs    map[string]string // plain output name -> a component declaring it
}

// Lock locks the top-level parameters (seed 000 "Deploy" 1-3): values from the
// manifests, else, for user parameters, fromEnv, fromFile, a prompt (on a
// terminal), default; else the state (with a warning); else "" — with
// empty: allow, or with a warning for a parameter that is not kind: user,
// else an error. Then expressions are evaluated. Every error and warning is
// collected.
func Lock(in LockInput) (*Locked, manifest.Diagnostics) {
	if in.Env == nil {
		in.Env = os.LookupEnv
	}
	lk := &locker{
		in:      in,
		l:       &Locked{StackName: in.Stack.Meta.Name, index: map[string]*Value{}, budget: NewBudget()},
		tmpl:    map[*Value]*Template{},
		state:   map[*Value]evalState{},
		outputs: map[string]string{},
	}
	comps := make([]string, 0, len(in.Outputs))
	for c := range in.Outputs {
		comps = append(comps, c)
	}
	sort.Strings(comps)
	for _, c := range comps {
		for _, o := range in.Outputs[c] {
			if _, ok := lk.outputs[o]; !ok {
				lk.outputs[o] = c
			}
		}
	}
	lk.implicit()
	for i := range in.Stack.Parameters {
		lk.source(&in.Stack.Parameters[i])
	}
	for _, v := range lk.l.list {
		if _, err := lk.eval(v); err != nil && !errors.Is(err, errReported) {
			lk.errorf(v, "%v", err)
		}
	}
	lk.linkCycles()
	sort.SliceStable(lk.l.list, func(i, j int) bool {
		a, b := lk.l.list[i], lk.l.list[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Component < b.Component
	})
	seen := map[string]bool{}
	for _, v := range lk.l.list {
		if !seen[v.Name] {
			seen[v.Name] = true
			lk.l.names = append(lk.l.names, v.Name)
		}
	}
	return lk.l, lk.diags
}

func (lk *locker) add(v *Value) {
	lk.l.list = append(lk.l.list, v)
	lk.l.index[v.QName()] = v
}

func (lk *locker) implicit() {
	id, src := lk.in.DeploymentID, SourceState
	if id == "" {
		id, src = NewDeploymentID(), SourceGenerated
	}
	lk.l.DeploymentID = id
	for _, v := range []*Value{
		{Name: DeploymentID, Value: id, Source: src},
		{Name: StackName, Value: lk.l.StackName, Source: SourceImplicit},
	} {
		lk.add(v)
		lk.state[v] = done
	}
}

func (lk *locker) errorf(v *Value, format string, args ...any) {
	lk.diags.Errorf(v.Pos, "", "parameter %q: "+format, append([]any{v.QName()}, args...)...)
	lk.state[v] = failed
}

// source finds where a parameter's value comes from. As in the Hub CLI, only
// kind: user parameters are looked for beyond their value (fromEnv,
// fromFile, a prompt, their default) and must have one; any other parameter
// without a value is empty, with a warning, and its default is not used
// (a warning says so). The state fills an empty value of either.
func (lk *locker) source(p *manifest.Parameter) {
	v := &Value{Name: p.Name, Component: p.Component, Env: p.Env, Pos: p.Origin, Secret: p.IsSecret(), Link: p.Kind == manifest.KindLink}
	if v.Pos.File == "" {
		v.Pos = p.Pos
	}
	lk.add(v)
	user := isUser(p)
	if p.Default != "" && !user {
		but := ""
		if p.Kind != "" {
			but = " but kind: " + p.Kind
		}
		lk.diags.Warnf(v.Pos, "", "parameter %q default %s won't be used as the parameter is not kind: user%s", v.QName(), secret.Shown(string(p.Default), v.Secret || manifest.LooksSecret(v.Name)), but)
	}
	fromManifest := func(s string, src string) {
		t, err := Parse(s)
		if err != nil {
			lk.errorf(v, "%v", err)
			return
		}
		v.Value, v.Source = s, src
		if !v.Link && !t.IsLiteral() {
			lk.tmpl[v] = t
		}
	}
	if p.Value != "" {
		fromManifest(string(p.Value), v.Pos.FileLine())
		return
	}
	current := lk.in.State[v.QName()]
	if !user {
		switch {
		case current != "" && !v.Link:
			v.Value, v.Source = current, SourceState
			lk.diags.Warnf(v.Pos, "", "parameter %q has no value; using the one from the last run (state)", v.QName())
		case p.AllowsEmpty():
			v.Source = v.Pos.FileLine()
		default:
			v.Source = v.Pos.FileLine()
			hint := ""
			if p.FromEnv != "" || p.FromFile != "" {
				hint = "; fromEnv and fromFile are read for kind: user parameters only"
			}
			lk.diags.Warnf(v.Pos, "", "parameter %q has no value: it is empty (only kind: user parameters must have one)%s", v.QName(), hint)
		}
		return
	}
	if p.FromEnv != "" {
		if s, ok := lk.in.Env(p.FromEnv); ok && s != "" {
			v.Value, v.Source = s, "env:"+p.FromEnv
			return
		}
	}
	if p.FromFile != "" {
		path := lk.filePath(p)
		b, err := inputfile.Read(path, inputfile.MaxValue)
		if err != nil {
			lk.errorf(v, "fromFile %s: %s", p.FromFile, readErr(err))
			return
		}
		v.Value, v.Source = strings.TrimSuffix(string(b), "\n"), "file:"+path
		return
	}
	if lk.in.Prompt != nil && p.Default == "" {
		s, err := lk.in.Prompt.Prompt(p, current)
		if err != nil {
			lk.errorf(v, "prompt: %v", err)
			return
		}
		switch {
		case s != "":
			v.Value, v.Source = s, SourcePrompt
			return
		case current != "":
			v.Value, v.Source = current, SourceState
			return
		}
	}
	if p.Default != "" {
		fromManifest(string(p.Default), SourceDefault)
		return
	}
	if current != "" {
		v.Value, v.Source = current, SourceState
		lk.diags.Warnf(v.Pos, "", "parameter %q has no value; using the one from the last run (state)", v.QName())
		return
	}
	if p.AllowsEmpty() {
		v.Source = v.Pos.FileLine()
		return
	}
	if lk.in.Lenient {
		lk.diags.Warnf(v.Pos, "", "parameter %q has no value here; deploy will need one: %s", v.QName(), missingHint(p))
		v.Source = "missing"
		return
	}
	lk.errorf(v, "no value: %s", missingHint(p))
}

// isUser reports whether a top-level parameter is a user parameter: kind:
// user, or no kind with fromEnv or fromFile (the Hub CLI makes those user
// parameters when it elaborates).
func isUser(p *manifest.Parameter) bool {
	return p.Kind == manifest.KindUser || p.Kind == "" && (p.FromEnv != "" || p.FromFile != "")
}

// filePath expands $VARS and ~ in fromFile; a relative path is relative to the
// file that defines the parameter.
func (lk *locker) filePath(p *manifest.Parameter) string {
	path := os.Expand(p.FromFile, func(k string) string {
		s, _ := lk.in.Env(k)
		return s
	})
	if strings.HasPrefix(path, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(home, path[2:])
		}
	}
	if !filepath.IsAbs(path) && p.Origin.File != "" {
		path = filepath.Join(filepath.Dir(p.Origin.File), path)
	}
	return path
}

func readErr(err error) string {
	if os.IsNotExist(err) {
		return "no such file"
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func missingHint(p *manifest.Parameter) string {
	var ways []string
	if p.FromEnv != "" {
		ways = append(ways, "export "+p.FromEnv)
	}
	ways = append(ways, "give it a value or a default", "pass it in a params file", "allow it to be empty with empty: allow")
	return strings.Join(ways[:len(ways)-1], ", ") + " or " + ways[len(ways)-1]
}

// eval evaluates a parameter's expressions once, detecting cycles.
func (lk *locker) eval(v *Value) (string, error) {
	switch lk.state[v] {
	case done:
		return v.Value, nil
	case failed:
		return "", errReported
	case visiting:
		i := len(lk.stack) - 1
		for i > 0 && lk.stack[i] != v {
			i--
		}
		names := []string{}
		for _, s := range lk.stack[i:] {
			names = append(names, s.QName())
		}
		names = append(names, v.QName())
		for _, s := range lk.stack[i:] {
			lk.state[s] = failed
		}
		lk.diags.Errorf(v.Pos, "", "parameter cycle: %s", strings.Join(names, " → "))
		return "", errReported
	}
	t, ok := lk.tmpl[v]
	if !ok {
		lk.state[v] = done
		return v.Value, nil
	}
	lk.state[v] = visiting
	lk.stack = append(lk.stack, v)
	s, err := t.Eval(&lockResolver{lk: lk, from: v})
	lk.stack = lk.stack[:len(lk.stack)-1]
	if err != nil {
		if lk.state[v] != failed {
			var be *BudgetError
			switch {
			case errors.Is(err, errReported):
			case errors.As(err, &be) && lk.overBudget:
			default:
				lk.overBudget = lk.overBudget || be != nil
				lk.errorf(v, "%v", err)
			}
			lk.state[v] = failed
		}
		return "", errReported
	}
	v.Value = s
	lk.state[v] = done
	return s, nil
}

// lockResolver resolves references between top-level parameters: name|component
// for a qualified parameter first, then the plain name.
type lockResolver struct {
	lk   *locker
	from *Value
}

func (r *lockResolver) Lookup(name string) (string, error) {
	l := r.lk.l
	v := l.index[manifest.QualifiedName(name, r.from.Component)]
	if v == nil {
		v = l.index[name]
	}
	if v == nil {
		e := &UnknownError{Name: name, Suggestion: manifest.Suggest(name, r.lk.allNames())}
		if name == ComponentName || name == Provides {
			e.Hint = "it is known only inside a component; make this parameter kind: link"
			e.Suggestion = ""
		} else if c, ok := r.lk.outputs[name]; ok {
			e.Hint = fmt.Sprintf("it is an output of component %s, known only once it has run; make this parameter kind: link", c)
			e.Suggestion = ""
		}
		return "", e
	}
	if v.Link {
		return "", fmt.Errorf("refers to link parameter %q, which is resolved per component; make this parameter kind: link too", v.QName())
	}
	s, err := r.lk.eval(v)
	// What is computed from a secret is a secret: the value being evaluated
	// (the top of the stack) read this one.
	if v.Secret && len(r.lk.stack) > 0 {
		r.lk.stack[len(r.lk.stack)-1].Secret = true
	}
	return s, err
}

// SecretRead reports whether the value being evaluated is secret: declared
// so, or it read a secret (Lookup marks it).
func (r *lockResolver) SecretRead() bool { return r.from.Secret }

// Budget is the lock's budget.
func (r *lockResolver) Budget() *Budget { return r.lk.l.budget }

func (r *lockResolver) Output(component, name string) (string, error) {
	return "", fmt.Errorf("refers to output %s:%s, known only once %s has run; make this parameter kind: link", component, name, component)
}

func (lk *locker) allNames() []string {
	names := make([]string, 0, len(lk.l.list))
	for _, v := range lk.l.list {
		names = append(names, v.Name)
	}
	return names
}

// FromState returns the locked parameters of the last run as the state
// recorded them, for commands that must work whatever the environment holds
// now (undeploy).
func FromState(stackName, deploymentID string, values map[string]string) *Locked {
	l := &Locked{StackName: stackName, DeploymentID: deploymentID, index: map[string]*Value{}, budget: NewBudget()}
	add := func(v *Value) {
		l.list = append(l.list, v)
		l.index[v.QName()] = v
	}
	add(&Value{Name: DeploymentID, Value: deploymentID, Source: SourceState})
	add(&Value{Name: StackName, Value: stackName, Source: SourceImplicit})
	for q, val := range values {
		name, comp, _ := strings.Cut(q, "|")
		if name == DeploymentID || name == StackName {
			continue
		}
		add(&Value{Name: name, Component: comp, Value: val, Source: SourceState, Secret: manifest.LooksSecret(name)})
	}
	sort.Slice(l.list, func(i, j int) bool { return l.list[i].QName() < l.list[j].QName() })
	for _, v := range l.list {
		l.names = append(l.names, v.Name)
	}
	return l
}

// Restore rebuilds locked parameters from the values a Lock gave, in its
// order: a run rebuilt from its bundle on a Temporal worker
// (docs/temporal.md), whose environment and terminal are not the client's.
func Restore(stackName, deploymentID string, values []*Value) *Locked {
	l := &Locked{StackName: stackName, DeploymentID: deploymentID, index: map[string]*Value{}, budget: NewBudget()}
	seen := map[string]bool{}
	for _, v := range values {
		l.list = append(l.list, v)
		l.index[v.QName()] = v
		if !seen[v.Name] {
			seen[v.Name] = true
			l.names = append(l.names, v.Name)
		}
	}
	return l
}

// linkCycles reports cycles among link parameters now, although links are
// only expanded per component: a cycle is an error before anything runs.
func (lk *locker) linkCycles() {
	links := map[string][]*Value{} // plain name -> link parameters of that name
	var all []*Value
	for _, v := range lk.l.list {
		if v.Link {
			links[v.Name] = append(links[v.Name], v)
			all = append(all, v)
		}
	}
	if len(all) == 0 {
		return
	}
	refs := func(v *Value) []*Value {
		var out []*Value
		t, err := Parse(v.Value)
		if err != nil {
			return nil
		}
		for _, p := range t.Parts {
			switch p.Kind {
			case Ref:
				if p.Component == "" {
					out = append(out, links[p.Name]...)
				}
			case Expr:
				for _, chain := range ExprNames(p.Text) {
					for _, n := range chain {
						out = append(out, links[n]...)
					}
				}
			}
		}
		return out
	}
	state := map[*Value]evalState{}
	var stack []*Value
	var visit func(v *Value) bool
	visit = func(v *Value) bool {
		switch state[v] {
		case visiting:
			i := len(stack) - 1
			for i > 0 && stack[i] != v {
				i--
			}
			names := []string{}
			for _, s := range stack[i:] {
				names = append(names, s.QName())
			}
			names = append(names, v.QName())
			lk.diags.Errorf(v.Pos, "", "parameter cycle: %s", strings.Join(names, " → "))
			return true
		case done:
			return false
		}
		state[v] = visiting
		stack = append(stack, v)
		for _, r := range refs(v) {
			if visit(r) {
				for _, s := range stack {
					state[s] = done
				}
				stack = stack[:0]
				return true
			}
		}
		stack = stack[:len(stack)-1]
		state[v] = done
		return false
	}
	for _, v := range all {
		if state[v] == unvisited {
			stack = stack[:0]
			visit(v)
		}
	}
}
