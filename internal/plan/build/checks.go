package build

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/stepvars"
	"github.com/gantry-dev/gantry/internal/plugin"
	"github.com/gantry-dev/gantry/internal/state"
)

// checkRequirements refuses, before anything runs, a requirement that
// nothing can satisfy: no component of the stack provides it, the
// environment does not (its tool is not on PATH), the state does not, and it
// is not tuned optional.
func (b *builder) checkRequirements(cp *compPlan) {
	if b.res.Partial {
		return // a component left out may provide it
	}
	name := cp.info.Name
	for _, req := range cp.c.Requires {
		if b.provides[req] || IsOptionalRequirement(b.res.Stack, req, name) || slices.Contains(cp.info.DroppedRequires, req) {
			continue
		}
		provided := containsName(b.res.Stack.Provides, req)
		for _, other := range b.res.Components {
			if other.Meta.Name != name && containsName(other.Provides, req) {
				provided = true
			}
		}
		if provided {
			continue
		}
		hint := "no component provides it"
		if why, ok := b.f.EnvironmentWhy[req]; ok {
			hint = "no component provides it and " + why
		} else if IsEnvironmentCapability(req) {
			hint = fmt.Sprintf("no component provides it and its tool (%s) is not on PATH", strings.Join(EnvironmentTools(req), ", "))
		}
		b.diags.Errorf(cp.pos, "", "component %s requires %s: %s; add a component that provides it, or make it optional with lifecycle.requires.optional: [%s:%s]", name, req, hint, req, name)
	}
}

// IsOptionalRequirement reports whether lifecycle.requires.optional softens
// req for comp: "req" for everyone or "req:comp" for comp.
func IsOptionalRequirement(s *manifest.Stack, req, comp string) bool {
	for _, e := range s.Lifecycle.Requires.Optional {
		r, c, qualified := strings.Cut(e, ":")
		if r == req && (!qualified || c == comp) {
			return true
		}
	}
	return false
}

// Truthy is seed 000's truth: everything but false, "", 0 and (unknown).
func Truthy(v string) bool {
	switch strings.TrimSpace(v) {
	case "", "false", "0", "(unknown)":
		return false
	}
	return true
}

// skippedByDesign says why the run will skip a component by design, as far
// as the plan knows ("" when it will not): a tuning condition is not true
// in the locked parameters, or an optional requirement is met neither at
// the start nor by any component of the stack (a capability printed at run
// time only can still meet it).
func (b *builder) skippedByDesign(cp *compPlan) string {
	if !cp.skipKnown {
		cp.skipWhy, cp.skipKnown = b.skipReason(cp), true
	}
	return cp.skipWhy
}

// maySkipByDesign tells whether the run may skip the component by design:
// the plan knows it will (skippedByDesign), or a tuning condition's value
// is the run's to tell (a link to an output not known yet).
func (b *builder) maySkipByDesign(cp *compPlan) bool {
	return b.skippedByDesign(cp) != "" || cp.skipMaybe
}

// tuning is the stack's TuningIndex, made once. Not safe for concurrent
// use: the passes that ask (skipReason, checkTemplates) run on one
// goroutine.
func (b *builder) tuning() Tuning {
	if b.tuningIdx == nil {
		// nil again only for a stack without tuning conditions: made
		// again at no cost.
		b.tuningIdx = TuningIndex(b.res.Stack)
	}
	return b.tuningIdx
}

