package plan

import "time"

// Spec is what a step does, as data: the plan saved with a run holds it, so
// that the plan describes exactly what runs, and two plans can be compared.
// The executor finds the step's runner by the spec's type.
type Spec interface {
	// Kind is the kind of step the spec makes.
	Kind() Kind
}

// Component is what the steps of one component share, fixed when the plan
// is built.
type Component struct {
	Name string `json:"name"`
	Verb string `json:"verb"`
	// Action and Reason predict what the run does to the component.
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`
	// Change says how a deploy finds the component against its last deploy:
	// new, unchanged, or changed and what changed.
	Change *Change `json:"change,omitempty"`
	// FingerprintExclude are globs of files of its folder left out of its
	// fingerprint (lifecycle.fingerprint.exclude).
	FingerprintExclude []string `json:"fingerprintExclude,omitempty"`
	// FingerprintReads are the files outside its folder that planning its
	// plugins read (a kustomization's bases), by their path from the
	// folder with symlinks resolved: part of its fingerprint as the
	// folder's files are.
	FingerprintReads []string `json:"fingerprintReads,omitempty"`
	// EntryLifecycle is a digest of the lifecycle the stack's entry of the
	// component sets (its fields replace the manifest's), part of a
	// deploy's fingerprint as the manifest's file is; empty without one.
	EntryLifecycle string `json:"entryLifecycle,omitempty"`
	// Dir is the component's folder, absolute.
	Dir string `json:"dir"`
	// After are the components it runs after, in deploy order: their
	// outputs are part of its fingerprint.
	After []string `json:"after,omitempty"`
	// Depends is the manifest's depends list, in its order: dep:name lookups
	// follow it.
	Depends []string `json:"depends,omitempty"`
	// Links say why the component runs after components of After, keyed by
	// their names: a depends, a requirement another provides, an output it
	// reads. A component of After that is only in Depends needs no entry
	// (its link is the depends).
	Links map[string][]Link `json:"links,omitempty"`
	// Order is the component's position in the deploy order.
	Order int `json:"order"`
	// Up names the nested stack that governs the component, a leaf of a
	// nested stack's solution ("web", "web.edge"; DESIGN 2.7); empty for a
	// component of the top stack. Displays group components by it.
	Up string `json:"up,omitempty"`
	// FromState is set for a component the stack no longer lists: only the
	// state knows it.
	FromState bool `json:"fromState,omitempty"`
	// Orphan is set when the plan tears it down because the stack no longer
	// lists it.
	Orphan bool `json:"orphan,omitempty"`
	// ReadOnly runs leave the state alone (custom verbs of gantry invoke).
	ReadOnly bool `json:"readOnly,omitempty"`
	// Resume skips the component when it is deployed and unchanged.
	Resume bool `json:"resume,omitempty"`
	// ForceReplace redeploys even when --resume finds it unchanged.
	ForceReplace bool `json:"forceReplace,omitempty"`
	// Settled is set when the plan knows that --resume finds the component
	// unchanged: it is deployed with the fingerprint it has now, and what
	// that fingerprint reads cannot change before it begins — every
	// component of After is settled too or does not run, and no value reads
	// hub.provides. Its begin skips it without computing the fingerprint
	// again.
	Settled bool `json:"settled,omitempty"`
	// SkippedByDesign is set when the plan knows the run skips the
	// component by design (a tuning condition not true, an optional
	// requirement nothing meets): what it provides counts for no
	// component's hub.provides (build.HubProvides), in the plan as in the
	// run, whichever finishes first.
	SkippedByDesign bool `json:"-"`
	// Idempotent components may run again after a crash midway: on
	// Temporal workers, one whose worker died starts over elsewhere
	// (lifecycle.idempotent).
	Idempotent bool `json:"idempotent,omitempty"`
	// Implementation is the command of a script or Makefile implementation.
	Implementation []string `json:"implementation,omitempty"`
	// Plugins is set for a component made of plugin lists (sow); Lists says
	// where they come from: ListsManifest, ListsRecorded (an undeploy deletes
	// what was deployed) ListsTerraform (a folder of *.tf files) or ListsKubernetes (a
	// kustomization).
	Plugins bool   `json:"plugins,omitempty"`
	Lists   string `json:"lists,omitempty"`
	// ProductDir holds the SPEC-VERSION of the component's stack;
	// SpecVersion is its value, DeployedVersion the one the state recorded.
	ProductDir      string `json:"productDir,omitempty"`
	SpecVersion     string `json:"specVersion,omitempty"`
	DeployedVersion string `json:"deployedVersion,omitempty"`
	// Templates is the template chain, the component's folder first: where
	// lookupfile looks.
	Templates []string `json:"templates,omitempty"`
	// DroppedRequires are requirements of clouds the environment does not
	// enable, dropped as the Hub CLI drops them.
	DroppedRequires []string `json:"droppedRequires,omitempty"`
}

// Where a component's plugin lists come from.
const (
	ListsManifest  = "manifest"
	ListsRecorded  = "recorded"
	ListsTerraform = "terraform"
	// ListsKubernetes is the list of a folder holding a kustomization.
	ListsKubernetes = "kubernetes"
	// ListsHelm is the list of a folder holding a chart, or a values file
	// for one (the Hub's chart components).
	ListsHelm = "helm"
)

// Begin prepares a component for its verb. A deploy checks the requirements,
// expands the parameters and decides whether the component runs (--resume);
// an undeploy and a custom verb take what the state recorded.
type Begin struct {
	Component string `json:"component"`
}

// Kind is KindBegin.
func (Begin) Kind() Kind { return KindBegin }

// Verb carries out a component's verb with its implementation (a script, a
// Makefile target; a bare component only resolves its outputs). For a
// component made of plugin lists it prepares them instead: expands and
// records them, renders the templates and writes the deployment file; the
// entries are steps of their own.
type Verb struct {
	Component string `json:"component"`
	Verb      string `json:"verb"`
	// Limits are the verb's timeout and retries (lifecycle.timeout,
	// lifecycle.retries).
	Limits *Limits `json:"limits,omitempty"`
}

// Kind is KindComponent.
func (Verb) Kind() Kind { return KindComponent }

// Unchanged settles a component that --resume finds unchanged as the plan
// predicted (Component.Settled): the one step of its plan, in place of its
// begin, verb and end.
type Unchanged struct {
	Component string `json:"component"`
	Verb      string `json:"verb"`
}

// Kind is KindComponent: displays show it as the component's verb.
func (Unchanged) Kind() Kind { return KindComponent }

// Plugin lists an entry can come from.
const (
	ListPlugins  = "plugins"
	ListSetup    = "setupPlugins"
	ListVanished = "vanished"
)

// SourceBuiltin is the Source of an entry whose plugin is built into gantry.
const SourceBuiltin = "built-in"

// Entry is one entry of a component's plugin list carried out for an
// action: a plugin instance, or one of the built-in gate, delay, http and
// tcp, which run as the steps of those kinds do.
type Entry struct {
	Component string `json:"component"`
	// Action is deploy, delete, prepare or cleanup.
	Action string `json:"action"`
	// List and Index locate the entry: in the component's plugins,
	// setupPlugins, or the instances that vanished from them; the index
	// descends into pinned, unpinned and parallel.
	List  string `json:"list"`
	Index []int  `json:"index"`
	// Plugin, Key and Args are as the list gives them (Args expanded when
	// the step runs).
	Plugin string   `json:"plugin"`
	Key    string   `json:"key,omitempty"`
	Args   []string `json:"args,omitempty"`
	// Source is SourceBuiltin or the path of the executable plugin.
	Source string `json:"source"`
	// OnFail is the entry's on_fail list (seed 001).
	OnFail []string `json:"onFail,omitempty"`
	// Stage is set for one stage of a staged plugin's action (the
	// kubernetes plugin's CRDs, hooks and weight groups): the entry runs as
	// one step per stage, and Stage names the one this step carries out.
	// Objects are what the stage works on, as the plan was built.
	Stage   string   `json:"stage,omitempty"`
	Objects []string `json:"objects,omitempty"`
	// Stages are the ids of all the action's stages, on its first stage's
	// entry: what it prepares must fit into them.
	Stages []string `json:"stages,omitempty"`
	// Limits are the component's timeout and retries, applied to each
	// entry that runs a plugin (not to gates, delays, waits or stages).
	Limits *Limits `json:"limits,omitempty"`
}

// Kind is the kind the entry runs as.
func (e Entry) Kind() Kind {
	if e.Stage != "" {
		return KindStage
	}
	if e.Source == SourceBuiltin {
		switch e.Plugin {
		case "gate":
			return KindGate
		case "delay":
			return KindDelay
		case "http", "tcp":
			return KindProbe
		}
	}
	return KindPlugin
}

// Record ends a component's plugin lists. After a deploy, the outputs the
// plugins printed or reported become the component's, and the state
// records them with the lists; after an undeploy the state forgets the lists
// and the instances' state folders go.
type Record struct {
	Component string `json:"component"`
	Verb      string `json:"verb"`
}

// Kind is KindRecord.
func (Record) Kind() Kind { return KindRecord }

// End settles a component: it reads how the component's steps ended and
// records it deployed, undeployed, failed or skipped, and passes the outcome
// on to the components that wait for it.
type End struct {
	Component string `json:"component"`
}

// Kind is KindEnd.
func (End) Kind() Kind { return KindEnd }

// Step is an injected lifecycle step as the manifest gave it (seed 001).
type Step struct {
	Type      string         `json:"type"`
	Label     string         `json:"label,omitempty"`
	OnFail    []string       `json:"onFail,omitempty"`
	Args      []string       `json:"args,omitempty"`      // exec: the command and its arguments
	Plugin    string         `json:"plugin,omitempty"`    // call, probe
	Action    string         `json:"action,omitempty"`    // call, probe
	Arguments map[string]any `json:"arguments,omitempty"` // call, probe
	Message   string         `json:"message,omitempty"`   // gate
	Seconds   float64        `json:"seconds,omitempty"`   // delay: duration; probe: timeout
	Logfile   string         `json:"logfile,omitempty"`   // probe
	Limits    *Limits        `json:"limits,omitempty"`    // exec, call: timeout and retries
}

// Injected is a lifecycle step injected at a point of a component's plan, or
// into a flight group of the stack (Component ""). Ready conditions are
// probes injected at the point "ready".
type Injected struct {
	Component string `json:"component,omitempty"`
	Point     string `json:"point"`
	Step      Step   `json:"step"`
	// Dir is where exec steps and calls of the core plugin run.
	Dir string `json:"dir"`
}

// Kind is the step's type.
func (i Injected) Kind() Kind { return Kind(i.Step.Type) }

// ReadyCondition is a condition a Ready step waits for: a URL that answers
// 2xx or 3xx, or a name that resolves.
type ReadyCondition struct {
	URL string `json:"url,omitempty"`
	DNS string `json:"dns,omitempty"`
	// Wait is how long to wait in all, Pause how long between attempts, in
	// seconds (0: the defaults).
	Wait  int `json:"wait,omitempty"`
	Pause int `json:"pause,omitempty"`
}

// Ready waits until every ready condition holds, one after the other: a
// component's right after its verb, the stack's in the post-flight group.
type Ready struct {
	Component  string           `json:"component,omitempty"`
	Conditions []ReadyCondition `json:"conditions"`
}

// Kind is KindReady.
func (Ready) Kind() Kind { return KindReady }

// Tools checks, before anything changes, that tools the implementations need
// are on PATH.
type Tools struct {
	Tools []string `json:"tools"`
}

// Kind is KindStandard.
func (Tools) Kind() Kind { return KindStandard }

// Clean removes the generated files (.gantry/gen) of the components that
// an undeploy left undeployed.
type Clean struct {
	Components []string `json:"components"`
}

// Kind is KindStandard.
func (Clean) Kind() Kind { return KindStandard }

// Handler calls the stack's installation handler (sow's
// meta.installationHandler): "prepare" before anything else of the command,
// "finalize" after all of it.
type Handler struct {
	Action string `json:"action"`
	// Name is the path as the manifest wrote it; Path the executable found.
	Name   string `json:"name"`
	Path   string `json:"path"`
	Dir    string `json:"dir"`
	Config string `json:"config"` // JSON, the second argument
}

// Kind is KindHandler.
func (Handler) Kind() Kind { return KindHandler }

// Process is a process group a killed run left running.
type Process struct {
	PID     int    `json:"pid"`
	Command string `json:"command"`
	Dir     string `json:"dir"`
	// Boot and Started identify the process: the machine's boot and when it
	// started, as time since boot (a pid reused later is not it).
	Boot    string        `json:"boot,omitempty"`
	Started time.Duration `json:"started,omitempty"`
}

// Leftovers waits until the process groups a killed run left running have
// ended, so that the same work never runs twice at once.
type Leftovers struct {
	Run       string    `json:"run,omitempty"`
	Processes []Process `json:"processes"`
}

// Kind is KindWait.
func (Leftovers) Kind() Kind { return KindWait }

// Setup records in the state that the run started: the stack's status, the
// run, and for a deploy the locked parameters; and writes the elaborated
// manifest the components read (GANTRY_ELABORATE) when Elaborate names it.
// Nothing of a run that fails before it (invalid input, the installation
// handler's prepare) is written.
type Setup struct {
	Elaborate string `json:"elaborate,omitempty"`
}

// Kind is KindSetup.
func (Setup) Kind() Kind { return KindSetup }

// Finalize records how the run left the stack: its status, what its
// components provide, and for a deploy the stack's outputs.
type Finalize struct{}

// Kind is KindFinalize.
func (Finalize) Kind() Kind { return KindFinalize }
