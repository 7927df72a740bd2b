package action

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/gantry-dev/gantry/internal/engine"
	"github.com/gantry-dev/gantry/internal/gitroot"
	"github.com/gantry-dev/gantry/internal/landscape"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/secret"
	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/ui"
	"github.com/gantry-dev/gantry/internal/workspace"
)

// A remote engine runs a stack's plan elsewhere than in this process: the
// Temporal engine runs each step on `gantry worker` processes
// (docs/temporal.md). The client builds the plan here as for a local run;
// the engine takes the state's lock, starts the run (or attaches to the
// stack's run under way) and feeds its record — the same display, events,
// logs and summary — with what the run does.
type Engine interface {
	// Run carries out a run prepared here, or attaches to the stack's run
	// under way.
	Run(ctx context.Context, r *RemoteRun) (*Outcome, error)
	// Work takes steps of runs and carries them out until ctx ends
	// (gantry worker).
	Work(ctx context.Context, o WorkerOptions) error
}

// EngineOpener opens an engine from its location (temporal://host:port/ns).
type EngineOpener func(location string) (Engine, error)

var (
	enginesMu sync.Mutex
	engines   = map[string]EngineOpener{}
)

// RegisterEngine adds an engine for the URL schemes given. Engines with
// heavy dependencies register from their own packages, which only the
// gantry command imports.
func RegisterEngine(open EngineOpener, schemes ...string) {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	for _, s := range schemes {
		engines[s] = open
	}
}

// OpenEngine opens the engine at a location; "" and "local" are the local
// executor (nil).
func OpenEngine(location string) (Engine, error) {
	if location == "" || location == "local" {
		return nil, nil
	}
	scheme, _, ok := strings.Cut(location, "://")
	enginesMu.Lock()
	open := engines[scheme]
	var known []string
	for s := range engines {
		known = append(known, s+"://")
	}
	enginesMu.Unlock()
	if !ok || open == nil {
		sort.Strings(known)
		return nil, invalid("nothing was run", "--engine %q: expected local or %s", location, strings.Join(known, ", "))
	}
	return open(location)
}

// RemoteRun is a run a remote engine carries out, as this process prepared
// it.
type RemoteRun struct {
	Stack string
	// Store is the state (the engine checks its backend); StateLocation is
	// where workers find it, without its password.
	Store         state.Store
	StateLocation string
	Command       string
	// Lock says how long to wait for a lock another run holds.
	Lock state.LockOptions
	// Parallel is the run's --parallel (lifecycle.parallel, else 1).
	Parallel    int
	Force       bool
	Interactive bool
	Terminal    Terminal
	// Rerun says which steps may run again on another worker after the one
	// running them died; Local which light steps need nothing their
	// component's host holds (no folder lock: its component renders no
	// templates), so that the workflow's worker may run them.
	Rerun, Local func(*plan.Node) bool

	prepare func(ctx context.Context, runID string) (*Prepared, error)
	attach  func(runID string, bundle []byte, started time.Time) (*RemoteRecord, error)
	differs func(bundle []byte) (string, error)
	warn    func(string)
}

// Differs says how the run a remote engine runs (its bundle) is not the
// one this command asks for — another verb, selection, --resume or
// --force: "" when it is the same, and only then may the command attach
// to it.
func (r *RemoteRun) Differs(bundle []byte) (string, error) {
	return r.differs(bundle)
}

// Prepare reads the state again under the lock the engine took for a new
// run, builds the plan again if it changed, and returns the run to start,
// its record open. Invalid input and a state that changed into one that
// cannot run are errors; nothing was started.
func (r *RemoteRun) Prepare(ctx context.Context, runID string) (*Prepared, error) {
	return r.prepare(ctx, runID)
}

// Attach opens the record of the stack's run under way, whose bundle a
// remote engine kept and which started at started: this process shows it
// from its start, and its duration counts from there, not from the attach.
func (r *RemoteRun) Attach(runID string, bundle []byte, started time.Time) (*RemoteRecord, error) {
	return r.attach(runID, bundle, started)
}

// Warn tells the person at the terminal something about the run.
func (r *RemoteRun) Warn(msg string) {
	if r.warn != nil {
		r.warn(msg)
	}
}

