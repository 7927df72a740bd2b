package manifest

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// Stack is a manifest of kind: stack (hub.yaml), Hub v1 format with gantry's
// extensions.
type Stack struct {
	Pos     Pos    `yaml:"-"`
	File    string `yaml:"-"` // path the stack was loaded from
	Version int    `yaml:"version"`
	Kind    string `yaml:"kind"`
	// Meta is required of the stack deployed (its name is hub.stackName
	// and the state's), not of a nested stack or a base (elaborate).
	Meta       Meta           `yaml:"meta"`
	Components []ComponentRef `yaml:"components,omitempty"`
	Requires   []string       `yaml:"requires,omitempty"`
	Provides   []string       `yaml:"provides,omitempty"`
	Lifecycle  StackLifecycle `yaml:"lifecycle,omitempty"`
	Parameters []Parameter    `yaml:"parameters,omitempty"`
	Outputs    []Output       `yaml:"outputs,omitempty"`
	// Platform is what a platform stack provides to the stacks deployed on
	// it (the Hub's platform.provides).
	Platform *Platform `yaml:"platform,omitempty"`
	// Extensions is SuperHub's section for its UI; the Hub CLI ignores it.
	Extensions any `yaml:"-" accept:"extensions"`
	// Config is the interface of a stack used as a component of another
	// (DESIGN 2.7); elaborate makes it concrete, so it is not written back.
	Config *ConfigSpec `yaml:"-" accept:"config"`
}

// Folder is where the Hub reads a component whose entry names a repository
// and no dir: the sub-folder of the clone, which is localDir or the
// component's name.
func (g *GitRepo) Folder(component string) string {
	clone := g.LocalDir
	if clone == "" {
		clone = component
	}
	return filepath.Join(clone, filepath.FromSlash(g.SubDir))
}

// HubMeta are the Hub CLI's metadata fields that stacks and components
// share, those after the name, in the Hub's order. Origin is a component's
// name in the library it comes from and Kind its kind there (elaborate sets
// both from the component file's name): instances of one kind do not see
// each other's outputs.
type HubMeta struct {
	Origin      string          `yaml:"origin,omitempty"`
	Kind        string          `yaml:"kind,omitempty"`
	Title       string          `yaml:"title,omitempty"`
	Brief       string          `yaml:"brief,omitempty"`
	Description string          `yaml:"description,omitempty"`
	Version     string          `yaml:"version,omitempty"`
	Maturity    string          `yaml:"maturity,omitempty"`
	License     string          `yaml:"license,omitempty"`
	Icon        string          `yaml:"icon,omitempty"`
	Source      *SourceLocation `yaml:"source,omitempty"`
}

// Catalog are the fields the Hub's component library writes for its
// catalog, which the Hub CLI ignores: accepted, not kept.
type Catalog struct {
	Category string   `yaml:"-" accept:"category"`
	Keywords []string `yaml:"-" accept:"keywords"`
	Licence  string   `yaml:"-" accept:"licence"` // the library's other spelling of license
	Disabled bool     `yaml:"-" accept:"disabled"`
}

// Platform is a stack's platform section.
type Platform struct {
	Pos      Pos      `yaml:"-"`
	Provides []string `yaml:"provides,omitempty"`
}

// Meta describes a stack: its name, the Hub's metadata fields in its order,
// and gantry's installation handler.
type Meta struct {
	Pos Pos `yaml:"-"`
	// Positions are those of its fields' values (fromStack's, for the
	// base stack's errors).
	Positions   Positions `yaml:"-"`
	Name        string    `yaml:"name,required"`
	HubMeta     `yaml:",inline"`
	FromStack   string         `yaml:"fromStack,omitempty"`
	Annotations map[string]any `yaml:"annotations,omitempty"`
	Catalog     `yaml:",inline"`
	// InstallationHandler is called with prepare before a command that
	// changes the stack and finalize after it (sow).
	InstallationHandler *InstallationHandler `yaml:"installationHandler,omitempty"`
}

// InstallationHandler is an executable called around deploy, undeploy and
// invoke: "prepare <config as JSON>" before (its failure stops the command)
// and "finalize <config as JSON>" after (always).
type InstallationHandler struct {
	Pos    Pos    `yaml:"-"`
	Path   string `yaml:"path,required"`
	Config any    `yaml:"config,omitempty"`
}

// ConfigJSON is the handler's config as the JSON text it gets as its second
// argument ("{}" without a config).
func (h *InstallationHandler) ConfigJSON() (string, error) {
	config := h.Config
	if config == nil {
		config = map[string]any{}
	}
	data, err := json.Marshal(config)
	return string(data), err
}

