package action

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/gantry-dev/gantry/internal/landscape"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/plan/resolve"
	"github.com/gantry-dev/gantry/internal/plan/steps"
	"github.com/gantry-dev/gantry/internal/secret"
	"github.com/gantry-dev/gantry/internal/state"
)

// WorkerOptions are what `gantry worker` runs with.
type WorkerOptions struct {
	// Dir is the checkout the worker runs steps from: a run's manifest is
	// found at the path the client gave below its own checkout's root.
	Dir string
	// State is the state database's URL with the worker's credentials;
	// "" uses each run's URL (without a password) with PGPASSWORD or
	// ~/.pgpass.
	State string
	// Parallel is the most steps the worker runs at once.
	Parallel int
	// Ready, when set, is called once the worker takes steps.
	Ready func(name string)
}

// WorkerRun is a run rebuilt on a worker (docs/temporal.md): the stack
// loaded from the worker's checkout, the plan built again with the client's
// options, parameters and state, and checked to be the client's; the
// world its steps share; a recorder that writes beside the run's other
// workers.
type WorkerRun struct {
	Bundle  *Bundle
	Plan    *plan.Plan
	Runtime *steps.Runtime
	Masker  *secret.Masker

	mu     sync.Mutex // reads of the state
	reader waitingReader
	writer state.Store
}

// waitingReader is a store whose reads, made while a run is under way,
// wait for a database that is away for a moment (the PostgreSQL backend).
type waitingReader interface {
	state.Store
	ReadWaiting(ctx context.Context) (state.Files, error)
}

// runWriterStore is a store that writes a run a workflow holds the lock
// for (the PostgreSQL backend).
type runWriterStore interface {
	RunWriter(runID string) (state.Writer, error)
}

// OpenWorkerRun rebuilds a run from its bundle and the checkout at dir;
// location is the state's URL with this worker's credentials. A checkout
// that differs from the client's is an error that names what differs.
func OpenWorkerRun(ctx context.Context, data []byte, dir, location string) (*WorkerRun, error) {
	b, err := DecodeBundle(data)
	if err != nil {
		return nil, err
	}
	root, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	// The state as the run found it, not as it is now: the plan was
	// built from it (and nothing is read from a database that may be
	// away for a moment).
	// So are sow's records of a landscape, which the run changes too.
	src := Source{Manifest: filepath.Join(root, filepath.FromSlash(b.Manifest)), StatePath: location, State: &state.Files{Snapshot: b.Before}, Records: b.Records}
	if len(b.Before) == 0 {
		src.State.Snapshot = nil
	}
	for _, p := range b.Params {
		src.ParamsFiles = append(src.ParamsFiles, filepath.Join(root, filepath.FromSlash(p)))
	}
	const consequence = "this worker cannot run the step"
	if _, err := os.Stat(src.Manifest); err != nil {
		return nil, &CheckoutError{Root: root, Client: b.Root, Why: fmt.Sprintf("it has no %s (start the worker with --dir at the root of the checkout: the Git work tree, or the stack's folder outside Git)", b.Manifest)}
	}
	st, err := Load(src, consequence)
	if err != nil {
		return nil, fmt.Errorf("load the stack from this worker's checkout %s: %s", root, describeInvalid(err))
	}
	if st.Res.Stack.Meta.Name != b.Stack {
		st.Store.Close()
		return nil, fmt.Errorf("%s in this worker's checkout is stack %q, the run's is %q", src.Manifest, st.Res.Stack.Meta.Name, b.Stack)
	}
	fail := func(err error) (*WorkerRun, error) {
		st.Store.Close()
		return nil, err
	}
	if lroot, ok := landscape.IsLandscape(src.Manifest); ok && !landscape.RunMarked(lroot, b.RunID) {
		return fail(&CheckoutError{Root: root, Client: b.Root,
			Why:    fmt.Sprintf("a landscape's steps run in the client's folder itself, and the run's mark (%s) is not in this one: sow's records here (export/, state/, gen/) are not those the run reads and writes, a component would import the exports an older run left here", landscape.RunMarkFile),
			Advice: "start the workers of a landscape's run in the folder it is started from (on storage shared by the machines for workers on other machines; docs/temporal.md)"})
	}
	st.Locked = b.locked()
	pl := newPlanner(st, nil, consequence)
	opts := build.Options{Verb: b.Verb, Selection: b.Selection, Resume: b.Resume, Force: b.Force, Run: true}
	if b.Elaborate != "" {
		opts.WriteElaborate = filepath.Join(root, filepath.FromSlash(b.Elaborate))
	}
	ro := resolve.Options{Verbs: []string{b.Verb}, Resume: b.Resume, Handler: true}
	if st.State != nil {
		ro.LastRun = st.State.LastRun
	}
	bt, err := pl.build(opts, ro)
	if err != nil {
		return fail(fmt.Errorf("build the run's plan from this worker's checkout %s: %w", root, err))
	}
	fp, err := fingerprintOf(root, st, bt)
	if err != nil {
		return fail(err)
	}
	if fp.sum != b.Fingerprint {
		why := "it differs"
		if b.Parts != nil {
			why = fp.differs(b.Parts)
		}
		return fail(&CheckoutError{Root: root, Client: b.Root, Why: why})
	}
	rt := runtime(st, bt, b.RunID, b.KeepTFVars)
	rt.SeedDirSums(fp.digests)
	rs, ok := st.Store.(runWriterStore)
	if !ok {
		return fail(errors.New("the run's state is not in a database that workers share"))
	}
	w, err := rs.RunWriter(b.RunID)
	if err != nil {
		return fail(err)
	}
	before := state.New(b.Stack)
	if st.State != nil {
		before = st.State.Clone()
	}
	rt.Recorder = state.RecordShared(w, before)
	opened, err := state.Open(ctx, location, b.Stack)
	if err != nil {
		_ = rt.Recorder.Close()
		return fail(err)
	}
	reader, ok := opened.(waitingReader)
	if !ok {
		opened.Close()
		_ = rt.Recorder.Close()
		return fail(errors.New("the run's state is not in a database that workers share"))
	}
	return &WorkerRun{Bundle: b, Plan: bt.plan, Runtime: rt, Masker: bt.masker, reader: reader, writer: st.Store}, nil
}

