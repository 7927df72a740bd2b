// Package report builds gantry's run report: one self-contained HTML page
// (its script, styles and data inline, nothing fetched) showing a run — the
// component graph coloured by outcome, a timeline with the waiting before
// each bar and the critical path, each component's parameters with their
// sources, its outputs and its log, failing lines first — or, before a
// run, what a plan would do and why.
//
// A run's report is built from its folder alone (plan.json, events.jsonl,
// params.json, summary.txt and the logs), which hold masked values only:
// the report never reads the state, so it never holds a secret. The run
// that just ended hands it its plan and, in Heard, its logs, events and
// parameters as it wrote them there, instead of reading them back; the
// parameters are masked again either way.
package report

// Kinds of report.
const (
	KindRun  = "run"
	KindPlan = "plan"
)

// Model is everything a page shows, embedded in it as JSON. Times are
// milliseconds since the run started; -1 when a thing did not happen.
type Model struct {
	Kind  string `json:"kind"`
	Stack string `json:"stack"`
	Verb  string `json:"verb"`
	Run   string `json:"run,omitempty"`
	// Status is how the run ended: ok, failed, interrupted or unfinished;
	// Why, why it failed when no failed component says it (mandatory
	// components skipped after an optional one failed).
	Status string `json:"status,omitempty"`
	Why    string `json:"why,omitempty"`
	// Live names the gantry process (pid N on HOST) of an unfinished run
	// that still runs; "" for one that ended without finishing (killed).
	Live string `json:"live,omitempty"`
	// Elsewhere is the host an unfinished run's gantry ran on when it is
	// not this one: whether it still runs cannot be told.
	Elsewhere  string `json:"elsewhere,omitempty"`
	Started    string `json:"started,omitempty"` // RFC 3339
	DurationMS int64  `json:"durationMs"`
	Generated  string `json:"generated"`
	// Summary is the run's summary table (summary.txt).
	Summary string `json:"summary,omitempty"`
	// Params are the stack's parameters; ParamsKept says the run kept
	// them (runs of older gantry versions did not).
	Params     []Param  `json:"params"`
	ParamsKept bool     `json:"paramsKept"`
	Orphans    []string `json:"orphans,omitempty"`
	// Components are the plan's components in plan order, then the
	// stack-level groups (pre-flight, post-flight, ...), which have steps
	// and logs but no place in the graph.
	Components []*Component `json:"components"`
	Edges      []Edge       `json:"edges"`
	// Reduced counts the ties left out of the graph because longer paths
	// imply them.
	Reduced int `json:"reduced"`
	// Layout is where the graph's boxes go.
	Layout Layout `json:"layout"`
	// Critical lists the components of the critical path, first to last.
	Critical []int `json:"critical"`
}

// Component is a component (or a stack-level group) as the page shows it.
type Component struct {
	Name string `json:"name"`
	// Group marks a stack-level group: pre-flight, post-flight, the
	// installation handler.
	Group bool   `json:"group,omitempty"`
	Verb  string `json:"verb,omitempty"`
	// Action and Reason are what the plan said it would do and why.
	Action string `json:"action,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Status is how it ended (deployed, failed, skipped, ...), Why the
	// reason of a skip or a failure.
	Status    string `json:"status"`
	Why       string `json:"why,omitempty"`
	Mandatory bool   `json:"mandatory,omitempty"`
	Orphan    bool   `json:"orphan,omitempty"`
	// Up names the nested stack the component is a leaf of ("" at the top).
	Up string `json:"up,omitempty"`
	// Ready is when everything it waits for had ended, Start and End when
	// its first step started and its last ended.
	Ready    int64 `json:"ready"`
	Start    int64 `json:"start"`
	End      int64 `json:"end"`
	Critical bool  `json:"critical,omitempty"`
	// X and Y place its box in the graph (components only).
	X int `json:"x"`
	Y int `json:"y"`
	// Steps are the steps people see, in plan order.
	Steps   []*Step  `json:"steps"`
	Params  []Param  `json:"params"`
	Outputs []Output `json:"outputs"`
	Log     *Log     `json:"log,omitempty"`
}

// Step is one visible step of a component or group.
type Step struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Kind   string `json:"kind"`
	Status string `json:"status,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Warning is set when the step failed but on_fail: warn let the run
	// go on; Info when on_fail: info did.
	Warning  string `json:"warning,omitempty"`
	Info     string `json:"info,omitempty"`
	Ready    int64  `json:"ready"`
	Start    int64  `json:"start"`
	End      int64  `json:"end"`
	Critical bool   `json:"critical,omitempty"`
}

// Edge is a tie of the component graph, between positions in Components:
// To runs after From.
type Edge struct {
	From     int    `json:"from"`
	To       int    `json:"to"`
	Label    string `json:"label"`
	Weak     bool   `json:"weak,omitempty"`
	Critical bool   `json:"critical,omitempty"`
}

// Output is an output a component produced, masked when secret.
type Output struct {
	Name   string `json:"name"`
	Value  string `json:"value"`
	Secret bool   `json:"secret,omitempty"`
}

// Layout is the size of the graph and of its boxes, in pixels.
type Layout struct {
	Width  int `json:"width"`
	Height int `json:"height"`
	BoxW   int `json:"boxW"`
	BoxH   int `json:"boxH"`
}