// ComponentRef is a component entry of a stack.
type ComponentRef struct {
	Pos       Pos       `yaml:"-"`
	Positions Positions `yaml:"-"`
	Name      string    `yaml:"name,required"`
	Source    Source    `yaml:"source,required"`
	Depends   []string  `yaml:"depends,omitempty"`
	// Annotations are the Hub's free-form notes on a component entry.
	Annotations map[string]string `yaml:"annotations,omitempty"`
	// Lifecycle overrides the component manifest's lifecycle field by field.
	Lifecycle *ComponentLifecycle `yaml:"lifecycle,omitempty"`
	// Config are the values passed to a nested stack (source.stack), kept
	// as written so that spread can say where each came from.
	Config *Node `yaml:"-" accept:"config"`
	// Up names the nested stack that governs a leaf of the solution
	// elaborate extracts ("web", "web.edge"); empty at the top.
	Up string `yaml:"up,omitempty"`
	// Item is the entry's place in the components list of the file that
	// declares it, for messages (components[2].depends[0]) about a list
	// that merging base stacks or dropping a duplicate renumbered.
	Item int `yaml:"-"`
	// DependsRewritten is set when Depends is no longer the list as
	// written (a nested stack's name became its leaves, a leaf took its
	// stack's, a broken component was dropped): its items' positions are
	// not those of Positions.
	DependsRewritten bool `yaml:"-"`
	// DependsFrom says where a name of Depends that a nested stack's entry
	// gave to its leaves is written, for a message said there, once.
	DependsFrom map[string]Written `yaml:"-"`
}

// Written is where something is written: its position and its field path.
type Written struct {
	Pos   Pos
	Field string
}

// Source says where a component's files are: Dir, filled from Git by
// gantry pull when Git is given.
type Source struct {
	Pos Pos      `yaml:"-"`
	Dir string   `yaml:"dir,omitempty"`
	Git *GitRepo `yaml:"git,omitempty"`
	// Stack makes the component a nested stack: the folder of its hub.yaml.
	Stack string `yaml:"stack,omitempty"`
	// FromGit says Dir was not written but taken from Git, as the Hub
	// does: the sub-folder of a clone named after the component.
	FromGit bool `yaml:"-"`
}

// SourceLocation is where a stack's or a component's sources live, in its
// metadata (the Hub's meta.source).
type SourceLocation struct {
	Pos Pos      `yaml:"-"`
	Dir string   `yaml:"dir,omitempty"`
	Git *GitRepo `yaml:"git,omitempty"`
}

// GitRepo is a folder of a Git repository: Remote at Ref (a branch or tag;
// the remote's default branch when empty), SubDir of it.
type GitRepo struct {
	Pos    Pos    `yaml:"-"`
	Remote string `yaml:"remote,required"`
	Ref    string `yaml:"ref,omitempty"`
	SubDir string `yaml:"subDir,omitempty"`
	// LocalDir is where the Hub keeps the clone; gantry reads it as the
	// folder to pull into when the entry has no dir.
	LocalDir string `yaml:"localDir,omitempty"`
}

// StackLifecycle holds the stack's ordering, optionality, requirement tuning and
// Skopos application lifecycle.
type StackLifecycle struct {
	Pos       Pos       `yaml:"-"`
	Positions Positions `yaml:"-"`
	// Bare is the Hub's lifecycle.bare: "allow" lets an application stack
	// run without an implementation; gantry keeps it for the Hub.
	Bare            string           `yaml:"bare,omitempty"`
	Verbs           []string         `yaml:"verbs,omitempty"`
	Order           []string         `yaml:"order,omitempty"`
	Mandatory       []string         `yaml:"mandatory,omitempty"`
	Optional        []string         `yaml:"optional,omitempty"`
	Requires        RequiresTuning   `yaml:"requires,omitempty"`
	Parallel        int              `yaml:"parallel,omitempty"` // 1 to MaxParallel
	ReadyConditions []ReadyCondition `yaml:"readyConditions,omitempty"`
	// Options are the Hub's lifecycle.options of an application stack;
	// a derived stack (fromStack) drops them, as the Hub does.
	Options         *LifecycleOptions `yaml:"options,omitempty"`
	TeardownOrphans string            `yaml:"teardown_orphans,omitempty"`
	PreFlight       *FlightGroup      `yaml:"pre_flight,omitempty"`
	PostFlight      *FlightGroup      `yaml:"post_flight,omitempty"`
	PostTeardown    *FlightGroup      `yaml:"post_teardown,omitempty"`
	// Timeout and Retries are the defaults of every component's verb: a
	// component manifest's, then a component entry's, take their place.
	Timeout *Duration `yaml:"timeout,omitempty"`
	Retries *Retries  `yaml:"retries,omitempty"`
	// Idempotent is the default of every component's lifecycle.idempotent,
	// and says whether the stack's own lifecycle steps may run again.
	Idempotent *bool `yaml:"idempotent,omitempty"`
}