// describeInvalid is an error with the problems an *InvalidError holds, the
// first few of them.
func describeInvalid(err error) string {
	var ie *InvalidError
	if !errors.As(err, &ie) || len(ie.Diags.Errors()) == 0 {
		return err.Error()
	}
	var msgs []string
	for i, d := range ie.Diags.Errors() {
		if i == 3 {
			msgs = append(msgs, fmt.Sprintf("and %d more", len(ie.Diags.Errors())-3))
			break
		}
		msgs = append(msgs, d.String())
	}
	return strings.Join(msgs, "; ")
}

// CheckoutError is a worker whose checkout is not the client's: it
// refuses the run's steps.
type CheckoutError struct {
	Root, Client string
	Why          string
	// Advice is what to do; "" says to update the checkout.
	Advice string
}

func (e *CheckoutError) Error() string {
	advice := e.Advice
	if advice == "" {
		advice = "update the checkout (or start the worker in the right one) and run again"
	}
	return fmt.Sprintf("this worker's checkout %s is not the one the run was started from (%s on the client): %s; %s", e.Root, e.Client, e.Why, advice)
}

// Runner is the runner of a step of the run.
func (w *WorkerRun) Runner(n *plan.Node) (plan.Runner, error) { return w.Runtime.Runner(n) }

// Refresh takes in what the run's other workers recorded; mine names the
// components whose steps run on this worker.
func (w *WorkerRun) Refresh(ctx context.Context, mine func(string) bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	files, err := w.reader.ReadWaiting(ctx)
	if err != nil {
		return err
	}
	st, err := files.Decode(w.reader.String())
	if err != nil {
		return err
	}
	w.Runtime.Absorb(st, mine)
	return nil
}

// Flush waits until what the run's steps recorded here is in the state.
func (w *WorkerRun) Flush() error { return w.Runtime.Recorder.Flush() }

// Close ends the run on this worker.
func (w *WorkerRun) Close() error {
	err := w.Runtime.Recorder.Close()
	w.reader.Close()
	w.writer.Close()
	return err
}
