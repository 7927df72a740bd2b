package action

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/landscape"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan/build"
	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/workspace"
)

// Source names a stack, its params files and its state.
type Source struct {
	// Manifest is the stack manifest (hub.yaml) or an elaborated file.
	Manifest    string
	ParamsFiles []string
	// StatePath is the state: a path, file://PATH or a backend's URL
	// (postgres://...); "" for <manifest>.state next to the manifest.
	StatePath string
	// Env overrides the environment for fromEnv (-e NAME=VALUE).
	Env map[string]string
	// Lock says how long a run waits for the state's lock that another
	// run holds (--lock-timeout), and who hears of the wait.
	Lock state.LockOptions
	// GraphOnly says the caller needs the component graph and no more
	// (gantry order): a sow landscape's deployment manifests, stubs and
	// plugin lists are not worked out, as sow's order does not.
	GraphOnly bool
	// HandlerLater says the stack's installation handler will prepare
	// before the plan that runs is built, and the stack is loaded again
	// then: a sow landscape's plugin lists that depend on records prepare
	// may bring (exports, state) are not refused yet.
	HandlerLater bool
	// HandlerCalled says the installation handler's prepare ran: the
	// stack is loaded again with what it brought.
	HandlerCalled bool
	// State, when set, is the state the stack is loaded with instead of
	// reading the store: a worker's run starts from the state its
	// client found (its bundle's), whatever the database holds now, and
	// while the database is away.
	State *state.Files
	// Records, when set, are a sow landscape's records as the client's
	// plan read them (the bundle's): a worker plans from them, not from
	// the records the run has changed since.
	Records []byte
}

// Terminal is what an action may use of the person at the terminal; the
// zero value means there is none (CI, piped input): nothing is asked.
type Terminal struct {
	// Prompter asks for parameters that have no value.
	Prompter params.Prompter
	// Ask shows a gate's or a pause's question, secrets masked, where the
	// person sees it and reads an answer.
	Ask func(question string) (string, error)
}

// Interactive reports whether someone can answer.
func (t Terminal) Interactive() bool { return t.Ask != nil }

// Stack is a loaded stack: elaborated, with its state and, once locked, its
// parameters.
type Stack struct {
	Res *elaborate.Result
	// StatePath is the state as given (a path, or a backend's URL, which
	// may hold a password: messages name Store); Store is where it lives;
	// State what it held when last read (nil before the first run).
	StatePath string
	Store     state.Store
	State     *state.State
	// anchor is the state file, or for a database the file the state
	// would be: the workspace (.gantry) lies next to it, and the state
	// records component folders relative to its folder.
	anchor string
	// defaultState is the manifest's default state file, where it would
	// be: the process registry is named after it (registryPath).
	defaultState string
	lockOpts     state.LockOptions
	// warnings are what loading found to warn about: a command's planner
	// shows them.
	warnings manifest.Diagnostics
	// For gantry validate, which goes on past errors: elaborated says
	// elaborate found no errors (none of the stack's, no component left
	// out); graphBroken that the graph has a cycle.
	elaborated, graphBroken bool
	// ownLandscapeState says the state is a sow landscape's own file (its
	// acre.yaml.state): it belongs to the landscape whatever stack name it
	// recorded, which is its folder's name of then (moved, renamed);
	// tookOver is that name when it differs from the stack's now.
	ownLandscapeState bool
	tookOver          string
	Locked            *params.Locked
	Graph             *build.Graph
	env               map[string]string
	stateSum          [32]byte
	files             state.Files // what State was decoded from
	read              bool
	prefetch          *statePrefetch // the first read's, when it started early
	base              *state.Base    // cut from files while they were read; nil once taken
}

// DefaultStatePath is <manifest>.state next to the manifest given; for an
// elaborated file, next to it without .elaborate.
func DefaultStatePath(manifestPath string) string {
	return strings.TrimSuffix(manifestPath, elaborate.Suffix) + ".state"
}

// IsElaborated reports whether a path names an elaborated file.
func IsElaborated(path string) bool { return strings.HasSuffix(path, elaborate.Suffix) }

