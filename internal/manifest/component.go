package manifest

// ComponentManifestFile is the file that marks a component directory.
const ComponentManifestFile = "hub-component.yaml"

// Component is a manifest of kind: component (hub-component.yaml).
type Component struct {
	Pos        Pos                `yaml:"-"`
	File       string             `yaml:"-"` // path the manifest was loaded from
	Dir        string             `yaml:"-"` // the component's directory
	Version    int                `yaml:"version"`
	Kind       string             `yaml:"kind"`
	Meta       ComponentMeta      `yaml:"meta"`
	Requires   []string           `yaml:"requires,omitempty"`
	Provides   []string           `yaml:"provides,omitempty"`
	Parameters []Parameter        `yaml:"parameters,omitempty"`
	Outputs    []Output           `yaml:"outputs,omitempty"`
	Templates  *Templates         `yaml:"templates,omitempty"`
	Lifecycle  ComponentLifecycle `yaml:"lifecycle,omitempty"`
	// Template names a blueprint under templates/<name>/ of the stack (or a
	// base stack) that this component fills in.
	Template string        `yaml:"template,omitempty"`
	Plugins  []PluginEntry `yaml:"plugins,omitempty"`
	// SetupPlugins run with prepare before the deploy plugins and with
	// cleanup after the delete plugins (sow's component.plugins).
	SetupPlugins []PluginEntry `yaml:"setupPlugins,omitempty"`
	// Generated says gantry made the plugin lists itself from files it
	// evaluates for every run (a sow landscape's deployment.yaml): they
	// are data, never expanded with ${...}, and an undeploy takes them as
	// loaded now, not as the state recorded them (sow evaluates a
	// component's deployment again to delete it).
	Generated bool `yaml:"-"`
}

// ComponentMeta describes a component: its name, the Hub's metadata fields
// in its order, and gantry's image.
type ComponentMeta struct {
	Pos         Pos    `yaml:"-"`
	Name        string `yaml:"name,omitempty"`
	HubMeta     `yaml:",inline"`
	Image       string         `yaml:"image,omitempty"`
	Annotations map[string]any `yaml:"annotations,omitempty"`
	Catalog     `yaml:",inline"`
}

// Templates lists the files rendered before each verb: Files and
// Directories with Kind, and Extra targets with kinds of their own.
type Templates struct {
	Pos         Pos              `yaml:"-"`
	Kind        string           `yaml:"kind,omitempty"` // curly (default), mustache or go
	Files       []string         `yaml:"files,omitempty"`
	Directories []string         `yaml:"directories,omitempty"`
	Extra       []TemplateTarget `yaml:"extra,omitempty"`
}

// TemplateTarget is one more set of templates of a kind: a component can
// render curly files and go templates in the same verb.
type TemplateTarget struct {
	Pos         Pos      `yaml:"-"`
	Kind        string   `yaml:"kind,omitempty"`
	Files       []string `yaml:"files,omitempty"`
	Directories []string `yaml:"directories,omitempty"`
}

// ComponentLifecycle is the Skopos component lifecycle plus Hub's verbs,
// readiness and bare-component switch.
type ComponentLifecycle struct {
	Pos                    Pos                    `yaml:"-"`
	Verbs                  []string               `yaml:"verbs,omitempty"`
	Bare                   string                 `yaml:"bare,omitempty"` // "allow": no implementation needed
	ForceReplace           *bool                  `yaml:"force_replace,omitempty"`
	ReadyConditions        []ReadyCondition       `yaml:"readyConditions,omitempty"`
	PreComponent           *InjectionPoint        `yaml:"pre_component,omitempty"`
	PostComponent          *InjectionPoint        `yaml:"post_component,omitempty"`
	PreInstanceCreate      *InjectionPoint        `yaml:"pre_instance_create,omitempty"`
	PostInstanceCreate     *InjectionPoint        `yaml:"post_instance_create,omitempty"`
	PostInstanceAttach     *InjectionPoint        `yaml:"post_instance_attach,omitempty"`
	QualityProbe           *InjectionPoint        `yaml:"quality_probe,omitempty"`
	PostInstanceDetach     *InjectionPoint        `yaml:"post_instance_detach,omitempty"`
	PreInstanceDestroy     *InjectionPoint        `yaml:"pre_instance_destroy,omitempty"`
	PostInstanceDestroy    *InjectionPoint        `yaml:"post_instance_destroy,omitempty"`
	OnChange               *InjectionPoint        `yaml:"on_change,omitempty"`
	ServiceDiscoveryAttach *ServiceDiscoveryPoint `yaml:"service_discovery_attach,omitempty"`
	ServiceDiscoveryDetach *ServiceDiscoveryPoint `yaml:"service_discovery_detach,omitempty"`
	// Options tune what gantry gives the component's processes.
	Options *LifecycleOptions `yaml:"options,omitempty"`
	// Timeout bounds each attempt of the component's verb; Retries tries a
	// failed verb again. The stack's lifecycle gives defaults.
	Timeout *Duration `yaml:"timeout,omitempty"`
	Retries *Retries  `yaml:"retries,omitempty"`
	// Fingerprint tunes which files of the folder make the fingerprint.
	Fingerprint *FingerprintOptions `yaml:"fingerprint,omitempty"`
	// Idempotent says the component's steps may run again after a crash
	// midway (gantry extension): on Temporal workers, a component whose
	// worker died starts over on another worker (docs/temporal.md). The
	// stack's lifecycle gives the default.
	Idempotent *bool `yaml:"idempotent,omitempty"`
}

// LifecycleOptions are the Hub's lifecycle.options.
type LifecycleOptions struct {
	Pos Pos `yaml:"-"`
	// Random sizes HUB_RANDOM, the one-time pad a component encrypts its
	// secret outputs with.
	Random *RandomOption `yaml:"random,omitempty"`
}

// RandomOption is lifecycle.options.random.
type RandomOption struct {
	Pos   Pos `yaml:"-"`
	Bytes int `yaml:"bytes,omitempty"`
}

// InjectionPoint is a standard Skopos injection point: steps of any type.
type InjectionPoint struct {
	Pos   Pos    `yaml:"-"`
	Steps []Step `yaml:"steps,omitempty"`
}

// ServiceDiscoveryPoint is a Skopos service discovery injection point: call
// steps only, with a switch for the standard attach/detach steps.
type ServiceDiscoveryPoint struct {
	Pos               Pos    `yaml:"-"`
	SkipStandardSteps bool   `yaml:"skip_standard_steps,omitempty"`
	Steps             []Step `yaml:"steps,omitempty"`
}
