package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/gantry-dev/gantry/internal/component"
	"github.com/gantry-dev/gantry/internal/elaborate"
	"github.com/gantry-dev/gantry/internal/engine"
	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/params"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/secret"
	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/ui"
)

// runFlags are the flags of deploy and undeploy.
type runFlags struct {
	stackFlags
	components    []string
	withDeps      bool
	offset, limit string
	parallel      int
	resume        bool
	dryRun        bool
	yes           bool
	force         bool
	output        string
	osEnvironment string
}

func (f *runFlags) register(cmd *cobra.Command, verb string) {
	f.stackFlags.register(cmd)
	fl := cmd.Flags()
	fl.StringSliceVarP(&f.components, "components", "c", nil, "run only these components (a,b)")
	what := "what they depend on"
	if verb == plan.VerbUndeploy {
		what = "what depends on them"
	}
	fl.BoolVarP(&f.withDeps, "with-deps", "a", false, "with -c, add "+what)
	fl.StringVarP(&f.offset, "offset", "o", "", "start at this component")
	fl.StringVarP(&f.limit, "limit", "l", "", "stop after this component")
	fl.IntVar(&f.parallel, "parallel", 0, "run up to N components at once (default: lifecycle.parallel, else 1)")
	fl.BoolVar(&f.resume, "resume", false, "skip components deployed with an unchanged fingerprint")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the plan and run nothing")
	fl.BoolVar(&f.yes, "yes", false, "approve every gate")
	fl.BoolVar(&f.force, "force", false, "after a mandatory component fails, go on with independent components")
	fl.StringVar(&f.output, "output", "text", "text, or json for one event per line")
	fl.StringVar(&f.osEnvironment, "os-environment", "", "\"everything\" keeps TF_VAR_* variables in components' environment")
}

func newDeployCmd(a *app) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "deploy STACK|ELABORATE [PARAMS...]",
		Short: "Deploy a stack: every component in dependency order, in parallel where it can",
		Long: `deploy elaborates the stack (writing <manifest>.elaborate) or reads an elaborated
file, locks its parameters, builds the plan and runs it: each component's
implementation with its parameters, outputs flowing to the next. The state
(<manifest>.state) is written after every step and locked against a second run.
Invalid input stops everything before anything runs (exit 2).`,
		Example: `  gantry deploy hub.yaml params.yaml
  gantry deploy hub.yaml --parallel 4
  gantry deploy hub.yaml -c api -a        # api and what it depends on
  gantry deploy hub.yaml --resume         # only what changed or failed`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runVerb(cmd.Context(), plan.VerbDeploy, args, &f)
		},
	}
	f.register(cmd, plan.VerbDeploy)
	return cmd
}

func newUndeployCmd(a *app) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "undeploy STACK|ELABORATE [PARAMS...]",
		Short: "Undeploy a stack in reverse order, from what the state recorded",
		Long: `undeploy runs each deployed component's undeploy in the reverse of the deploy
order, with the parameters recorded in the state, so it works after the
manifest changed. Components that were never deployed are skipped. Undeploying a
component that a deployed component still depends on is refused unless that
one is selected too (-a selects what depends on the selection).`,
		Example: `  gantry undeploy hub.yaml
  gantry undeploy hub.yaml -c db -a`,
		Args: minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.runVerb(cmd.Context(), plan.VerbUndeploy, args, &f)
		},
	}
	f.register(cmd, plan.VerbUndeploy)
	return cmd
}

// newRunID returns a sortable, unique run id: UTC time and a random suffix.
func newRunID() string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

func (a *app) runVerb(ctx context.Context, verb string, args []string, f *runFlags) error {
	if f.output != "text" && f.output != "json" {
		return usageError("--output %q: expected text or json", f.output)
	}
	pr, err := a.preparePlan(verb, args, f, !f.dryRun)
	if err != nil || pr == nil {
		return err
	}
	if f.dryRun {
		return pr.plan.WriteText(a.stdout, plan.RenderOptions{Manifest: args[0]})
	}
	// Everything above only read files: invalid input has ended the command
	// (exit 2) with nothing run. The installation handler's prepare comes
	// next, before anything of the command itself — the lock, the checks of
	// the environment, the run — and its finalize after all of it (seed 002:
	// "called once before any call to sow ... and once after the sow command").
	h, err := resolveHandler(pr.l.res)
	if err != nil {
		return err
	}
	return a.withInstallationHandler(ctx, h, a.handlerOutput(f.output, pr.rt.Masker), func() error {
		pr, err := a.lockPlan(pr, verb, h != nil)
		if err != nil || pr == nil {
			return err
		}
		defer pr.release()
		if verb == plan.VerbDeploy && !isElaborated(args[0]) {
			if err := a.writeElaborate(pr.l, pr.rt.ElaboratePath); err != nil {
				return err
			}
		}
		return a.execute(ctx, pr.l, pr.rt, pr.plan, f, false)
	})
}