// skipReason is skippedByDesign worked out.
func (b *builder) skipReason(cp *compPlan) string {
	if cp.c == nil || b.verb != plan.VerbDeploy || cp.info.ReadOnly || cp.info.Orphan {
		return ""
	}
	name := cp.info.Name
	if conds := b.tuning()[name]; b.in.Locked != nil && len(conds) > 0 {
		// A condition that is a link reads outputs of components it comes
		// after (graph.go): those the run leaves out keep the state's
		// outputs (plannedOutputs); one the run deploys, settled or not —
		// which is not known yet when hub.provides asks this — is the
		// run's to tell (pending), unless the run leaves it out and it
		// never deployed: then the value is never known, and the run
		// skips.
		why, pending := UnmetCondition(conds, b.in.Locked, b.plannedOutputs(), cp.c, cp.info.Depends)
		cp.skipMaybe = why != ""
		if why != "" && (pending == "" || b.outsideRun(pending)) {
			return why
		}
	}
	for _, req := range cp.c.Requires {
		// A cloud the environment leaves out is dropped, not unmet
		// (prepareLocated's DroppedRequires, which may not be made yet).
		if b.provides[req] || !IsOptionalRequirement(b.res.Stack, req, name) || CloudOmitted(b.f.Clouds, req) {
			continue
		}
		provided := containsName(b.res.Stack.Provides, req)
		for _, other := range b.res.Components {
			provided = provided || other.Meta.Name != name && containsName(other.Provides, req)
		}
		if !provided {
			return fmt.Sprintf("requires %s, which nothing provides (optional requirement; unless a component prints it at run time)", req)
		}
	}
	return ""
}

// UnmetCondition says why a tuning condition of component c (conds: its
// TuningIndex entry) keeps it from running (seed 000: its parameter is not
// set to a true value), "" when every condition holds. A link parameter is
// read as the component reads it, with the outputs known (outputs):
// pending names the component of one whose output is not known yet, which
// holds as (unknown), not true, at run time, and which a plan may not be
// able to tell — said only when no other condition is surely false.
func UnmetCondition(conds []string, locked *params.Locked, outputs *params.OutputIndex, c *manifest.Component, depends []string) (why, pending string) {
	var exp *params.Expanded
	// A condition surely not true is the answer whatever the others are:
	// one whose value is not known yet (pending) is said only when no
	// other is surely false.
	var pendingWhy string
	for _, cond := range conds {
		v := locked.Get(cond)
		if v == nil {
			return fmt.Sprintf("%s is not set to a true value", cond), ""
		}
		value := v.Value
		if v.Link {
			if exp == nil {
				exp, _ = params.ExpandComponent(params.ComponentInput{Locked: locked, Depends: depends, Outputs: outputs,
					Component: &manifest.Component{Meta: c.Meta}})
			}
			var err error
			value, _, err = exp.StackValue(cond)
			var pe *params.PendingError
			if errors.As(err, &pe) {
				if pending == "" {
					pendingWhy = fmt.Sprintf("%s has no value: it reads an output of %s, which has not been deployed", cond, pe.Component)
					pending = pe.Component
				}
				continue
			}
			if err != nil {
				return fmt.Sprintf("%s is not set to a true value: %v", cond, err), ""
			}
		}
		if !Truthy(value) {
			return fmt.Sprintf("%s is not set to a true value", cond), ""
		}
	}
	return pendingWhy, pending
}

// Tuning are the tuning conditions of a stack's components (TuningIndex).
type Tuning map[string][]string

// TuningIndex returns the parameters that gate each component: entries
// "parameter:comp" of lifecycle.requires.optional whose left side is a
// stack parameter rather than a capability, in their order. Made once per
// plan or run: a scan of the list for each component made stacks whose
// every component has one quadratic.
func TuningIndex(s *manifest.Stack) Tuning {
	if len(s.Lifecycle.Requires.Optional) == 0 {
		return nil
	}
	stackParams := make(map[string]bool, len(s.Parameters))
	for _, p := range s.Parameters {
		if p.Component == "" {
			stackParams[p.Name] = true
		}
	}
	t := Tuning{}
	for _, e := range s.Lifecycle.Requires.Optional {
		r, c, qualified := strings.Cut(e, ":")
		if qualified && r != "" && stackParams[r] {
			t[c] = append(t[c], r)
		}
	}
	return t
}

