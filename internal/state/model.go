// Package state holds what the last runs left — locked parameters, outputs,
// provides, each component's status, parameters, outputs and fingerprint — and
// the backends that keep it safe: written atomically, locked against a second run.
package state

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/gantry-dev/gantry/internal/secret"
)

// FormatVersion is the version of the state file format.
const FormatVersion = 1

// Component and stack statuses.
const (
	StatusDeployed   = "deployed"
	StatusUndeployed = "undeployed"
	StatusFailed     = "failed"
	StatusSkipped    = "skipped"
	StatusIncomplete = "incomplete"
)

// State is the state of one stack.
type State struct {
	Version       int               `yaml:"version"`
	Stack         string            `yaml:"stack"`
	Status        string            `yaml:"status,omitempty"`
	DeploymentID  string            `yaml:"deploymentId,omitempty"`
	LastRun       string            `yaml:"lastRun,omitempty"`
	Updated       time.Time         `yaml:"updated,omitempty"`
	Parameters    map[string]string `yaml:"parameters,omitempty"` // locked top-level parameters by qualified name
	Outputs       map[string]string `yaml:"outputs,omitempty"`    // stack outputs
	SecretOutputs []string          `yaml:"secretOutputs,omitempty"`
	// SecretParameters name the locked parameters that are secret by
	// declaration or because their value is computed from a secret
	// (${db.password/base64}); names that look secret need no entry.
	SecretParameters []string              `yaml:"secretParameters,omitempty"`
	Provides         map[string][]string   `yaml:"provides,omitempty"` // capability -> components
	Components       map[string]*Component `yaml:"components,omitempty"`
}

// Component is the recorded state of one component.
type Component struct {
	Status   string    `yaml:"status"`
	Reason   string    `yaml:"reason,omitempty"`
	Verb     string    `yaml:"verb,omitempty"`
	Started  time.Time `yaml:"started,omitempty"`
	Finished time.Time `yaml:"finished,omitempty"`
	LastRun  string    `yaml:"lastRun,omitempty"`
	// Order is the component's position in the deploy order of its last run, so
	// that orphans are torn down in reverse order after the manifest changed.
	Order         int               `yaml:"order"`
	Dir           string            `yaml:"dir,omitempty"`
	Depends       []string          `yaml:"depends,omitempty"`
	Parameters    []Parameter       `yaml:"parameters,omitempty"`
	Outputs       map[string]string `yaml:"outputs,omitempty"`
	SecretOutputs []string          `yaml:"secretOutputs,omitempty"`
	Provides      []string          `yaml:"provides,omitempty"`
	Fingerprint   string            `yaml:"fingerprint,omitempty"`
	// Inputs are what Fingerprint was made of, as digests: a plan compares
	// them with the current ones to say what changed. Optional: states
	// written before it have none, and their plans say only "changed".
	Inputs      *Inputs `yaml:"inputs,omitempty"`
	SpecVersion string  `yaml:"specVersion,omitempty"`
	// Plugins and SetupPlugins are the component's plugin lists as its last
	// deploy ran them (expanded, with their structure), recorded before they
	// ran: an undeploy, or the teardown of an orphan, deletes what was
	// deployed even when the manifest changed or the run failed half-way.
	Plugins      []PluginInstance `yaml:"plugins,omitempty"`
	SetupPlugins []PluginInstance `yaml:"setupPlugins,omitempty"`
}

// Inputs is what a component's fingerprint was made of, beyond the
// parameters the record holds already: each part as a short digest, never
// a value. Upstream outputs (which may be secret) are digested with the
// deployment id as salt; files with their name, mode and size.
type Inputs struct {
	Verb string `yaml:"verb"`
	// Outputs are digests of the upstream outputs read, by
	// "component:output".
	Outputs map[string]string `yaml:"outputs,omitempty"`
	// Files are digests of the files of the component's folder, by path
	// relative to it (slash-separated).
	Files map[string]string `yaml:"files,omitempty"`
	// Lifecycle is the digest of the lifecycle the stack's entry of the
	// component set, when it set one.
	Lifecycle string `yaml:"lifecycle,omitempty"`
	// Reads are digests of the values the component's templates, steps
	// and output values read outside its own parameters (stack
	// parameters, outputs, hub.provides), by name or "component:output",
	// as its last deploy read them.
	Reads map[string]string `yaml:"reads,omitempty"`
}

// Parameter is an expanded component parameter as it was used.
type Parameter struct {
	Name  string `yaml:"name"`
	Value string `yaml:"value"`
	Env   string `yaml:"env,omitempty"`
	// Secret marks a value that is secret by declaration or because it is
	// computed from a secret; names that look secret need no mark.
	Secret bool `yaml:"secret,omitempty"`
}

// IsSecret reports whether the recorded value is secret: marked so, or
// with a name that looks secret (which the record does not mark).
func (p Parameter) IsSecret() bool { return p.Secret || secret.Named(p.Name) }

// PluginInstance is the recorded spec of one plugin list entry: an instance
// (Key is empty for keyless built-ins) or a control plugin (pinned,
// unpinned, parallel) with its Children.
type PluginInstance struct {
	Key      string           `yaml:"key,omitempty"`
	Name     string           `yaml:"name"`
	Path     string           `yaml:"path,omitempty"`
	Args     []string         `yaml:"args,omitempty"`
	Config   any              `yaml:"config,omitempty"`
	Hidden   bool             `yaml:"hidden,omitempty"`
	Label    string           `yaml:"label,omitempty"`
	OnFail   []string         `yaml:"onFail,omitempty"`
	Children []PluginInstance `yaml:"children,omitempty"`
	// Resources are what the instance created outside gantry (the
	// kubernetes plugin's objects): recorded before they are created, so
	// that a later deploy prunes what vanished from the manifests and an
	// undeploy deletes it, also after a run that was killed half-way.
	Resources []Resource `yaml:"resources,omitempty"`
	// Cluster says which Kubernetes cluster the resources are in (the
	// uid of its kube-system namespace, which no other cluster shares):
	// a run whose kubeconfig points at another refuses to apply or
	// delete what another environment of the stack deployed there.
	Cluster string `yaml:"cluster,omitempty"`
}