// Prepared is a new run ready to start.
type Prepared struct {
	// Plan is the plan to run; Bundle what a worker rebuilds it from, and
	// Fingerprint what names it (Bundle.Fingerprint).
	Plan        *plan.Plan
	Bundle      []byte
	Fingerprint string
	open        func() (*RemoteRecord, error)
}

// Open opens the run's record — its folder, its display — once the engine
// has started it.
func (p *Prepared) Open() (*RemoteRecord, error) { return p.open() }

// NewRunID returns a new run's id, as a local run's.
func NewRunID() string { return newRunID() }

// RemoteRecord is a run's record — its folder, display and events — fed
// by a remote engine.
type RemoteRecord struct {
	RunID  string
	Plan   *plan.Plan
	Masker *secret.Masker
	rec    *record
	events *ui.Async
	report func(*Outcome)
	// store holds the secrets the workers learned and this process did
	// not, read once the run is over (learnedSecrets).
	store state.Store
}

// Observer is what the run's events go to: masked, then to the display, the
// run log and the events file.
func (rr *RemoteRecord) Observer() plan.Observer { return rr.events }

// Finish ends the record with what the run did, and returns the run's
// outcome.
func (rr *RemoteRecord) Finish(eo *engine.Outcome) *Outcome {
	rr.events.Close()
	if rr.store != nil && eo != nil {
		// Lines a worker streamed before it knew a secret are in the
		// folder as they came: close masks them again with what the
		// masker learns here (record.close). Only for a run that is
		// over: a client that stops following one (Ctrl-C twice) or
		// whose workflow failed does not wait for the database.
		rr.Masker.Add(learnedSecrets(rr.store)...)
	}
	r := rr.rec
	r.plans = append(r.plans, rr.Plan)
	if eo != nil {
		r.engine = eo
	}
	out := r.close(nil)
	if rr.report != nil {
		rr.report(out)
	}
	return out
}

// openRemoteRecord opens a run's record for a remote engine.
func openRemoteRecord(ws workspace.Workspace, runID string, tag ui.RunTag, p *plan.Plan, masker *secret.Masker, display Display) (*RemoteRecord, error) {
	rec, err := openRecord(ws, runID, tag, p, masker, display)
	if err != nil {
		return nil, err
	}
	return &RemoteRecord{RunID: runID, Plan: p, Masker: masker, rec: rec, events: ui.NewAsync(ui.Masked{Masker: masker, Next: rec.observers})}, nil
}

