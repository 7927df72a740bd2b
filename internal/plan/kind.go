package plan

// Kind is the kind of a step, as plans and events name it.
type Kind string

// Step kinds.
const (
	// KindBegin prepares a component for its verb (hidden).
	KindBegin Kind = "begin"
	// KindComponent carries out a component's verb.
	KindComponent Kind = "component"
	// KindPlugin is an entry of a component's plugin list that runs a plugin.
	KindPlugin Kind = "plugin"
	// KindStage is one stage of an entry whose plugin works in stages (the
	// kubernetes plugin's CRDs, hooks and weight groups).
	KindStage Kind = "stage"
	// KindRecord ends a component's plugin lists: collects and records what
	// they produced (hidden).
	KindRecord Kind = "record"
	// KindEnd settles a component: records how it ended (hidden).
	KindEnd Kind = "end"

	// Injected lifecycle steps (seed 001); entries gate, delay, http and tcp
	// of plugin lists are steps of these kinds too.
	KindExec  Kind = "exec"
	KindCall  Kind = "call"
	KindProbe Kind = "probe"
	KindGate  Kind = "gate"
	KindDelay Kind = "delay"
	// KindReady waits for ready conditions (lifecycle.readyConditions).
	KindReady Kind = "ready"

	// KindStandard is a step gantry puts in a flight group itself.
	KindStandard Kind = "standard"
	// KindHandler calls the stack's installation handler (sow).
	KindHandler Kind = "handler"
	// KindWait waits for the processes a killed run left behind.
	KindWait Kind = "wait"
	// KindSetup records in the state that a run started (hidden).
	KindSetup Kind = "setup"
	// KindFinalize records how the run left the stack (hidden).
	KindFinalize Kind = "finalize"
)

// Steps of gantry pull, which fetches components' sources from Git.
const (
	// KindClone clones a repository at a ref, or updates a clone.
	KindClone Kind = "clone"
	// KindPlace puts a folder of a clone where a component's sources go.
	KindPlace Kind = "place"
)