// Load elaborates the stack (or reads an elaborated file), reads its state
// and builds its component graph. Invalid input is an *InvalidError.
func Load(src Source, consequence string) (*Stack, error) {
	st, diags, err := load(src, false)
	if err == nil && diags.HasErrors() {
		// Invalid: read it again as validate does, past the manifests that
		// are broken to the graph, so that every problem is said at once
		// (a cycle beside an unknown field). Only invalid input pays.
		if _, all, perr := load(src, true); perr == nil && len(all.Errors()) > len(diags.Errors()) {
			diags = all
		}
	}
	if err == nil {
		err = diagsError(diags, consequence)
	}
	if err != nil {
		return nil, err
	}
	st.warnings = diags.Warnings()
	return st, nil
}

// load is Load; with partial it goes on past invalid input as far as it
// can, returning every problem found on the way with what could be loaded
// (nil when not even the stack could be read): the stack without the
// components that could not be read, its graph even with a cycle.
func load(src Source, partial bool) (*Stack, manifest.Diagnostics, error) {
	manifest.SetParseCache(parseCacheDir(src))
	prefetch := prefetchState(src)
	// -e acts as the environment when parameters are locked (source env:VAR),
	// not as values written into the manifest.
	res, diags := elaborateSource(&src, partial)
	if res == nil || diags.HasErrors() && !partial {
		return nil, diags, nil
	}
	st := &Stack{Res: res, StatePath: src.StatePath, env: src.Env, lockOpts: src.Lock, elaborated: !diags.HasErrors(), prefetch: prefetch,
		defaultState: absPath(DefaultStatePath(src.Manifest))}
	if st.StatePath == "" {
		st.StatePath = DefaultStatePath(src.Manifest)
	}
	var err error
	if st.Store, st.anchor, err = OpenState(st.StatePath, src.Manifest, res.Stack.Meta.Name); err != nil {
		return nil, diags, err
	}
	st.StatePath = strings.TrimPrefix(st.StatePath, "file://")
	st.ownLandscapeState = isLandscape(src) && len(state.SplitLocations(st.StatePath)) == 1 &&
		!state.IsDatabase(st.StatePath) && st.anchor == absPath(DefaultStatePath(src.Manifest))
	// The component graph is built while the state is read and decoded:
	// neither needs the other, and each takes tens of milliseconds at
	// 10,000 components.
	type graphOf struct {
		g     *build.Graph
		diags manifest.Diagnostics
		panic any // carried back, to be reported as a panic of the command
	}
	graph := make(chan graphOf, 1)
	go func() {
		var out graphOf
		defer func() {
			out.panic = recover()
			graph <- out
		}()
		out.g, out.diags = build.BuildGraph(res)
	}()
	readErr := st.ReadState()
	built := <-graph
	if built.panic != nil {
		panic(built.panic)
	}
	if readErr != nil {
		return nil, diags, readErr
	}
	if st.tookOver != "" {
		diags.Warnf(manifest.Pos{File: st.anchor}, "", "the state was recorded for stack %q; this landscape is stack %q now (a landscape's stack is named by its folder, which was moved or renamed): it takes its own state over, and its next deploy or undeploy records the new name", st.tookOver, res.Stack.Meta.Name)
	}
	g, gdiags := built.g, built.diags
	diags = append(diags, gdiags...)
	if gdiags.HasErrors() && !partial {
		return nil, diags, nil
	}
	st.Graph, st.graphBroken = g, gdiags.HasErrors()
	slog.Debug("stack loaded", "stack", res.Stack.Meta.Name, "components", len(res.Components), "state", st.Store.String(), "recorded", st.State != nil)
	return st, diags, nil
}

// parseCacheDir is where the trees of the stack's large YAML files are
// kept (manifest.SetParseCache): in the workspace next to its state file,
// with the stack's other records, not in a folder of the user's where a
// params file's values would end up far from the stack. GANTRY_PARSE_CACHE=off
// turns it off.
func parseCacheDir(src Source) string {
	if os.Getenv("GANTRY_PARSE_CACHE") == "off" {
		return ""
	}
	// The workspace OpenState anchors: the first state file, else the
	// manifest's default state path.
	anchor := DefaultStatePath(src.Manifest)
	if src.StatePath != "" {
		if first := state.SplitLocations(src.StatePath)[0]; !state.IsDatabase(first) {
			anchor = first
		}
	}
	return workspace.For(strings.TrimPrefix(anchor, "file://")).ParseCache()
}