// checkTemplates reports, before anything runs, templates the deploy could
// not render (component.CheckTemplates). A folder not there yet (an
// installation handler's prepare or gantry pull brings it) is checked by
// the run.
func (b *builder) checkTemplates(cp *compPlan) {
	t := cp.c.Templates
	if t == nil || cp.info.Dir == "" {
		return
	}
	if fi, err := os.Stat(cp.info.Dir); err != nil || !fi.IsDir() {
		return
	}
	// The names of a component the run skips, or may skip, by design are
	// not read then: its templates are not rendered (a parameter its
	// condition brings may be what they read).
	var checkRef func(params.Part) string
	if !b.maySkipByDesign(cp) {
		known := b.knownNames(cp.c)
		if len(cp.info.Depends) > 0 {
			// The run looks a plain name up first among what each of its
			// depends printed, outputs they do not declare included (a
			// plugin's, a raw Outputs: line), which no manifest tells
			// before they run; templates rendered such names before the
			// plan checked them. (A parameter or a step must name a
			// declared one.)
			known = func(string) bool { return true }
		}
		checkRef = func(r params.Part) string {
			if msg := b.refProblem(r, "", cp.c, known); msg != "" {
				return msg
			}
			// As an output value's (checkOutputValues): a render reads it.
			if c := b.neverKnown(r, false); c != "" && r.Component != "" {
				return fmt.Sprintf("${%s:%s} %s", r.Component, r.Name, neverKnownWhy(c))
			}
			return ""
		}
	}
	if err := component.CheckTemplates(cp.info.Dir, t, checkRef); err != nil {
		for _, msg := range strings.Split(err.Error(), "\n") {
			b.diags.Errorf(t.Pos, "templates", "component %s: %s", cp.info.Name, msg)
		}
		return
	}
	// Templates declared of which none is there: a mistyped folder or
	// pattern renders nothing, as one the checkout lacks does (the Hub
	// goes on too), but it is said.
	if files, err := component.Declared(cp.info.Dir, t); err == nil && len(files) == 0 {
		b.diags.Warnf(t.Pos, "templates", "component %s: no template is there (%s): nothing will be rendered", cp.info.Name, component.TemplatesWhere(t))
	}
}

// checkParameters expands the component's parameters with the outputs known
// now, so that a mistake (an unknown name, a broken expression, an empty
// value) is reported before anything runs. Values that wait for outputs of
// components that run first are fine here; the run expands them again. One
// that waits for a component the run leaves out (-o, -c, -l), which was
// never deployed, is never known: the deploy would fail there, after the
// components before it ran.
func (b *builder) checkParameters(cp *compPlan) {
	if cp.evaluated != nil {
		return // evaluate found no errors
	}
	exp, ds := b.expand(cp, b.in.Locked, b.plannedOutputs(), b.hubProvidesFor(cp.info.Name))
	b.diags = append(b.diags, ds.Errors()...)
	if ds.HasErrors() {
		return
	}
	for _, v := range exp.Values {
		if b.outsideRun(v.Pending) {
			never := "which has not been deployed"
			if b.in.Before != nil {
				if rec := b.in.Before.Components[v.Pending]; rec != nil && rec.Status != "" && rec.Status != state.StatusUndeployed && rec.Status != state.StatusSkipped {
					never = "whose last run left it " + rec.Status + " (no outputs)"
				}
			}
			b.diags.Errorf(v.Pos, "", "component %s: parameter %s reads an output of %s, which this run leaves out and %s, so its value is never known; deploy %s first, or include it in this run",
				cp.info.Name, v.Name, v.Pending, never, v.Pending)
		}
	}
}

// tolerated says a step's failure lets the run go on (on_fail next, warn,
// info, pause): one that reads a value never known is no reason to refuse
// the run.
func tolerated(st *manifest.Step) bool {
	return st.Has(manifest.OnFailNext) || st.Has(manifest.OnFailWarn) || st.Has(manifest.OnFailInfo) || st.Has(manifest.OnFailPause)
}