// Resource is an object a plugin instance created in a system gantry does
// not own (a Kubernetes object), named well enough to delete it.
type Resource struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Namespace  string `yaml:"namespace,omitempty"`
	Name       string `yaml:"name"`
	// Weight is the object's deploy group (werf.io/weight); an undeploy
	// deletes the groups from the highest weight down.
	Weight int `yaml:"weight,omitempty"`
	// CRD marks a CustomResourceDefinition: deleted after everything else.
	CRD bool `yaml:"crd,omitempty"`
	// Keep marks an object that stays when it is pruned or undeployed
	// (helm.sh/resource-policy: keep).
	Keep bool `yaml:"keep,omitempty"`
	// Adopted marks an object that existed before gantry applied it, and
	// that no gantry component or Helm release owned: prune and undeploy
	// leave it in place.
	Adopted bool `yaml:"adopted,omitempty"`
	// Pending marks an object recorded before the instance's deploy
	// applied it, no deploy of the instance having succeeded since: an
	// instance all of whose objects are pending has not been installed yet
	// (its next deploy installs, with the install hooks).
	Pending bool `yaml:"pending,omitempty"`
}

// New returns an empty state for a stack.
func New(stack string) *State {
	return &State{Version: FormatVersion, Stack: stack, Components: map[string]*Component{}}
}

// Component returns the state of a component, creating it when missing.
func (s *State) Component(name string) *Component {
	if s.Components == nil {
		s.Components = map[string]*Component{}
	}
	c, ok := s.Components[name]
	if !ok {
		c = &Component{}
		s.Components[name] = c
	}
	return c
}

// ComponentOrder returns the names of the recorded components in their
// recorded deploy order.
func (s *State) ComponentOrder() []string {
	// Sorted as pairs: comparing through the map cost two lookups a
	// comparison, 66 ms a run at 10,000 components (called several times).
	type entry struct {
		order int
		name  string
	}
	entries := make([]entry, 0, len(s.Components))
	for n, c := range s.Components {
		entries = append(entries, entry{c.Order, n})
	}
	slices.SortFunc(entries, func(a, b entry) int {
		if a.order != b.order {
			return cmp.Compare(a.order, b.order)
		}
		return strings.Compare(a.name, b.name)
	})
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.name
	}
	return names
}

// ParameterMap returns a component's parameters by name.
func (c *Component) ParameterMap() map[string]string {
	m := make(map[string]string, len(c.Parameters))
	for _, p := range c.Parameters {
		m[p.Name] = p.Value
	}
	return m
}

// clonePlugins copies recorded plugin instances down to their children and
// resources, which the recorder sets in place.
func clonePlugins(list []PluginInstance) []PluginInstance {
	if list == nil {
		return nil
	}
	out := make([]PluginInstance, len(list))
	for i, p := range list {
		p.Args = append([]string(nil), p.Args...)
		p.OnFail = append([]string(nil), p.OnFail...)
		p.Resources = append([]Resource(nil), p.Resources...)
		p.Children = clonePlugins(p.Children)
		out[i] = p
	}
	return out
}

// Clone returns a deep copy: the recorder's own, while the run reads the
// state as it found it.
func (s *State) Clone() *State {
	c := *s.withoutComponents()
	c.Components = make(map[string]*Component, len(s.Components))
	for k, v := range s.Components {
		c.Components[k] = v.Clone()
	}
	return &c
}

// withoutComponents copies the stack-level fields, deeply, and leaves
// Components nil.
func (s *State) withoutComponents() *State {
	c := *s
	c.Parameters = cloneMap(s.Parameters)
	c.Outputs = cloneMap(s.Outputs)
	c.SecretOutputs = append([]string(nil), s.SecretOutputs...)
	c.SecretParameters = append([]string(nil), s.SecretParameters...)
	if s.Provides != nil {
		c.Provides = make(map[string][]string, len(s.Provides))
		for k, v := range s.Provides {
			c.Provides[k] = append([]string(nil), v...)
		}
	}
	c.Components = nil
	return &c
}

// Clone returns a deep copy of a component's record.
func (v *Component) Clone() *Component {
	cc := *v
	cc.Depends = append([]string(nil), v.Depends...)
	cc.Parameters = append([]Parameter(nil), v.Parameters...)
	cc.Outputs = cloneMap(v.Outputs)
	cc.SecretOutputs = append([]string(nil), v.SecretOutputs...)
	cc.Provides = append([]string(nil), v.Provides...)
	if v.Inputs != nil {
		// Recorded whole, never changed in place: sharing the maps is safe.
		in := *v.Inputs
		cc.Inputs = &in
	}
	cc.Plugins = clonePlugins(v.Plugins)
	cc.SetupPlugins = clonePlugins(v.SetupPlugins)
	return &cc
}

// shareComponents returns a copy of the state whose stack-level fields are
// its own and whose component records are the same records: a recorder
// that records over a state others read copies a record before it first
// changes it (RecordOver).
func (s *State) shareComponents() *State {
	c := *s.withoutComponents()
	c.Components = make(map[string]*Component, len(s.Components))
	for k, v := range s.Components {
		c.Components[k] = v
	}
	return &c
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