// ReadState reads the state again, refusing one that belongs to another
// stack. It reports whether the state changed since it was last read.
func (s *Stack) ReadState() error {
	_, err := s.readState()
	return err
}

func (s *Stack) readState() (changed bool, err error) {
	files, st, base, prefetched, err := s.prefetch.take(s.Store)
	s.prefetch = nil
	if err != nil {
		return false, &InvalidError{Err: err, Consequence: "nothing was run"}
	}
	if !prefetched {
		if files, err = s.Store.Read(context.Background()); err != nil {
			return false, unreadable("nothing was run", err)
		}
	}
	if err := s.checkListed(); err != nil {
		return false, err
	}
	sum := files.Sum()
	if s.read && sum == s.stateSum {
		return false, nil // read before, unchanged since
	}
	if !prefetched {
		if st, err = files.Decode(s.Store.String()); err != nil {
			return false, &InvalidError{Err: err, Consequence: "nothing was run"}
		}
	}
	if st != nil && st.Stack != "" && st.Stack != s.Res.Stack.Meta.Name {
		if !s.ownLandscapeState {
			return false, invalid("nothing was run", "state %s belongs to stack %q, not %q; %s", s.Store, st.Stack, s.Res.Stack.Meta.Name, s.otherStateHint())
		}
		s.tookOver = st.Stack
	}
	changed = s.read
	s.State, s.stateSum, s.read, s.files, s.base = st, sum, true, files, base
	return changed, nil
}

// checkListed refuses an -s list (hub.yaml.state,other.state) a location
// of which, after the first, holds another stack's state: the first alone
// is read, but every location is written, so that stack's state would be
// replaced by this one's.
func (s *Stack) checkListed() error {
	list, ok := s.Store.(state.Mirror)
	if !ok {
		return nil
	}
	for _, store := range list[1:] {
		files, err := store.Read(context.Background())
		if err != nil {
			return invalid("nothing was run", "%w", err)
		}
		st, err := files.Decode(store.String())
		if err != nil {
			return &InvalidError{Err: err, Consequence: "nothing was run"}
		}
		if st != nil && st.Stack != "" && st.Stack != s.Res.Stack.Meta.Name {
			return invalid("nothing was run", "state %s belongs to stack %q, not %q; every location of -s %s is written with this stack's state: list only this stack's states", store, st.Stack, s.Res.Stack.Meta.Name, list)
		}
	}
	return nil
}

// otherStateHint says what to do about a state of another stack.
func (s *Stack) otherStateHint() string {
	if _, ok := landscape.IsLandscape(s.Res.Stack.File); !ok {
		return "point -s at this stack's state"
	}
	return fmt.Sprintf("a sow landscape's stack is named by its folder: leave out -s for its own state (%s), which it takes over whatever name it recorded, or run it from a folder of the state's name", DefaultStatePath(s.Res.Stack.File))
}

// recorderBase is the base a run's recorder continues the state from
// (state.Files.Base): cut when the state was read, or now. Each base is
// taken once: the recorder changes it.
func (s *Stack) recorderBase() *state.Base {
	if b := s.base; b != nil {
		s.base = nil
		return b
	}
	return s.files.Base(s.State)
}

// OpenState opens the state at a location (a path, file://PATH or a
// backend's URL, DESIGN section 8; or the Hub CLI's list of them,
// "hub.yaml.state,other.state", every one of them written) for the stack
// named stack ("" when the command has no manifest), and returns the file
// its workspace lies next to: the (first) state file, or for a database
// <manifest>.state next to the manifest (hub.yaml.state in the current
// folder without one).
func OpenState(location, manifestPath, stack string) (state.Store, string, error) {
	locations := state.SplitLocations(location)
	var stores state.Mirror
	anchor := ""
	for _, l := range locations {
		s, file, err := openOne(l, stack)
		if err != nil {
			stores.Close()
			return nil, "", err
		}
		stores = append(stores, s)
		if anchor == "" {
			anchor = file
		}
	}
	if err := refuseListedTwice(location, stores); err != nil {
		stores.Close()
		return nil, "", err
	}
	if anchor == "" {
		anchor = "hub.yaml.state"
		if manifestPath != "" {
			anchor = DefaultStatePath(manifestPath)
		}
	}
	if len(stores) == 1 {
		return stores[0], absPath(anchor), nil
	}
	return stores, absPath(anchor), nil
}