// checkOutputValues refuses, before the component runs, what would fail its
// outputs after its verb ran (its work done, then the component failed):
// a value whose text or #{…} expression does not parse or compile, one
// reading an output of a component the stack does not have (or may not
// read, as a parameter may not), or an output of a component the run
// leaves out and that was never deployed. Plain names are not judged: a
// value may read any output the component prints, declared or not.
func (b *builder) checkOutputValues(cp *compPlan) {
	anyName := func(string) bool { return true }
	for _, o := range cp.c.Outputs {
		if !strings.Contains(o.Value, "${") && !strings.Contains(o.Value, "#{") {
			continue
		}
		tm, err := params.Parse(o.Value)
		if err == nil {
			err = tm.Check() // its expressions compile
		}
		if err != nil {
			b.diags.Errorf(o.Pos, "", "component %s: output %s: %v", cp.info.Name, o.Name, err)
			continue
		}
		for _, r := range tm.Refs() {
			// A plain name may be one the component prints itself; its
			// own outputs it reads by name. By its own name (${app:url})
			// it reads none, as the run refuses it (refProblem says so).
			if r.Component == "" {
				continue
			}
			if msg := b.refProblem(r, "", cp.c, anyName); msg != "" {
				b.diags.Errorf(o.Pos, "", "component %s: output %s: %s", cp.info.Name, o.Name, msg)
				continue
			}
			if c := b.neverKnown(r, false); c != "" {
				b.diags.Errorf(o.Pos, "", "component %s: output %s %s", cp.info.Name, o.Name, neverKnownWhy(c))
			}
		}
	}
}

// checkStackOutputs checks the values of the stack's outputs before anything
// runs: they are expanded when the deploy ends, and a mistake there cost
// the output, with a warning, after everything had run. A text or a #{…}
// expression that cannot parse or compile is an error; a name that is
// neither a parameter nor an output the stack's texts see is a warning, as
// the run says it (an output left without a value, as the Hub leaves one).
// The run's scope (params.StackSecretTracking) is narrower than a
// component's: no component's own parameters (hub.componentName, one
// qualified for a component) — and wider: any output a component prints,
// declared or not, which only the run knows.
func (b *builder) checkStackOutputs() {
	known := b.stackOutputNames()
	for i, o := range b.res.Stack.Outputs {
		if !strings.Contains(o.Value, "${") && !strings.Contains(o.Value, "#{") {
			continue
		}
		field := manifest.ItemPath("outputs", i) + ".value"
		tm, err := params.Parse(o.Value)
		if err == nil {
			err = tm.Check()
		}
		if err != nil {
			b.diags.Errorf(o.Pos, field, "stack output %s: %v", o.Name, err)
			continue
		}
		for _, r := range tm.Refs() {
			if r.Component == "" {
				if !b.res.Partial && !known[r.Name] {
					b.diags.Warnf(o.Pos, field, "stack output %s: %s", o.Name, b.unseenByStack(r.Name, known))
				}
				continue
			}
			if msg := b.refProblem(r, "", nil, nil); msg != "" {
				b.diags.Warnf(o.Pos, field, "stack output %s: %s: it will have no value", o.Name, msg)
			}
		}
	}
}

// stackOutputNames are the plain ${name}s a stack output's value reads
// that the run resolves whatever the components print: a parameter of the
// stack not qualified for a component (or read qualified, name|comp),
// hub.deploymentId, hub.stackName, and the outputs components declare.
func (b *builder) stackOutputNames() map[string]bool {
	names := map[string]bool{params.DeploymentID: true, params.StackName: true}
	for _, p := range b.res.Stack.Parameters {
		names[p.QName()] = true
	}
	for _, c := range b.res.Components {
		if c == nil {
			continue
		}
		for _, o := range c.Outputs {
			names[o.Name] = true
		}
	}
	return names
}