// carryOutRemote hands a built run to a remote engine.
func (r *stackRun) carryOutRemote(ctx context.Context, b *built, command string, o *RunOptions, eng Engine, parallel int) (*Outcome, error) {
	const consequence = "nothing was run"
	st := r.st
	if b.facts.Handler != nil {
		return nil, invalid(consequence, "--engine %s: the stack's installation handler runs where the run starts, around it; it is not supported on workers (docs/temporal.md)", o.Engine)
	}
	loc := state.SplitLocations(st.StatePath)
	if len(loc) != 1 || !state.IsDatabase(loc[0]) {
		return nil, invalid(consequence, "--engine %s needs a state that workers on other machines share: -s postgres://... (or GANTRY_STATE), not %s", o.Engine, st.Store)
	}
	co, err := checkoutOf(st.Res.Stack.File, o.ParamsFiles)
	if err != nil {
		return nil, invalid(consequence, "--engine %s: %v", o.Engine, err)
	}
	ctx, stopCatching := catchInterrupts(ctx, o.Interrupted)
	defer stopCatching()
	ws := workspace.For(st.AbsStatePath())
	rr := &RemoteRun{
		Stack: st.Res.Stack.Meta.Name, Store: st.Store, StateLocation: withoutPassword(loc[0]), Command: command,
		Lock: st.lockOpts, Parallel: parallel, Force: o.Force, Interactive: o.Terminal.Interactive(), Terminal: o.Terminal,
	}
	stackIdem := st.Res.Stack.Lifecycle.Idempotent != nil && *st.Res.Stack.Lifecycle.Idempotent
	if o.Warn != nil {
		rr.warn = func(msg string) { o.Warn(warningDiag(msg)) }
	}
	rr.prepare = func(ctx context.Context, runID string) (*Prepared, error) {
		rb, err := r.relock(b)
		if err != nil {
			return nil, err
		}
		left, err := st.leftovers()
		if err != nil {
			return nil, err
		}
		if len(left) > 0 {
			return nil, invalid(consequence, "a killed run of this stack left processes running on this machine (%s): a local deploy waits for them; wait for them to end, or run one", st.registryPath())
		}
		bundle := &Bundle{Format: bundleFormat, Stack: rr.Stack, Verb: r.opts.Verb, RunID: runID, Root: co.root,
			Manifest: co.manifest, Params: co.params, State: rr.StateLocation, Selection: r.opts.Selection,
			Resume: r.opts.Resume, Force: r.opts.Force, Yes: o.Yes, Interactive: rr.Interactive, KeepTFVars: r.keepTFVars,
			Parallel: parallel}
		if r.opts.WriteElaborate != "" {
			if bundle.Elaborate, err = co.rel(r.opts.WriteElaborate); err != nil {
				return nil, invalid(consequence, "--engine %s: %v", o.Engine, err)
			}
		}
		if st.State != nil {
			bundle.Before = st.files.Snapshot
		}
		if st.Res.Records != nil {
			if bundle.Records, err = st.Res.Records(); err != nil {
				return nil, err
			}
		}
		bundle.setLocked(st.Locked)
		fp, err := fingerprintOf(co.root, st, rb)
		if err != nil {
			return nil, err
		}
		bundle.Fingerprint, bundle.Parts = fp.sum, fp
		if bundle.Plan, err = encodePlan(rb.plan); err != nil {
			return nil, err
		}
		data, err := bundle.encode()
		if err != nil {
			return nil, err
		}
		if root, ok := landscape.IsLandscape(st.Res.Stack.File); ok {
			if err := landscape.MarkRun(root, runID); err != nil {
				return nil, err
			}
		}
		rr.Rerun = rerun(rb.plan, stackIdem)
		rr.Local = func(n *plan.Node) bool {
			if n.Component == "" {
				return true
			}
			c := st.Res.Component(n.Component)
			return c == nil || c.Templates == nil
		}
		open := func() (*RemoteRecord, error) {
			rec, err := openRemoteRecord(ws, runID, runTag(st), rb.plan, rb.masker, o.Display)
			if err != nil {
				return nil, err
			}
			rec.report = func(out *Outcome) { writeReport(st, rb, out) }
			rec.store = st.Store
			return rec, nil
		}
		return &Prepared{Plan: rb.plan, Bundle: data, Fingerprint: fp.sum, open: open}, nil
	}
	rr.differs = func(data []byte) (string, error) {
		bundle, err := DecodeBundle(data)
		if err != nil {
			return "", err
		}
		return bundle.differs(r.opts.Verb, r.opts.Selection, r.opts.Resume, r.opts.Force, st.Locked), nil
	}
	rr.attach = func(runID string, data []byte, started time.Time) (*RemoteRecord, error) {
		bundle, err := DecodeBundle(data)
		if err != nil {
			return nil, err
		}
		p, err := plan.ReadJSON(strings.NewReader(string(bundle.Plan)))
		if err != nil {
			return nil, err
		}
		st.Locked = bundle.locked()
		masker := stackMasker(st)
		rec, err := openRemoteRecord(ws, runID, runTag(st), p, masker, o.Display)
		if err != nil {
			return nil, err
		}
		rec.report = func(out *Outcome) { writeReport(st, &built{plan: p, masker: masker}, out) }
		rec.store = st.Store
		if !started.IsZero() && started.Before(rec.rec.start) {
			rec.rec.start = started
		}
		return rec, nil
	}
	return eng.Run(ctx, rr)
}