// refuseListedTwice refuses an -s list that names one state twice, however
// its locations are spelt: each would be locked in turn, and the second
// lock would be found held by this very run.
func refuseListedTwice(location string, stores state.Mirror) error {
	for i := range stores {
		for j := range i {
			if sameStore(stores[j], stores[i]) {
				return invalid("nothing was run", "--state %s lists one state twice (%s and %s): list each location once", state.Redact(location), stores[j], stores[i])
			}
		}
	}
	return nil
}

// Key names the stack's state the same however its location is spelt:
// a database's server, database and stack, or the file's path with its
// links resolved. It holds no secret.
func (s *Stack) Key() string {
	return storeKey(s.Store, s.anchor)
}

// storeKey names the state a store holds (of a list, the first, which is
// read), the same however its location is spelt; anchor is the file a
// store that names none stands for.
func storeKey(st state.Store, anchor string) string {
	if m, ok := st.(state.Mirror); ok && len(m) > 0 {
		st = m[0]
	}
	if id, ok := st.(interface{ Identity() string }); ok {
		return id.Identity()
	}
	p := anchor
	if f, ok := st.(*state.FileStore); ok {
		p = absPath(f.Path())
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	if d, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(d, filepath.Base(p))
	}
	return p
}

// sameStore reports whether two stores hold one state: the same file
// however its path is spelt (sameState), or the same database and stack.
func sameStore(a, b state.Store) bool {
	type identified interface{ Identity() string }
	if fa, ok := a.(*state.FileStore); ok {
		fb, ok := b.(*state.FileStore)
		return ok && sameState(fa.Path(), fb.Path())
	}
	ia, okA := a.(identified)
	ib, okB := b.(identified)
	return okA && okB && ia.Identity() == ib.Identity()
}

// openOne opens one location; file is its path for a file, "" otherwise.
func openOne(location, stack string) (s state.Store, file string, err error) {
	if !state.IsDatabase(location) {
		p := strings.TrimPrefix(location, "file://")
		if p == "" {
			return nil, "", invalid("nothing was run", "--state %q: expected a file path, file://PATH or postgres://...", location)
		}
		return state.NewFileStore(p), p, nil
	}
	s, err = state.Open(context.Background(), location, stack)
	if err != nil {
		return nil, "", invalid("nothing was run", "%w", err)
	}
	return s, "", nil
}

// LockParams locks the top-level parameters with the OS environment, -e
// overrides, the state and, on a terminal, prompts. Lenient turns missing
// values into warnings and never prompts (validate). Warnings go to warn.
func (s *Stack) LockParams(term Terminal, lenient bool, warn func(manifest.Diagnostics), consequence string) error {
	in := params.LockInput{
		Stack: s.Res.Stack,
		Env: func(k string) (string, bool) {
			if v, ok := s.env[k]; ok {
				return v, true
			}
			return os.LookupEnv(k)
		},
		Outputs: declaredOutputs(s.Res),
	}
	if s.State != nil {
		in.State = s.State.Parameters
		in.DeploymentID = s.State.DeploymentID
	}
	if term.Prompter != nil && !lenient {
		in.Prompt = term.Prompter
	}
	in.Lenient = lenient
	locked, diags := params.Lock(in)
	if err := diagsError(diags, consequence); err != nil {
		if lenient {
			// gantry validate goes on with what could be locked, to
			// report the components' problems too.
			s.Locked = locked
		}
		return err
	}
	if warn != nil {
		warn(diags)
	}
	s.Locked = locked
	return nil
}