// RequiresTuning softens requirements (seed 000 "Optional requirements").
type RequiresTuning struct {
	Pos      Pos      `yaml:"-"`
	Optional []string `yaml:"optional,omitempty"`
}

// ReadyCondition is something that must answer before a component (or the
// stack) counts as ready.
type ReadyCondition struct {
	Pos Pos `yaml:"-"`
	// DNS and URL may both be given: the name must resolve, then the URL
	// answer, as the Hub checks them.
	DNS          string `yaml:"dns,omitempty"`
	URL          string `yaml:"url,omitempty"`
	WaitSeconds  int    `yaml:"waitSeconds,omitempty"`
	PauseSeconds int    `yaml:"pauseSeconds,omitempty"`
}

// FlightGroup is a pre_flight, post_flight or post_teardown group: standard steps
// (unless skipped) followed by injected steps.
type FlightGroup struct {
	Pos               Pos    `yaml:"-"`
	SkipStandardSteps bool   `yaml:"skip_standard_steps,omitempty"`
	Steps             []Step `yaml:"steps,omitempty"`
}

// Output is a declared output of a stack or component.
type Output struct {
	Pos         Pos    `yaml:"-"`
	Name        string `yaml:"name,required"`
	Brief       string `yaml:"brief,omitempty"`
	Description string `yaml:"description,omitempty"`
	Kind        string `yaml:"kind,omitempty"` // "secret" or "secret/<type>" masks the value
	// Icon is a catalog field of the component library the Hub CLI
	// ignores: accepted, not kept.
	Icon      string `yaml:"-" accept:"icon"`
	Value     string `yaml:"value,omitempty"`
	FromTfVar string `yaml:"fromTfVar,omitempty"`
	// FromObject reads the output from an object in the cluster after the
	// component's kubernetes or helm plugin deployed (components only).
	FromObject *ObjectRef `yaml:"fromObject,omitempty"`
	// Secret declares the output secret (true) or not (false) whatever its
	// name says; nil leaves it to kind and the name.
	Secret *bool `yaml:"secret,omitempty"`
}

// ObjectRef names a value of an object in a Kubernetes cluster: the kind as
// kubectl takes it (Service, service, services, deployment.apps), the
// object's name and namespace (default: the plugin instance's), and the
// path of the value (kubectl's JSONPath without filters: .spec.clusterIP).
type ObjectRef struct {
	Pos       Pos    `yaml:"-"`
	Kind      string `yaml:"kind,required"`
	Name      string `yaml:"name,required"`
	Namespace string `yaml:"namespace,omitempty"`
	Path      string `yaml:"path,required"`
}

// ReadsSecret reports whether the object is a Secret, whose values are
// secret whatever the output says.
func (r *ObjectRef) ReadsSecret() bool {
	if r == nil {
		return false
	}
	k, group, _ := strings.Cut(strings.ToLower(r.Kind), ".")
	return (k == "secret" || k == "secrets") && group == ""
}

// IsSecret reports whether the output is secret by its declaration: secret:
// when given, else kind: secret (or secret/<type>), else its name
// (LooksSecret), as the Hub CLI marks outputs. A value computed from a secret
// is secret whatever its output says.
func (o Output) IsSecret() bool {
	if o.FromObject.ReadsSecret() {
		return true
	}
	if o.Secret != nil {
		return *o.Secret
	}
	return o.kindSecret() || LooksSecret(o.Name)
}

// kindSecret reports whether the output's kind is secret or secret/<type>.
func (o Output) kindSecret() bool {
	return o.Kind == "secret" || len(o.Kind) > 7 && o.Kind[:7] == "secret/"
}

// MaxParallel bounds lifecycle.parallel and --parallel: each step in flight
// may hold a process, its pipes and a log, and the executor sizes its
// queues by it; past a few thousand the machine's process and descriptor
// limits fail the run instead.
const MaxParallel = 4096