// unseenByStack says what a stack output reading ${name} gets when name is
// no parameter the stack's outputs see and no component declares it: a
// value only if a component prints it undeclared.
func (b *builder) unseenByStack(name string, known map[string]bool) string {
	why := ""
	if name == params.ComponentName || name == params.Provides {
		why = "a component's own parameter, which the stack's outputs do not see"
	}
	for _, p := range b.res.Stack.Parameters {
		if p.Name == name && p.Component != "" {
			why = fmt.Sprintf("a parameter given for component %s only (${%s} reads it)", p.Component, p.QName())
			break
		}
	}
	if why == "" {
		why = "no parameter of the stack and no output a component declares"
		if s := manifest.Suggest(name, slices.Sorted(maps.Keys(known))); s != "" {
			why += fmt.Sprintf(" (did you mean %q?)", s)
		}
	}
	return fmt.Sprintf("%q is %s: it has a value only if a component prints an output of that name without declaring it", name, why)
}

// neverKnownWhy says why a text reading an output of component c (what
// neverKnown found) can never have its value.
func neverKnownWhy(c string) string {
	return fmt.Sprintf("reads an output of %s, which this run leaves out and which has not been deployed, so its value is never known; deploy %s first, or include it in this run", c, c)
}

// neverKnown is the component whose output a reference reads when the run
// leaves it out and it was never deployed (its outputs are unknown): ""
// otherwise. A plain name is judged only when it is no parameter and every
// component declaring it as an output is such a one.
func (b *builder) neverKnown(r params.Part, stackLevel bool) string {
	unknown := func(c string) bool { return b.outsideRun(c) && !b.plannedOutputs().Known(c) }
	if r.Component != "" {
		if unknown(r.Component) {
			return r.Component
		}
		return ""
	}
	if b.declaredBy == nil {
		b.declaredBy, b.paramNames = map[string][]string{}, map[string]bool{}
		for _, p := range b.res.Stack.Parameters {
			b.paramNames[p.Name] = true
		}
		for _, c := range b.res.Components {
			if c == nil {
				continue
			}
			for _, o := range c.Outputs {
				b.declaredBy[o.Name] = append(b.declaredBy[o.Name], c.Meta.Name)
			}
			for _, p := range c.Parameters {
				b.paramNames[p.Name] = true
			}
		}
	}
	by := b.declaredBy[r.Name]
	if len(by) == 0 || b.paramNames[r.Name] {
		return ""
	}
	for _, c := range by {
		if !unknown(c) {
			return ""
		}
	}
	return by[0]
}

// readsLeftOut reports whether a value of exp waits for a component the
// run leaves out (checkParameters says why that fails).
func (b *builder) readsLeftOut(exp *params.Expanded) bool {
	for _, v := range exp.Values {
		if b.outsideRun(v.Pending) {
			return true
		}
	}
	return false
}

// expand expands the component's parameters as a plan sees them: in a
// partial stack, a name a component left out may declare waits (params.ComponentInput.LeftOut);
// exported values its processes could not be given are errors.
func (b *builder) expand(cp *compPlan, locked *params.Locked, outputs *params.OutputIndex, provides string) (*params.Expanded, manifest.Diagnostics) {
	exp, diags := params.ExpandComponent(params.ComponentInput{Locked: locked, Component: cp.c, Depends: cp.info.Depends,
		Outputs: outputs, Provides: provides, LeftOut: b.leftOut()})
	return exp, append(diags, exp.EnvProblems()...)
}

// leftOut are the components a partial stack left out, nil for a whole one.
func (b *builder) leftOut() map[string]bool {
	if !b.res.Partial {
		return nil
	}
	return b.res.LeftOut
}

// plannedOutputs is the outputs index as a plan sees it: outputs of
// components that will run are not known yet, whatever the state says.
func (b *builder) plannedOutputs() *params.OutputIndex {
	if b.planned == nil {
		b.planned = OutputsOutside(b.res, b.g, b.in.Before, func(name string) bool { return b.selectedSet[name] })
	}
	return b.planned
}

