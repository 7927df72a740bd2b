package plugin

import (
	"context"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/state"
)

// Staged is a plugin whose actions are carried out in stages that the plan
// shows as steps of their own: the kubernetes plugin's CRDs, hooks and weight
// groups (seed 004). The plan asks the plugin for an instance's stages when
// it is built — from the instance's inputs as the manifest gives them, before
// any parameter is expanded — and the executor runs each stage as a step.
// The first stage of every action prepares the instance (reads and expands
// its inputs, checks them); what it returns reaches the stages after it.
type Staged interface {
	Plugin
	// Stages lists the stages of an action of one instance, in the order they
	// run. An error is invalid input: nothing runs.
	Stages(req StagesRequest) ([]Stage, error)
	// RunStage carries one stage out. prepared is what the action's first
	// stage returned (nil for the first stage itself); the result of the
	// first stage is handed to the others.
	RunStage(ctx context.Context, c *Call, st Stage, prepared any) (any, error)
}

// StagesRequest is what a staged plugin plans an instance's action from.
type StagesRequest struct {
	// Component is the component's name; Dir its folder, absolute.
	Component string
	Dir       string
	// Entry is the plugin list entry, unexpanded: ${...} references are
	// still in its config.
	Entry *Spec
	// Action is deploy or delete.
	Action string
	// Recorded is what the state recorded of the instance the last time it
	// ran (nil when it never did): the resources it created.
	Recorded *state.PluginInstance
	// Templates are the component's templates: (nil when it declares none,
	// or the manifest is not known): the files rendered before the instance
	// runs, which the plan reads as templates (the helm plugin's values
	// files).
	Templates *manifest.Templates
	// Read, when set, is told each file outside the component's folder
	// that planning the instance read (a kustomization's ../../base), by
	// its path from the folder with symlinks resolved, slash-separated
	// ("../../base/cm.yaml"): so it names the file whichever path the
	// folder is reached through. A change to it changes the component's
	// fingerprint as a change to the folder does.
	Read func(path string)
	// Parameters are the component's parameters (nil when its manifest is
	// not known): what the instance's release and cluster may be named by
	// when it runs (the helm plugin's release, namespace and kubeconfig).
	Parameters []manifest.Parameter
	// Unknown, when set, says why a reference (${name}: component "";
	// ${component:name}) cannot resolve when the instance runs ("" when it
	// can): the plugin reports it as invalid input, which the deploy would
	// meet only when it expands it. The plugin asks it of every reference
	// its inputs hold: the plan checks more of them (a value known when
	// the component runs). nil: every reference can (a partial stack).
	Unknown func(component, name string) string
}

// StageOutputs is the stage the plan adds after a deploy's plugin list when
// the component declares outputs read from objects (fromObject): the plugin
// reads Call.Outputs from the cluster and reports them. It is a stage of the
// list's last staged instance, after its prepare stage; the plugin's own
// stages do not list it.
const StageOutputs = "outputs"

// Stage is one stage of a staged plugin's action.
type Stage struct {
	// ID names the stage among the action's stages; the plugin reads it
	// back when it runs the stage. It is part of the step's id.
	ID string `json:"id"`
	// Label says what the stage does, for plans and displays.
	Label string `json:"label"`
	// Objects are the things the stage works on, for plans (kind/name).
	Objects []string `json:"objects,omitempty"`
}

// IsStaged reports whether a built-in plugin runs in stages.
func IsStaged(name string) (Staged, bool) { return registeredAs[Staged](name) }

// Claimer is a staged plugin whose instances deploy something of which a
// stack has one deployer: a Helm release. The plan refuses two components
// of a stack that claim the same.
type Claimer interface {
	// Claim names what a deploy of the instance claims ("helm release web
	// in namespace shop"), "" when the plan cannot tell (parameters name
	// it: the run checks then).
	Claim(req StagesRequest) string
}

// Labeled is a built-in plugin of lists whose entries say themselves what
// they do, for plans, displays and the lanes of parallel entries. For the
// action "" the label names the entry without its action.
type Labeled interface {
	EntryLabel(action string, s *Spec) string
}

// Referencing is a staged plugin whose instances read ${...} references
// from files the entry names (the kubernetes plugin's manifests): the
// component graph orders a component after those whose outputs its
// instances read, as it does for its template files. InputRefs lists them
// as the files say when the graph is built (req has no Recorded, Read or
// Unknown); what cannot be read or parsed reads nothing here (planning the
// stages reports it).
type Referencing interface {
	InputRefs(req StagesRequest) []params.Part
}

// Planned is a built-in plugin of lists that is asked, while the plan is
// built, about each entry and action: some have nothing to do (the plan
// leaves them out), some cannot be planned (the error is invalid input,
// positioned when it is a *PositionedError).
type Planned interface {
	PlanEntry(action string, s *Spec) (bool, error)
}

// PositionedError is an error about a place in a file.
type PositionedError struct {
	Pos   manifest.Pos
	Field string
	Err   error
}

// Error is the error's text, without the place (diagnostics add it).
func (e *PositionedError) Error() string { return e.Err.Error() }

// Unwrap is the error about the place.
func (e *PositionedError) Unwrap() error { return e.Err }
