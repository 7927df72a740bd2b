// Package build builds plans from an elaborated stack, its state and the
// facts the resolve phase gathered: the component graph and order, and deploy,
// teardown and custom-verb plans with their lifecycle steps, plugin lists,
// flight groups and the steps that set a run up and finalise it. Building is
// a pipeline of small passes (select, run start, flights, components,
// orphans, edges, run end, validate), each a pure function of the input: it
// reads no file and looks nothing up on PATH.
package build

import (
	"path/filepath"
	"slices"

	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/stepvars"
	"github.com/gantry-dev/gantry/internal/state"
)

// Selection narrows a run to some components (DESIGN 4.7).
type Selection struct {
	Components []string // -c a,b
	WithDeps   bool     // -a: add dependencies (deploy) or dependents (undeploy)
	Offset     string   // -o: start at this component
	Limit      string   // -l: stop after this component
}

// Narrows reports whether the selection leaves components out.
func (s Selection) Narrows() bool {
	return len(s.Components) > 0 || s.Offset != "" || s.Limit != ""
}

// Options say what plan to build.
type Options struct {
	// Verb is deploy, undeploy, or the custom verb of Invoke.
	Verb      string
	Selection Selection
	Resume    bool
	// Force lets a spec version jump more than one step.
	Force bool
	// Invoke names the component a custom verb runs on (gantry invoke).
	Invoke string
	// Run makes the plan one a run executes, not only one that is shown: its
	// steps record the run in the state.
	Run bool
	// WriteElaborate names the elaborated file the run writes for its
	// processes ("" for none).
	WriteElaborate string
	// EnvironmentLater says the environment's capabilities are checked when
	// the components need them, not now: an installation handler's prepare
	// may put their tools on PATH.
	EnvironmentLater bool
}

// Input is everything a plan is built from.
type Input struct {
	Res    *elaborate.Result
	Graph  *Graph
	Before *state.State // nil before the first run
	Locked *params.Locked
	Facts  *Facts
	// StateDir is the folder of the state file: folders the state records
	// are relative to it.
	StateDir string
	// StateFiles are the run's state files, absolute: left out of the
	// fingerprint of a component whose folder holds them
	// (FingerprintExclude).
	StateFiles []string
	// Mask hides secrets in step labels and specs: recorded plugin arguments
	// are expanded values.
	Mask    func(string) string
	Options Options
}

// builder is the state of one build, shared by the passes.
type builder struct {
	lastProduct [2]string // productDirOf's last folder, and made absolute
	in          *Input
	f           *Facts
	res         *elaborate.Result
	g           *Graph
	p           *plan.Plan
	diags       manifest.Diagnostics
	opts        Options
	verb        string

	undeploy bool
	// selected are the components the verb runs on, in run order.
	selected    []string
	selectedSet map[string]bool
	// orphans are components in the state the stack no longer lists;
	// teardown says this plan tears them down (before or after the others).
	orphans  []string
	teardown string

	comps       []*compPlan // the selected components' plans, in run order
	located     []*compPlan // the selected components, located (componentsPass)
	orphanPlans []*compPlan // the orphans' plans, in teardown order
	byName      map[string]*compPlan

	// setup is the step that records the run's start ("" without one);
	// first and last steps of the flight groups before and after the
	// components.
	setup         string
	preFlightLast string

	refs map[string]int
	// claims are the components that claim something (StagesFact.Claim),
	// by what they claim.
	claims     map[string]claimed
	stackNames *Names
	// tuningIdx is the stack's TuningIndex, once made (tuning).
	tuningIdx Tuning
	// declaredBy are the components that declare each output name
	// (neverKnown), and paramNames the names of the stack's and the
	// components' parameters, made once.
	declaredBy map[string][]string
	paramNames map[string]bool
	model      map[string]any
	provides   map[string]bool
	// hubBase is what every component's hub.provides starts from, and hub
	// the rule that gives it (hubProvidesFor).
	hubBase []string
	hub     *HubProvides
	planned *params.OutputIndex
	outputs *params.OutputIndex
	// flightsChecked are the flight groups whose steps were checked
	// (checkFlight).
	flightsChecked map[string]bool
}

// Build builds the plan of a deploy, an undeploy or a custom verb (DESIGN
// section 5). Problems of the input come back as diagnostics, all together;
// a plan comes back only without errors.
func Build(in *Input) (*plan.Plan, manifest.Diagnostics) {
	b := newBuilder(in)
	passes := []func(){b.selectPass, b.runStartPass, b.preFlightPass, b.componentsPass, b.sharedFoldersPass, b.edgesPass, b.postFlightPass, b.runEndPass, b.validatePass}
	if in.Options.Invoke != "" {
		passes = []func(){b.invokePass, b.runStartPass, b.componentsPass, b.sharedFoldersPass, b.runEndPass, b.validatePass}
	}
	for i, pass := range passes {
		pass()
		if b.diags.HasErrors() {
			if in.Options.Invoke == "" && i > 0 {
				// Its checks need nothing of the passes before but the
				// selection (what the run leaves out).
				b.checkPostFlight()
			}
			return nil, b.diags
		}
	}
	return b.p, b.diags
}