// LockedFromState takes the parameters the state recorded (undeploy,
// invoke): they are what the components were deployed with.
func (s *Stack) LockedFromState() {
	if s.State == nil {
		s.Locked = params.FromState(s.Res.Stack.Meta.Name, "", nil)
		return
	}
	s.Locked = params.FromState(s.Res.Stack.Meta.Name, s.State.DeploymentID, s.State.Parameters)
}

// declaredOutputs lists the outputs each component declares.
func declaredOutputs(res *elaborate.Result) map[string][]string {
	m := make(map[string][]string, len(res.Components))
	for _, c := range res.Components {
		names := make([]string, len(c.Outputs))
		for i, o := range c.Outputs {
			names[i] = o.Name
		}
		m[c.Meta.Name] = names
	}
	return m
}

// AbsStatePath is the state file's absolute path, or for a database the
// file the state would be (OpenState): the workspace lies next to it.
func (s *Stack) AbsStatePath() string { return s.anchor }

// stateFiles are the files of the run's state (every file location of
// -s), absolute; none for a state in a database.
func (s *Stack) stateFiles() []string {
	var out []string
	for _, loc := range state.SplitLocations(s.StatePath) {
		if state.IsDatabase(loc) {
			continue
		}
		out = append(out, absPath(strings.TrimPrefix(loc, "file://")))
	}
	return out
}

// registryPath is the file where a run of the stack from its manifest's
// folder notes the processes it has running (component.Registry), whatever
// the state: named after the manifest's default state file and next to it,
// so that runs of one stack on two states (two files, a file and a
// database, before and after a state migrate) share it — the second is
// refused while one runs, and waits for the processes a killed one left.
func (s *Stack) registryPath() string {
	return workspace.For(s.defaultState).Registry(s.defaultState)
}

// stateRegistry is where the run also notes its processes when the state
// is a file of another name or folder (as gantry did before registries
// were the manifest's), "" when that is registryPath: the next run on that
// state from another checkout (a CI job's new folder, the state on a
// volume) must find what a killed run left too.
func (s *Stack) stateRegistry() string {
	if state.IsDatabase(s.StatePath) {
		return ""
	}
	if p := workspace.For(s.anchor).Registry(s.anchor); !samePath(p, s.registryPath()) {
		return p
	}
	return ""
}

// samePath says whether two paths name one file, their folders' links
// resolved (the file need not exist): a folder reached through a link
// would have the run hold one registry twice, and refuse itself.
func samePath(a, b string) bool {
	resolve := func(p string) string {
		if d, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			return filepath.Join(d, filepath.Base(p))
		}
		return filepath.Clean(p)
	}
	return resolve(a) == resolve(b)
}

// registries are the files a run of the stack notes its processes in.
func (s *Stack) registries() []string {
	if p := s.stateRegistry(); p != "" {
		return []string{s.registryPath(), p}
	}
	return []string{s.registryPath()}
}

// checkRegistries fails with a *component.RegistryBusyError when a live
// run holds one of the stack's registries.
func (s *Stack) checkRegistries() error {
	for _, p := range s.registries() {
		if err := component.CheckRegistry(p); err != nil {
			return err
		}
	}
	return nil
}

// leftovers are the processes killed runs of the stack left that still
// live, from its registries (one process noted in both counts once).
func (s *Stack) leftovers() ([]component.Leftover, error) {
	var left []component.Leftover
	seen := map[component.Leftover]bool{}
	for _, p := range s.registries() {
		more, err := component.Leftovers(p)
		if err != nil {
			return nil, err
		}
		for _, l := range more {
			if !seen[l] {
				seen[l] = true
				left = append(left, l)
			}
		}
	}
	return left, nil
}

// registriesInUse says whether a live run holds one of the stack's
// registries.
func (s *Stack) registriesInUse() bool {
	for _, p := range s.registries() {
		if component.RegistryInUse(p) {
			return true
		}
	}
	return false
}

// Location is the state as processes are given it (GANTRY_STATE): the
// state file's absolute path, or the backend's URL as given but for the
// stack it names (a stack deployed from inside a component is another).
func (s *Stack) Location() string {
	if state.IsDatabase(s.StatePath) {
		return state.WithoutStack(s.StatePath)
	}
	return s.anchor
}