// learnedSecrets are the secrets the state holds now, read once a remote
// run is over: the outputs the workers recorded as secret, which this
// process never saw (they do not go through Temporal's history). A worker
// masks its lines with what it knows when it sends them; a token printed
// before the Outputs: block that declares it was sent in clear, and the
// run's folder is masked again with these. Secrets no state holds (the
// outputs of a component that failed) are not among them.
func learnedSecrets(store state.Store) []string {
	// Bounded: the run is over, and its end must not wait out an outage.
	ctx, cancel := context.WithTimeout(context.Background(), learnTimeout)
	defer cancel()
	files, err := store.Read(ctx)
	if err == nil {
		var st *state.State
		if st, err = files.Decode(store.String()); err == nil {
			return StateSecrets(st)
		}
	}
	slog.Warn("the run's folder is not masked again with the secrets the workers learned: the state could not be read", "state", store.String(), "err", err)
	return nil
}

// learnTimeout bounds the read of learnedSecrets.
const learnTimeout = 10 * time.Second

// relock reads the state again under the lock and builds the plan again
// when it changed (another run changed it since it was read).
func (r *stackRun) relock(b *built) (*built, error) {
	st := r.st
	changed, err := st.readState()
	if err != nil {
		return nil, err
	}
	if st.State == nil {
		if err := r.noState(); err != nil {
			return nil, err
		}
	}
	if !changed {
		return b, nil
	}
	if err := r.lockParams(); err != nil {
		return nil, err
	}
	if st.State != nil {
		r.ro.LastRun = st.State.LastRun
	}
	return r.pl.build(r.opts, r.ro)
}

// checkout is where a stack lies in its checkout: the checkout's root (the
// Git work tree holding the manifest, else the manifest's folder) and the
// manifest's and params files' paths below it, which a worker finds in its
// own checkout.
type checkout struct {
	root     string
	manifest string
	params   []string
}

func checkoutOf(manifest string, params []string) (*checkout, error) {
	abs := absPath(manifest)
	co := &checkout{root: gitroot.Find(filepath.Dir(abs))}
	var err error
	if co.manifest, err = co.rel(abs); err != nil {
		return nil, err
	}
	for _, p := range params {
		rel, err := co.rel(absPath(p))
		if err != nil {
			return nil, fmt.Errorf("params file %s: %w (workers read it from their checkout)", p, err)
		}
		co.params = append(co.params, rel)
	}
	return co, nil
}

// rel is a path below the root, slash-separated.
func (co *checkout) rel(path string) (string, error) {
	rel, err := filepath.Rel(co.root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s lies outside the checkout %s", path, co.root)
	}
	return filepath.ToSlash(rel), nil
}

// withoutPassword is a database's URL without its password, as workers
// are told it: each has credentials of its own.
func withoutPassword(location string) string {
	u, err := url.Parse(location)
	if err != nil {
		return state.Redact(location)
	}
	if u.User != nil {
		u.User = url.User(u.User.Username())
	}
	q := u.Query()
	if q.Has("password") || q.Has("sslpassword") {
		q.Del("password")
		q.Del("sslpassword")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// StateIdentity names a stack's state for a remote engine: the database
// (host, port, name) and the stack. Two runs of one identity are one
// stack's runs.
func StateIdentity(location, stack string) string {
	u, err := url.Parse(location)
	if err != nil {
		return stack
	}
	return u.Host + "/" + strings.TrimPrefix(u.Path, "/") + "#" + stack
}

// rerun says whether a step may run again on another worker after the one
// running it died: gantry's own bookkeeping always may; a component's own
// work when the component declares it (lifecycle.idempotent); a stack-level
// lifecycle step when the stack does.
func rerun(p *plan.Plan, stackIdempotent bool) func(*plan.Node) bool {
	return func(n *plan.Node) bool {
		switch n.Kind {
		case plan.KindBegin, plan.KindEnd, plan.KindSetup, plan.KindFinalize, plan.KindStandard, plan.KindRecord:
			return true
		}
		if n.Component != "" {
			c := p.Components[n.Component]
			return c != nil && c.Idempotent
		}
		return stackIdempotent
	}
}

// warningDiag is a warning without a place, for the warnings display.
func warningDiag(msg string) manifest.Diagnostics {
	var d manifest.Diagnostics
	d.Warnf(manifest.Pos{}, "", "%s", msg)
	return d
}
