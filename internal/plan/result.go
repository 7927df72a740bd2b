package plan

// Status is the outcome of a step.
type Status uint8

// Step outcomes.
const (
	Pending Status = iota
	Running
	OK
	Failed
	Skipped
)

func (s Status) String() string {
	return [...]string{"pending", "running", "ok", "failed", "skipped"}[s]
}

// Cause says why a step was skipped, for programs; Reason says it for people.
type Cause uint8

// Causes of skips.
const (
	// CauseNone: the step was not skipped.
	CauseNone Cause = iota
	// CauseNotNeeded: a failure path whose steps all succeeded. Displays
	// leave such skips out: nothing happened and nothing was missed.
	CauseNotNeeded
	// CauseUnchanged: --resume found the component deployed and unchanged.
	CauseUnchanged
	// CauseByDesign: the component is not meant to run now (an optional
	// requirement nothing provides, a tuning condition that is false,
	// nothing to undeploy). Steps outside its group go on.
	CauseByDesign
	// CauseUpstream: a step it waits for failed or was skipped.
	CauseUpstream
	// CauseStopped: the run stopped after a critical step failed.
	CauseStopped
	// CauseInterrupted: the run was interrupted.
	CauseInterrupted
)

var causeNames = [...]string{"", "not needed", "unchanged", "by design", "upstream", "stopped", "interrupted"}

func (c Cause) String() string { return causeNames[c] }

// Soft reports whether a skip of this cause is by design (or a failure path
// not taken): it skips the rest of its group, but steps of other groups that
// wait for it go on.
func (c Cause) Soft() bool { return c == CauseUnchanged || c == CauseByDesign || c == CauseNotNeeded }

// Result is what a step reports when it ends.
type Result struct {
	Status Status
	// Cause says why a skipped step was skipped.
	Cause  Cause
	Reason string // why a step was skipped or failed, for people
	Err    error
	// Warning is set when a step failed but on_fail let the plan go on.
	Warning string
	// Info is an informational message (on_fail: info).
	Info string
	// Abort stops new work, as a critical failure does (on_fail: pause answered
	// with abort).
	Abort bool
	// Label is the step's label with the values it names expanded, when the
	// step said it (NoteLabel); empty when it said none. The skips and the
	// stop its failure causes name the step by it, as its own lines do.
	Label string
	// Data is what the step hands to the steps that name it among their
	// inputs (Node.Inputs): the expanded parameters of a component, the
	// outputs a plugin printed. It never leaves the process.
	Data any
}

// Soft reports whether the result is a skip by design.
func (r Result) Soft() bool { return r.Status == Skipped && r.Cause.Soft() }

// Ok is a successful result.
func Ok() Result { return Result{Status: OK} }

// OkWith is a successful result that hands data to the steps that read it.
func OkWith(data any) Result { return Result{Status: OK, Data: data} }

// Fail is a failed result.
func Fail(err error) Result { return Result{Status: Failed, Err: err, Reason: err.Error()} }

// Skip is a skipped result.
func Skip(cause Cause, reason string) Result {
	return Result{Status: Skipped, Cause: cause, Reason: reason}
}