// knownNames tells whether a ${name} in a component's steps can resolve: a
// parameter of the component or the stack, an output some component declares,
// or an implicit parameter. In a partial stack (validate past broken
// manifests) every name can: a component left out may declare it.
func (b *builder) knownNames(c *manifest.Component) func(string) bool {
	if b.res.Partial {
		return func(string) bool { return true }
	}
	if b.stackNames == nil {
		b.stackNames = StackNames(b.res)
	}
	return KnownNames(b.stackNames, c)
}

// Names are the names a component of a stack can refer to without naming
// a component (StackNames).
type Names struct {
	fixed map[string]bool // the stack's parameters and the implicit ones
	// outputs are, by plain output name, the kind (meta.kind) of the
	// components declaring it: one kind, or more (the first and a mark;
	// any component sees one of them then).
	outputs map[string]declaredBy
}

// declaredBy are the kinds of the components declaring an output.
type declaredBy struct {
	kind  string // the first one's
	kinds bool   // components of more than one kind declare it
}

// StackNames are the names every component of a stack can refer to
// without a component: the stack's parameters (a qualified one also as
// name|component, which reads it wherever it is), the implicit
// parameters, and the outputs its components declare — each seen only by
// components of another kind (KnownNames).
func StackNames(res *elaborate.Result) *Names {
	n := &Names{fixed: map[string]bool{"hub.deploymentId": true, "hub.stackName": true, "hub.componentName": true, "hub.provides": true},
		outputs: map[string]declaredBy{}}
	for _, p := range res.Stack.Parameters {
		n.fixed[p.Name] = true
		n.fixed[p.QName()] = true
	}
	for _, other := range res.Components {
		if other == nil {
			continue
		}
		for _, o := range other.Outputs {
			d, ok := n.outputs[o.Name]
			switch {
			case !ok:
				n.outputs[o.Name] = declaredBy{kind: other.Meta.Kind}
			case d.kind != other.Meta.Kind && !d.kinds:
				n.outputs[o.Name] = declaredBy{kind: d.kind, kinds: true}
			}
		}
	}
	return n
}

// output tells whether a plain output name resolves for a component of
// kind: some component of another kind declares it. As the run's lookup
// (params.OutputIndex), a component does not see its own outputs by
// plain name, nor those of the components of its kind; kind "" (a
// stack-level text) sees them all.
func (n *Names) output(name, kind string) bool {
	d, ok := n.outputs[name]
	return ok && (kind == "" || d.kinds || d.kind != kind)
}

// OwnKindOnly tells whether name is an output that only components of kind
// declare: what a component of that kind reading it by plain name never
// sees.
func (n *Names) OwnKindOnly(name, kind string) bool {
	_, declared := n.outputs[name]
	return kind != "" && declared && !n.output(name, kind)
}

// Suggest is the name of the stack a mistaken name of a component of kind
// may mean ("" for none): a parameter of the stack, an output that
// component sees, or one of extra (the component's own parameters).
func (n *Names) Suggest(name, kind string, extra ...string) string {
	candidates := make([]string, 0, len(n.fixed)+len(n.outputs)+len(extra))
	candidates = append(candidates, extra...)
	for c := range n.fixed {
		candidates = append(candidates, c)
	}
	for o := range n.outputs {
		if n.output(o, kind) {
			candidates = append(candidates, o)
		}
	}
	slices.Sort(candidates) // the same suggestion among equally near ones
	return manifest.Suggest(name, candidates)
}

// KnownNames tells whether a ${name} in component c's inputs can resolve:
// one of the stack's names (StackNames) c sees, or a parameter of c. A nil
// c is the stack's own text (its post-flight steps), which sees every
// output.
func KnownNames(names *Names, c *manifest.Component) func(string) bool {
	var own map[string]bool
	kind := ""
	if c != nil {
		own = make(map[string]bool, len(c.Parameters))
		for _, p := range c.Parameters {
			own[p.Name] = true
		}
		kind = c.Meta.Kind
	}
	return func(n string) bool { return names.fixed[n] || own[n] || names.output(n, kind) }
}

