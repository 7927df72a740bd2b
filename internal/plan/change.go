package plan

import "strings"

// Change statuses: how a component differs from its last deploy.
const (
	ChangeNew       = "new"
	ChangeUnchanged = "unchanged"
	ChangeChanged   = "changed"
)

// Kinds of the details of a change.
const (
	ChangeParameter = "parameter"
	ChangeOutput    = "output"
	ChangeFile      = "file"
	ChangeManifest  = "manifest"
	ChangeVerb      = "verb"
	// ChangeLifecycle: the lifecycle the stack's entry of the component
	// sets was added, removed or changed.
	ChangeLifecycle = "lifecycle"
	// ChangeReads: the files outside the folder that planning reads (a
	// kustomization's ../../base), named in Name, joined the fingerprint
	// and nothing else of the files changed: the last deploy was by a
	// gantry whose fingerprint left them out.
	ChangeReads = "reads"
	// ChangeRead: a value the component's templates, steps or output
	// values read outside its parameters (a stack parameter, an output,
	// hub.provides; Name, "component:output" for an output named with its
	// component) is not what its last deploy read. New is the value now,
	// masked where secret; the state keeps only a digest of the old one.
	ChangeRead = "read"
	// ChangeUnknown: the fingerprint differs but the state does not say
	// what it was made of (written by an older gantry).
	ChangeUnknown = "unknown"
)

// Change says how a component differs from its last deploy, for a deploy
// plan: new (never deployed, or not deployed now), unchanged, or changed
// and what changed.
type Change struct {
	Status  string         `json:"status"`
	Details []ChangeDetail `json:"details,omitempty"`
}

// ChangeDetail is one thing that changed: a parameter (with its old and new
// values, "*****" for a secret), an upstream output ("component:output"),
// a file of the component's folder, its manifest, or the verb. What is
// "added", "removed" or "changed".
type ChangeDetail struct {
	Kind string `json:"kind"`
	Name string `json:"name,omitempty"`
	What string `json:"what"`
	Old  string `json:"old,omitempty"`
	New  string `json:"new,omitempty"`
	// Pending is the component whose output a parameter's new value reads
	// and which has not run yet (New says "(known once X runs)").
	Pending string `json:"pending,omitempty"`
}

// Masked stands for a secret value in a change.
const Masked = "*****"

// String is the detail as a text plan shows it.
func (d ChangeDetail) String() string {
	switch {
	case d.Kind == ChangeUnknown:
		return "inputs not recorded by the last deploy"
	case d.Kind == ChangeParameter && d.What == "changed":
		return "parameter " + d.Name + ": " + d.Old + " → " + d.New
	case d.Kind == ChangeParameter && d.What == "added":
		return "parameter " + d.Name + " added: " + d.New
	case d.Kind == ChangeVerb:
		return "verb " + d.Old + " → " + d.New
	case d.Kind == ChangeRead && d.What == "removed":
		return d.Name + " (read by its templates, steps or outputs) is no longer defined"
	case d.Kind == ChangeRead && d.New != "":
		return d.Name + " (read by its templates, steps or outputs) changed, now " + d.New
	case d.Kind == ChangeRead:
		return d.Name + " (read by its templates, steps or outputs) changed"
	case d.Kind == ChangeReads:
		return "the files read outside its folder (" + d.Name + ") are part of its fingerprint now: once, after upgrading gantry"
	}
	s := d.Kind
	if d.Name != "" {
		s += " " + d.Name
	}
	return s + " " + d.What
}

// String is the change as a text plan shows it: "new", "unchanged since
// its last deploy", or "changed: parameter a: 1 → 2; file run.sh changed".
func (c *Change) String() string {
	if c == nil {
		return ""
	}
	switch c.Status {
	case ChangeUnchanged:
		return "unchanged since its last deploy"
	case ChangeChanged:
		parts := make([]string, len(c.Details))
		for i, d := range c.Details {
			parts[i] = d.String()
		}
		if len(parts) == 0 {
			return "changed"
		}
		return "changed: " + strings.Join(parts, "; ")
	}
	return c.Status
}

// HasChanges reports whether running the plan changes anything, for plan
// --detailed-exitcode: a deploy that deploys a component that is new,
// changed since its last deploy, replaced by force_replace or whose change
// the state cannot tell, or tears down an orphan; an undeploy that
// undeploys something. A deploy without --resume runs unchanged
// components again, but that is no change, as Terraform's apply of an
// unchanged configuration.
func (p *Plan) HasChanges() bool {
	for _, c := range p.Components {
		switch {
		case c.Action == "unchanged" || c.Action == "skip":
		case c.Verb == VerbDeploy && !c.Orphan && !c.ForceReplace && c.Change != nil && c.Change.Status == ChangeUnchanged:
		default:
			return true
		}
	}
	return false
}
