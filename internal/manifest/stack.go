package manifest

import (
	"encoding/json"
	"strings"
)

// Stack is a manifest of kind: stack (hub.yaml), Hub v1 format with gantry's
// extensions.
type Stack struct {
	Pos        Pos            `yaml:"-"`
	File       string         `yaml:"-"` // path the stack was loaded from
	Version    int            `yaml:"version"`
	Kind       string         `yaml:"kind"`
	Meta       Meta           `yaml:"meta"`
	Components []ComponentRef `yaml:"components,omitempty"`
	Requires   []string       `yaml:"requires,omitempty"`
	Provides   []string       `yaml:"provides,omitempty"`
	Lifecycle  StackLifecycle `yaml:"lifecycle,omitempty"`
	Parameters []Parameter    `yaml:"parameters,omitempty"`
	Outputs    []Output       `yaml:"outputs,omitempty"`
}

// Meta describes a stack.
type Meta struct {
	Pos         Pos            `yaml:"-"`
	Name        string         `yaml:"name,required"`
	Brief       string         `yaml:"brief,omitempty"`
	Description string         `yaml:"description,omitempty"`
	Version     string         `yaml:"version,omitempty"`
	FromStack   string         `yaml:"fromStack,omitempty"`
	Annotations map[string]any `yaml:"annotations,omitempty"`
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
	// Lifecycle overrides the component manifest's lifecycle field by field.
	Lifecycle *ComponentLifecycle `yaml:"lifecycle,omitempty"`
}

// Source says where a component's files are.
type Source struct {
	Pos Pos    `yaml:"-"`
	Dir string `yaml:"dir,required"`
}

// StackLifecycle holds the stack's ordering, optionality, requirement tuning and
// Skopos application lifecycle.
type StackLifecycle struct {
	Pos             Pos              `yaml:"-"`
	Positions       Positions        `yaml:"-"`
	Verbs           []string         `yaml:"verbs,omitempty"`
	Order           []string         `yaml:"order,omitempty"`
	Mandatory       []string         `yaml:"mandatory,omitempty"`
	Optional        []string         `yaml:"optional,omitempty"`
	Requires        RequiresTuning   `yaml:"requires,omitempty"`
	Parallel        int              `yaml:"parallel,omitempty"`
	ReadyConditions []ReadyCondition `yaml:"readyConditions,omitempty"`
	TeardownOrphans string           `yaml:"teardown_orphans,omitempty"`
	PreFlight       *FlightGroup     `yaml:"pre_flight,omitempty"`
	PostFlight      *FlightGroup     `yaml:"post_flight,omitempty"`
	PostTeardown    *FlightGroup     `yaml:"post_teardown,omitempty"`
}

// RequiresTuning softens requirements (seed 000 "Optional requirements").
type RequiresTuning struct {
	Pos      Pos      `yaml:"-"`
	Optional []string `yaml:"optional,omitempty"`
}

// ReadyCondition is something that must answer before a component (or the
// stack) counts as ready.
type ReadyCondition struct {
	Pos          Pos    `yaml:"-"`
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
	Value       string `yaml:"value,omitempty"`
	FromTfVar   string `yaml:"fromTfVar,omitempty"`
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