// prepared is a plan ready to run or print.
type prepared struct {
	l       *loaded
	rt      *plan.Runtime
	plan    *plan.Plan
	release func()
	// build builds the plan again from l as it is now, with the environment
	// as it is now.
	build func(assumeEnv bool) (*prepared, error)
}

// preparePlan loads the stack, reads the state, locks the parameters and
// builds the plan. Invalid input ends the command with exit code 2 before
// anything is written or run — not even the lock file, not even the
// installation handler. A nil result with no error means there is nothing to
// do (and it was said).
//
// forRun says the plan is for a run (lockPlan follows). When the stack has an
// installation handler, the plan is then checked for invalid input only: the
// environment's capabilities (tools on PATH) count as present, since the
// handler's prepare may provide them, and lockPlan builds again after it.
func (a *app) preparePlan(verb string, args []string, f *runFlags, forRun bool) (*prepared, error) {
	if f.osEnvironment != "" && f.osEnvironment != "everything" {
		return nil, usageError("--os-environment %q: expected everything", f.osEnvironment)
	}
	if f.parallel < 0 {
		return nil, usageError("--parallel %d: expected a positive number", f.parallel)
	}
	l, err := a.loadStack(args, &f.stackFlags)
	if err != nil {
		return nil, err
	}
	graph, diags := plan.BuildGraph(l.res)
	if err := reportDiags(a.stderr, diags, "nothing was run"); err != nil {
		return nil, err
	}
	runID := newRunID()
	warned := map[string]bool{} // warnings are said once, however often the plan is built
	var build func(assumeEnv bool) (*prepared, error)
	build = func(assumeEnv bool) (*prepared, error) {
		if verb == plan.VerbUndeploy {
			if l.state == nil {
				fmt.Fprintf(a.stdout, "nothing to undeploy: no state at %s\n", l.statePath)
				return nil, nil
			}
			l.locked = params.FromState(l.res.Stack.Meta.Name, l.state.DeploymentID, l.state.Parameters)
		} else if l.locked == nil {
			if err := a.lockParams(l); err != nil {
				return nil, err
			}
		}
		rt, err := a.newRuntime(l, graph, runID, f, assumeEnv)
		if err != nil {
			return nil, err
		}
		sel := plan.Selection{Components: f.components, WithDeps: f.withDeps, Offset: f.offset, Limit: f.limit}
		p, diags := plan.Build(rt, plan.BuildOptions{Verb: verb, Selection: sel, Resume: f.resume, Force: f.force})
		if err := reportDiagsOnce(a.stderr, diags, "nothing was run", warned); err != nil {
			return nil, err
		}
		return &prepared{l: l, rt: rt, plan: p, release: func() {}, build: build}, nil
	}
	return build(forRun && l.res.Stack.Meta.InstallationHandler != nil)
}

// lockPlan takes the state's lock for a run (exit code 3 when another run
// holds it) and builds the plan again when the state changed since it was
// read — another run, or the installation handler, changed it — or when
// rebuild says so (after the installation handler's prepare: the plan is
// then checked against the environment as prepare left it).
func (a *app) lockPlan(pr *prepared, verb string, rebuild bool) (*prepared, error) {
	l := pr.l
	host, _ := os.Hostname()
	held, err := state.Acquire(l.statePath, state.Holder{Host: host, PID: os.Getpid(), RunID: pr.rt.RunID, Command: "gantry " + verb, Since: time.Now().UTC()})
	var le *state.LockedError
	if errors.As(err, &le) {
		return nil, withCode(ExitLocked, fmt.Errorf("%w\nwait for it to finish; if that run is gone, 'gantry unlock -s %s' removes a stale lock", le, l.statePath))
	}
	if err != nil {
		return nil, err
	}
	before := l.stateSum
	if err := l.readState(); err != nil {
		held.Release()
		return nil, err
	}
	if l.stateSum != before || rebuild {
		if l.stateSum != before && verb == plan.VerbDeploy {
			l.locked = nil
		}
		if pr, err = pr.build(false); err != nil || pr == nil {
			held.Release()
			return pr, err
		}
	}
	pr.release = func() { held.Release() }
	return pr, nil
}

func isElaborated(path string) bool { return strings.HasSuffix(path, elaborate.Suffix) }