func newBuilder(in *Input) *builder {
	opts := in.Options
	if opts.Verb == "" {
		opts.Verb = plan.VerbDeploy
	}
	if in.Mask == nil {
		in.Mask = func(s string) string { return s }
	}
	b := &builder{
		in: in, f: in.Facts, res: in.Res, g: in.Graph, opts: opts, verb: opts.Verb,
		undeploy:       opts.Verb == plan.VerbUndeploy,
		p:              plan.New(in.Res.Stack.Meta.Name, opts.Verb),
		byName:         map[string]*compPlan{},
		provides:       map[string]bool{},
		flightsChecked: map[string]bool{},
	}
	var env []string
	for _, c := range RequiredEnvironment(in.Res) {
		if opts.EnvironmentLater || in.Facts.Environment[c] {
			env = append(env, c)
		}
	}
	for _, c := range SatisfiedAtStart(in.Res, in.Before, env) {
		b.provides[c] = true
	}
	b.hubBase = InitialProvides(in.Res, nil, env)
	b.outputs = NewOutputIndex(in.Res, in.Graph, in.Before)
	return b
}

// connect adds an edge the builder made; one the plan refuses is a bug of
// the builder, reported as an internal error rather than a hang.
func (b *builder) connect(from, to string, kind plan.EdgeKind) {
	if err := b.p.Connect(from, to, kind); err != nil {
		b.diags.Errorf(manifest.Pos{}, "", "internal error: %v", err)
	}
}

// stackDir is where stack-level steps run: the stack manifest's folder.
func (b *builder) stackDir() string { return b.f.Abs(b.stackFolder()) }

// stackFolder is stackDir as the stack gives it, maybe relative.
func (b *builder) stackFolder() string {
	if b.res.Dir != "" {
		return b.res.Dir
	}
	return filepath.Dir(b.res.Stack.File)
}

// stackRef returns the stack's entry for a component, nil for one the
// stack does not list.
func (b *builder) stackRef(name string) *manifest.ComponentRef {
	if b.refs == nil {
		b.refs = make(map[string]int, len(b.res.Stack.Components))
		for i := range b.res.Stack.Components {
			if _, dup := b.refs[b.res.Stack.Components[i].Name]; !dup {
				b.refs[b.res.Stack.Components[i].Name] = i
			}
		}
	}
	if i, ok := b.refs[name]; ok {
		return &b.res.Stack.Components[i]
	}
	return nil
}

// stepModel is what the variables of injected steps share, made when the
// first component with injected steps needs it (most have none: it cost a
// plan of 10,000 components 16 ms).
func (b *builder) stepModel() map[string]any {
	if b.model == nil {
		b.model = stepvars.Model(b.res, b.in.Locked)
	}
	return b.model
}

// hubProvidesFor is hub.provides of a component as the run will give it
// (HubProvides): what the components before it in deploy order provide.
// Not safe for concurrent use: evaluate asks for all first.
func (b *builder) hubProvidesFor(name string) string {
	if b.hub == nil {
		b.hub = NewHubProvides(b.res, b.g.Order, b.in.Before, b.hubBase, b.p.SomeComponents, func(n string) bool {
			return b.verb == plan.VerbDeploy && b.selectedSet[n]
		})
		// What the run will skip provides nothing, as the run will say.
		for _, cp := range b.located {
			if b.skippedByDesign(cp) != "" {
				cp.info.SkippedByDesign = true
				b.hub.Provided(cp.info.Name, nil)
			}
		}
	}
	return b.hub.For(name)
}

// validatePass checks what the executor relies on.
func (b *builder) validatePass() {
	if err := b.p.Validate(); err != nil {
		b.diags.Errorf(manifest.Pos{}, "", "internal error: %v", err)
	}
}

// IsMandatory applies seed 000: every component is mandatory unless listed in
// lifecycle.optional; when lifecycle.mandatory is given, everything else is
// optional.
func IsMandatory(s *manifest.Stack, comp string) bool {
	if len(s.Lifecycle.Mandatory) > 0 {
		return slices.Contains(s.Lifecycle.Mandatory, comp)
	}
	return !slices.Contains(s.Lifecycle.Optional, comp)
}

func containsName(list []string, s string) bool { return slices.Contains(list, s) }

func reversed(l []string) []string {
	out := slices.Clone(l)
	slices.Reverse(out)
	return out
}

func appendNew(l []string, s string) []string {
	if slices.Contains(l, s) {
		return l
	}
	return append(l, s)
}