// UnknownName says why ${name} in a text of component c (nil: the
// stack's; at where: " in <text>", or "") cannot resolve, known judging
// whether it can: "" when it can. It names the rule a component's own
// outputs fall under, or the name a mistaken one may mean (of the stack,
// or a parameter of c); names may be nil (no such hints).
func UnknownName(names *Names, known func(string) bool, name, where string, c *manifest.Component) string {
	kind := metaKind(c)
	switch {
	case known(name):
		return ""
	case names != nil && names.OwnKindOnly(name, kind):
		return fmt.Sprintf("unknown parameter %q%s: a component does not see its own outputs, nor those of other components of its kind (meta.kind %s)", name, where, kind)
	}
	msg := fmt.Sprintf("unknown parameter %q%s", name, where)
	if names != nil {
		var own []string
		if c != nil {
			for _, p := range c.Parameters {
				own = append(own, p.Name)
			}
		}
		if s := names.Suggest(name, kind, own...); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		}
	}
	return msg
}

// validateStep checks an injected step before anything runs: plugins and
// actions exist, scripts are found, and ${...} references and {{.variables}}
// are known.
//
// c is the component the step belongs to, nil for a stack-level step: a
// component does not see the outputs of components of its kind, its own
// among them.
func (b *builder) validateStep(st *manifest.Step, dir string, c *manifest.Component, field string, vars map[string]any, known func(string) bool) {
	stackLevel := c == nil
	var texts []string
	switch st.Type {
	case manifest.StepExec:
		texts = append(texts, st.Args...)
		script := st.Args[0]
		if !strings.Contains(script, "{{") && !strings.Contains(script, "${") {
			exists, ok := b.f.Scripts[ScriptKey{dir, script}]
			switch {
			case !ok:
				b.diags.Errorf(st.Pos, field, "%s", missing("whether %s exists in %s", script, dir))
			case !exists:
				b.diags.Errorf(st.Pos, field, "exec: %s is neither in %s nor on PATH", script, dir)
			}
		}
	case manifest.StepGate:
		texts = append(texts, st.Message)
	case manifest.StepCall, manifest.StepProbe:
		for _, v := range st.Params {
			if s, ok := v.(string); ok {
				texts = append(texts, s)
			}
		}
		if st.Type == manifest.StepCall && st.Plugin == "" {
			if stackLevel {
				b.diags.Errorf(st.Pos, field, "call: a stack-level call needs a plugin (built-in: %s)", strings.Join(plugin.Names(), ", "))
			} else if _, err := b.f.implementation(dir, st.Action); err != nil {
				b.diags.Errorf(st.Pos, field, "call %s: the component has no implementation of this action: %v", st.Action, err)
			}
			break
		}
		if err := plugin.ValidateCall(st.Plugin, st.Action, placeholderArgs(st.Params)); err != nil {
			b.diags.Errorf(st.Pos, field, "%s: %v", st.Type, err)
		}
	}
	for _, t := range texts {
		tm, err := params.Parse(t)
		if err == nil {
			err = tm.Check() // its expressions compile
		}
		if err != nil {
			b.diags.Errorf(st.Pos, field, "%v", err)
			continue
		}
		leftOut := leftOutRefused
		if tolerated(st) {
			leftOut = leftOutTolerated
		}
		b.checkRefs(st.Pos, field, t, tm.Refs(), c, leftOut, known)
		// Check the special variables with ${...} replaced by placeholders.
		var sb strings.Builder
		for _, p := range tm.Parts {
			if p.Kind == params.Literal {
				sb.WriteString(p.Text)
			} else {
				sb.WriteString("x")
			}
		}
		if b.res.Partial && strings.Contains(t, "Model") {
			// The model of a partial stack lacks the components left
			// out: .Model.Components.<one of them> cannot be judged.
			continue
		}
		if _, err := stepvars.Apply(sb.String(), vars); err != nil {
			b.diags.Errorf(st.Pos, field, "%v", err)
		}
	}
}