// writeElaborate writes the .elaborate file next to the manifest, as the
// processes' GANTRY_ELABORATE.
func (a *app) writeElaborate(l *loaded, path string) error {
	data, err := elaborate.Marshal(elaboratedForWrite(l.res), filepath.Dir(path))
	if err != nil {
		return err
	}
	if err := writeFileAtomic(path, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// openProcessRegistry starts noting the processes of this run. A run killed
// with SIGKILL could not stop its processes: if it left some running, they
// are waited for first, so that the same work never runs twice at once.
func (a *app) openProcessRegistry(ctx context.Context, rt *plan.Runtime, st *state.State) (*component.Registry, error) {
	path := filepath.Join(rt.Dirs.Root, filepath.Base(rt.StatePath)+".running")
	left, err := component.Leftovers(path)
	if err != nil {
		return nil, err
	}
	if len(left) > 0 {
		prev := "the previous run"
		if st != nil && st.LastRun != "" {
			prev += " (" + st.LastRun + ")"
		}
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		err := component.WaitGone(ctx, left, 200*time.Millisecond, func(alive []component.Leftover) {
			fmt.Fprintf(a.stderr, "%s was killed and left %d process group(s) running; waiting for them to end before going on (Ctrl-C stops waiting):\n", prev, len(alive))
			for _, l := range alive {
				fmt.Fprintln(a.stderr, "  "+rt.Masker.Text(l.String()))
			}
		})
		if err != nil {
			return nil, withCode(ExitInterrupted, errors.New("interrupted while waiting for the processes of the previous run; nothing was run"))
		}
	}
	if err := os.MkdirAll(rt.Dirs.Root, 0o700); err != nil {
		return nil, err
	}
	return component.OpenRegistry(path)
}

// newRuntime assembles what the steps share.
//
// With assumeEnv the environment's capabilities that components require
// count as present without looking for their tools (a check of the input
// only, before an installation handler prepared the environment).
func (a *app) newRuntime(l *loaded, g *plan.Graph, runID string, f *runFlags, assumeEnv bool) (*plan.Runtime, error) {
	statePath, err := filepath.Abs(l.statePath)
	if err != nil {
		return nil, err
	}
	elab := l.res.Stack.File
	if !isElaborated(elab) {
		elab += elaborate.Suffix
	}
	if elab, err = filepath.Abs(elab); err != nil {
		return nil, err
	}
	masker := secret.NewMasker()
	for _, v := range l.locked.Values() {
		if v.Secret {
			masker.Add(v.Value)
		}
	}
	var wanted []string
	for _, c := range l.res.Components {
		wanted = append(wanted, c.Requires...)
	}
	// Known at the start: the environment's tools, what the stack itself
	// declares it provides, and what deployed components recorded. Components
	// add theirs when they deploy, never before.
	var envCaps []string
	if assumeEnv {
		for _, w := range wanted {
			if plan.IsEnvironmentCapability(w) {
				envCaps = append(envCaps, w)
			}
		}
	} else {
		envCaps = plan.EnvironmentCapabilities(wanted)
	}
	caps := plan.NewCapabilities(envCaps...)
	caps.Add(plan.DeclaredProvides(l.res)...)
	if l.state != nil {
		for _, c := range l.state.Components {
			if c.Status == state.StatusDeployed {
				caps.Add(c.Provides...)
			}
		}
	}
	// Secrets the state recorded: earlier values of secret parameters and
	// outputs may still show in what components print.
	masker.Add(stateSecrets(l.state)...)
	return &plan.Runtime{
		Res:           l.res,
		Graph:         g,
		Locked:        l.locked,
		Outputs:       plan.NewOutputIndex(l.res, g, l.state),
		Before:        l.state,
		Masker:        masker,
		Provides:      caps,
		Dirs:          plan.WorkspaceFor(statePath),
		RunID:         runID,
		StatePath:     statePath,
		ElaboratePath: elab,
		OSEnv:         os.Environ(),
		KeepTFVars:    f.osEnvironment == "everything",
		Now:           time.Now,
	}, nil
}

// execute runs the plan with the display, the run logs and, unless readOnly,
// the state.
func (a *app) execute(ctx context.Context, l *loaded, rt *plan.Runtime, p *plan.Plan, f *runFlags, readOnly bool) error {
	// A run inside a run of the same stack (gantry invoke from a component)
	// is part of the outer run, whose registry and lock cover it.
	if os.Getenv("GANTRY_STATE") != rt.StatePath {
		registry, err := a.openProcessRegistry(ctx, rt, l.state)
		if err != nil {
			return err
		}
		defer registry.Close()
		ctx = component.WithRegistry(ctx, registry)
	}
	if !readOnly {
		st := l.state
		if st == nil {
			st = state.New(l.res.Stack.Meta.Name)
		}
		rt.Recorder = state.NewRecorder(rt.StatePath, st)
		rt.Recorder.UpdateStack(func(s *state.State) {
			s.Stack = l.res.Stack.Meta.Name
			s.LastRun = rt.RunID
			s.Status = state.StatusIncomplete
			if p.Verb == plan.VerbDeploy {
				s.DeploymentID = rt.Locked.DeploymentID
				s.Parameters = rt.Locked.Map()
			}
		})
		if err := rt.Recorder.Flush(); err != nil {
			rt.Recorder.Close()
			return err
		}
	}
	closeRecorder := func() error {
		if rt.Recorder == nil {
			return nil
		}
		return rt.Recorder.Close()
	}
	runLog, err := ui.NewRunLog(rt.Dirs.RunDir(rt.RunID))
	if err != nil {
		closeRecorder()
		return err
	}
	tracker := ui.NewTracker(p)
	if err := writePlanJSON(p, filepath.Join(runLog.Dir(), "plan.json")); err != nil {
		closeRecorder()
		return err
	}
	eventsFile, err := os.OpenFile(filepath.Join(runLog.Dir(), "events.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		closeRecorder()
		return err
	}
	defer eventsFile.Close()
	fileEvents := ui.NewEvents(eventsFile, rt.RunID)
	observers := ui.Multi{tracker, runLog, fileEvents}
	var stdoutEvents *ui.Events
	var live *ui.TTY
	sty := ui.Style{Color: a.color()}
	switch {
	case f.output == "json":
		stdoutEvents = ui.NewEvents(a.stdout, rt.RunID)
		observers = append(observers, stdoutEvents)
	case a.stdoutTerminal() != nil:
		fd := int(a.stdoutTerminal().Fd())
		live = ui.NewTTY(a.stdout, sty, tracker, func() int {
			w, _, err := term.GetSize(fd)
			if err != nil || w <= 0 {
				return 80
			}
			return w
		})
		observers = append(observers, live)
		live.Start()
	default:
		observers = append(observers, ui.NewPlain(a.stdout, sty))
	}
	start := time.Now()
	started := ui.Event{Event: "run_started", Stack: p.Stack, Verb: p.Verb, Components: ui.Components(tracker.Components()), LogDir: runLog.Dir()}
	fileEvents.Emit(started)
	if stdoutEvents != nil {
		stdoutEvents.Emit(started)
	}

	parallel := f.parallel
	if parallel == 0 {
		parallel = l.res.Stack.Lifecycle.Parallel
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	events := ui.NewAsync(ui.Masked{Masker: rt.Masker, Next: observers})
	outcome := engine.Run(ctx, p, engine.Options{
		Parallel:    parallel,
		Force:       f.force,
		Observer:    events,
		RunID:       rt.RunID,
		Interactive: a.prompter() != nil,
		Yes:         f.yes,
		Input:       a.readLine,
	})
	stop()
	events.Close()
	if live != nil {
		live.Stop()
	}

	var warnings []string
	if !readOnly {
		warnings = finalize(rt, p, l)
	}
	werr := closeRecorder()
	_ = runLog.Close()

	comps := tracker.Components()
	status := "ok"
	switch {
	case outcome.Cancelled:
		status = "interrupted"
	case outcome.Failed:
		status = "failed"
	}
	finished := ui.Event{Event: "run_finished", Stack: p.Stack, Verb: p.Verb, Status: status, DurationMS: durationMS(time.Since(start)), Components: ui.Components(comps), LogDir: runLog.Dir()}
	fileEvents.Emit(finished)
	fileEvents.Flush()
	if f, err := os.OpenFile(filepath.Join(runLog.Dir(), "summary.txt"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600); err == nil {
		ui.WriteSummary(f, comps, ui.Style{})
		f.Close()
	}
	if stdoutEvents != nil {
		stdoutEvents.Emit(finished)
		stdoutEvents.Flush()
	} else {
		a.printRunEnd(comps, runLog, outcome, sty)
	}
	for _, w := range warnings {
		fmt.Fprintln(a.stderr, "warning: "+rt.Masker.Text(w))
	}
	if werr != nil {
		return fmt.Errorf("the state could not be written: %w", werr)
	}
	switch {
	case outcome.Cancelled:
		return withCode(ExitInterrupted, errors.New("interrupted; the state records what was done"))
	case outcome.Failed:
		return silentExit(ExitFailed)
	}
	return nil
}

func durationMS(d time.Duration) *int64 { v := d.Milliseconds(); return &v }

// printRunEnd prints the summary, the last lines of failed components' logs
// and where the logs are.
func (a *app) printRunEnd(comps []ui.ComponentRun, runLog *ui.RunLog, outcome *engine.Outcome, sty ui.Style) {
	fmt.Fprintln(a.stdout)
	ui.WriteSummary(a.stdout, comps, sty)
	for _, c := range comps {
		if c.Status != ui.Failed {
			continue
		}
		tail := runLog.Tail(c.Name, 20)
		if len(tail) == 0 {
			continue
		}
		fmt.Fprintf(a.stdout, "\nlast lines of %s:\n", relPath(runLog.Path(c.Name)))
		for _, line := range tail {
			// The log keeps the raw text; the terminal gets what it shows.
			fmt.Fprintln(a.stdout, "  "+ui.Sanitize(line))
		}
	}
	if outcome.HaltedBy != "" {
		fmt.Fprintf(a.stdout, "\nstopped after %s failed (mandatory); --force goes on with independent components\n", outcome.HaltedBy)
	}
	fmt.Fprintf(a.stdout, "\nlogs: %s\n", relPath(runLog.Dir()))
}

// finalize records the stack-level results: its status, provides and
// outputs. It returns warnings about outputs it could not record.
func finalize(rt *plan.Runtime, p *plan.Plan, l *loaded) []string {
	var warnings []string
	rt.Recorder.UpdateStack(func(s *state.State) {
		s.Provides = map[string][]string{}
		statuses := map[string]int{}
		for name, c := range s.Components {
			statuses[c.Status]++
			if c.Status == state.StatusDeployed {
				for _, cap := range c.Provides {
					s.Provides[cap] = append(s.Provides[cap], name)
				}
			}
		}
		for _, v := range s.Provides {
			sort.Strings(v)
		}
		switch {
		case statuses[state.StatusFailed] > 0:
			s.Status = state.StatusFailed
		case statuses[state.StatusIncomplete] > 0:
			s.Status = state.StatusIncomplete
		case statuses[state.StatusDeployed] > 0:
			s.Status = state.StatusDeployed
		default:
			s.Status = state.StatusUndeployed
		}
		if p.Verb == plan.VerbDeploy {
			s.Outputs, s.SecretOutputs, warnings = stackOutputs(rt, l)
		} else if s.Status == state.StatusUndeployed {
			s.Outputs, s.SecretOutputs = nil, nil
		}
	})
	return warnings
}

// stackOutputs evaluates the stack's declared outputs with what is known now;
// outputs of components that did not run stay out.
func stackOutputs(rt *plan.Runtime, l *loaded) (map[string]string, []string, []string) {
	out := map[string]string{}
	var secrets, warnings []string
	r := params.StackResolver(rt.Locked, rt.Outputs, rt.Graph.Order)
	for _, o := range l.res.Stack.Outputs {
		var v string
		var err error
		isSecret := o.IsSecret()
		if comp, name, ok := strings.Cut(o.Name, ":"); ok && o.Value == "" {
			v, err = r.Output(comp, name)
			isSecret = isSecret || rt.Outputs.IsSecret(comp, name)
		} else if o.Value != "" {
			v, err = params.Expand(o.Value, r)
		} else {
			v, err = r.Lookup(o.Name)
		}
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("stack output %s not recorded: %v", o.Name, err))
			continue
		}
		out[o.Name] = v
		if isSecret || manifest.LooksSecret(o.Name) {
			secrets = append(secrets, o.Name)
			rt.Masker.Add(v)
		}
	}
	sort.Strings(secrets)
	if len(out) == 0 {
		return nil, nil, warnings
	}
	return out, secrets, warnings
}

// readLine reads an answer from the terminal.
func (a *app) readLine() (string, error) {
	p := a.prompter()
	if p == nil {
		return "", errors.New("stdin is not a terminal")
	}
	line, err := p.rd.ReadString('\n')
	if err != nil && line == "" {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// color reports whether to colour the output: not with NO_COLOR or
// --no-color, and only on a terminal.
func (a *app) color() bool {
	return !a.noColor && a.stdoutTerminal() != nil
}

// stdoutTerminal returns stdout when it is a terminal, else nil.
func (a *app) stdoutTerminal() *os.File {
	f, ok := a.stdout.(*os.File)
	if ok && isTerminal(f) {
		return f
	}
	return nil
}

// writePlanJSON saves the plan of a run in its folder, for audit.
func writePlanJSON(p *plan.Plan, path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("save the plan: %w", err)
	}
	defer f.Close()
	return p.WriteJSON(f)
}