// What checkRefs makes of a text reading an output of a component the run
// leaves out and that was never deployed.
const (
	leftOutRefused   = iota // an error
	leftOutTolerated        // nothing: the step's on_fail lets it fail
	leftOutWarned           // a warning: a ready condition, which has no on_fail, in a first deploy in stages
)

// checkRefs checks the ${...} references of t, a text a step or a ready
// condition expands when it runs: the parameters are known, the components
// whose outputs it reads exist (in the stack, or recorded in the state) and
// are not of its own kind, and those outputs can be known by then (leftOut
// says what it is when not).
func (b *builder) checkRefs(pos manifest.Pos, field, t string, refs []params.Part, c *manifest.Component, leftOut int, known func(string) bool) {
	stackLevel := c == nil
	for _, r := range refs {
		if msg := b.refProblem(r, fmt.Sprintf(" in %q", t), c, known); msg != "" {
			b.diags.Errorf(pos, field, "%s", msg)
			continue
		}
		c := b.neverKnown(r, stackLevel)
		switch {
		case c == "" || b.undeploy:
		case leftOut == leftOutRefused:
			b.diags.Errorf(pos, field, "%q %s", t, neverKnownWhy(c))
		case leftOut == leftOutWarned:
			b.diags.Warnf(pos, field, "%q reads an output of %s, which this run leaves out and which has not been deployed: the condition will fail (for the stack's, lifecycle.post_flight.skip_standard_steps: true leaves them out)", t, c)
		}
	}
}

// refProblem says why a reference of component c (nil: the stack's;
// known: the names it sees) can never resolve, "" when it can (RefProblem).
func (b *builder) refProblem(r params.Part, where string, c *manifest.Component, known func(string) bool) string {
	return RefProblem(b.stackNames, Components{b.res, b.in.Before}, r, where, c, known)
}

// checkReadyConditions checks the stack's ready conditions before anything
// runs, as the steps': their ${...} are expanded after every component has
// deployed, and a typo failed the stack then.
func (b *builder) checkReadyConditions(conds []manifest.ReadyCondition) {
	b.checkConditions(conds, "lifecycle.readyConditions", nil, b.knownNames(nil))
}

// checkConditions checks ready conditions, component comp's or the
// stack's (nil comp). A component's see its own outputs, as the Hub's do:
// they are checked once it has deployed, to wait for what it made
// (ownOutputs, in package steps).
func (b *builder) checkConditions(conds []manifest.ReadyCondition, path string, comp *manifest.Component, known func(string) bool) {
	own := map[string]bool{}
	if comp != nil {
		for _, o := range comp.Outputs {
			own[o.Name] = true
		}
	}
	for i, c := range conds {
		for _, f := range []struct{ name, text string }{{"dns", c.DNS}, {"url", c.URL}} {
			if f.text == "" {
				continue
			}
			field := fmt.Sprintf("%s[%d].%s", path, i, f.name)
			tm, err := params.Parse(f.text)
			if err == nil {
				err = tm.Check()
			}
			if err != nil {
				b.diags.Errorf(c.Pos, field, "%v", err)
				continue
			}
			refs := tm.Refs()
			if len(own) > 0 {
				refs = slices.DeleteFunc(slices.Clone(refs), func(r params.Part) bool {
					return own[r.Name] && (r.Component == "" || r.Component == comp.Meta.Name)
				})
			}
			b.checkRefs(c.Pos, field, f.text, refs, comp, leftOutWarned, known)
		}
	}
}

// placeholderArgs stands in for arguments that are only known at run time.
func placeholderArgs(args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		if s, ok := v.(string); ok && (strings.Contains(s, "${") || strings.Contains(s, "#{") || strings.Contains(s, "{{")) {
			out[k] = placeholderFor(k)
			continue
		}
		out[k] = v
	}
	return out
}

func placeholderFor(key string) string {
	switch key {
	case "address":
		return "localhost:1"
	case "url":
		return "http://localhost/"
	case "interval":
		return "1"
	}
	return "placeholder"
}
