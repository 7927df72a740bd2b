package action

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/state"
)

// writeStack writes files under a new folder; executables end in "deploy" or
// ".sh".
func writeStack(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(name, "deploy") || strings.HasSuffix(name, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(p, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// twoComponents is a stack of db and app (after db), each a deploy script
// that notes it ran; app reads db's output.
var twoComponents = map[string]string{
	"hub.yaml": `version: 1
kind: stack
meta: {name: two}
components:
  - name: db
    source: {dir: db}
  - name: app
    source: {dir: app}
    depends: [db]
`,
	"db/hub-component.yaml":  "version: 1\nkind: component\nmeta: {name: db}\noutputs:\n  - name: db.host\n",
	"db/deploy":              "#!/bin/sh\necho db >> ../ran\nprintf 'Outputs:\\ndb.host = h1\\n\\n'\n",
	"db/undeploy":            "#!/bin/sh\necho undeploy db >> ../ran\n",
	"app/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: app}\nparameters:\n  - name: db.host\n    env: DB_HOST\n",
	"app/deploy":             "#!/bin/sh\necho app $DB_HOST >> ../ran\n",
	"app/undeploy":           "#!/bin/sh\necho undeploy app >> ../ran\n",
}

// withChanges is twoComponents with some files replaced or added; edit
// changes a file of it.
func withChanges(changes map[string]string, edit func(map[string]string)) map[string]string {
	files := map[string]string{}
	for k, v := range twoComponents {
		files[k] = v
	}
	for k, v := range changes {
		files[k] = v
	}
	if edit != nil {
		edit(files)
	}
	return files
}

// recorder is a Display that keeps what it was shown.
type recorder struct {
	started  *Started
	finished *Outcome
	steps    []string
}

func (r *recorder) Start(s *Started) plan.Observer { r.started = s; return (*stepNames)(r) }
func (r *recorder) Finish(o *Outcome)              { r.finished = o }

type stepNames recorder

func (s *stepNames) StepStarted(n *plan.Node, _ time.Time) { s.steps = append(s.steps, n.ID) }
func (s *stepNames) StepFinished(*plan.Node, plan.Result, time.Time, time.Time) {
}
func (s *stepNames) Log(*plan.Node, string, time.Time) {}
func (s *stepNames) Note(*plan.Node, plan.Note)        {}

func inDir(t *testing.T, dir string) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chdir(wd) })
}

func statuses(o *Outcome) map[string]string {
	m := map[string]string{}
	for _, c := range o.Components {
		m[c.Name] = c.Status
	}
	return m
}

func TestDeployThenResumeThenUndeploy(t *testing.T) {
	dir := writeStack(t, twoComponents)
	inDir(t, dir)
	d := &recorder{}
	out, err := (&Deploy{RunOptions{Source: Source{Manifest: "hub.yaml"}, Display: d}}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusOK || d.finished != out || d.started == nil {
		t.Fatalf("outcome %+v", out)
	}
	if diff := cmp.Diff(map[string]string{"db": "deployed", "app": "deployed"}, statuses(out)); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if got, _ := os.ReadFile("ran"); string(got) != "db\napp h1\n" {
		t.Errorf("ran:\n%s", got)
	}
	st, err := state.ReadFile("hub.yaml.state")
	if err != nil || st.Status != state.StatusDeployed || st.Components["app"].Status != state.StatusDeployed {
		t.Fatalf("state %+v %v", st, err)
	}
	for _, f := range []string{"hub.yaml.elaborate", filepath.Join(out.LogDir, "plan.json"), filepath.Join(out.LogDir, "events.jsonl"), filepath.Join(out.LogDir, "summary.txt")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	if d.steps[0] != "stack/setup" {
		t.Errorf("the run should begin by recording its start: %v", d.steps)
	}

	// Unchanged: --resume runs nothing.
	out, err = (&Deploy{RunOptions{Source: Source{Manifest: "hub.yaml"}, Resume: true}}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"db": "unchanged", "app": "unchanged"}, statuses(out)); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if got, _ := os.ReadFile("ran"); string(got) != "db\napp h1\n" {
		t.Errorf("a resumed unchanged stack ran something:\n%s", got)
	}

	out, err = (&Undeploy{RunOptions{Source: Source{Manifest: "hub.yaml"}}}).Run(context.Background())
	if err != nil || out.Status != StatusOK {
		t.Fatalf("undeploy: %v %+v", err, out)
	}
	if got, _ := os.ReadFile("ran"); !strings.HasSuffix(string(got), "undeploy app\nundeploy db\n") {
		t.Errorf("undeploy order:\n%s", got)
	}
}

// TestInvalidInputWritesNothing: every problem at once, nothing run, no
// file written — no state, no workspace, no lock file.
func TestInvalidInputWritesNothing(t *testing.T) {
	dir := writeStack(t, withChanges(nil, func(f map[string]string) {
		f["hub.yaml"] = strings.Replace(f["hub.yaml"], "depends: [db]", "depends: [nope]", 1) + "lifecycle:\n  pre_flight:\n    steps:\n      - exec: [./missing.sh]\n"
	}))
	inDir(t, dir)
	_, err := (&Deploy{RunOptions{Source: Source{Manifest: "hub.yaml"}}}).Run(context.Background())
	var ie *InvalidError
	if !errors.As(err, &ie) || ie.Consequence != "nothing was run" {
		t.Fatalf("got %v", err)
	}
	for _, f := range []string{"hub.yaml.state", "hub.yaml.state.lock", ".gantry", "ran", "hub.yaml.elaborate"} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was written", f)
		}
	}
}

func TestLockedStateIsRefused(t *testing.T) {
	dir := writeStack(t, twoComponents)
	inDir(t, dir)
	held, err := state.NewFileStore("hub.yaml.state").Lock(context.Background(), state.Holder{Host: "h", PID: os.Getpid(), RunID: "other", Command: "test", Since: time.Now()}, state.LockOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	_, err = (&Deploy{RunOptions{Source: Source{Manifest: "hub.yaml"}}}).Run(context.Background())
	var le *LockedError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "gantry unlock -s hub.yaml.state") {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat("ran"); err == nil {
		t.Error("a locked run ran something")
	}
}

func TestNothingToUndeploy(t *testing.T) {
	dir := writeStack(t, twoComponents)
	inDir(t, dir)
	_, err := (&Undeploy{RunOptions{Source: Source{Manifest: "hub.yaml"}}}).Run(context.Background())
	var n *Nothing
	if !errors.As(err, &n) || !strings.Contains(n.Reason, "no state at hub.yaml.state") {
		t.Fatalf("got %v", err)
	}
}

// TestPlanRunsNothing: the plan of a deploy has every step the run would
// have, and building it writes nothing.
func TestPlanRunsNothing(t *testing.T) {
	dir := writeStack(t, twoComponents)
	inDir(t, dir)
	p, err := (&Plan{Source: Source{Manifest: "hub.yaml"}, Verb: plan.VerbDeploy}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range p.Nodes {
		ids = append(ids, n.ID)
	}
	want := []string{"stack/setup", "db/begin", "db/deploy", "db/end", "app/begin", "app/deploy", "app/end", "stack/finalize"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
	entries, _ := os.ReadDir(".")
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if diff := cmp.Diff([]string{"app", "db", "hub.yaml"}, names); diff != "" {
		t.Errorf("files after plan (-want +got):\n%s", diff)
	}
}

// TestHandlerPrepareFailureRecordsNothing: when the installation handler's
// prepare fails, no component runs, no state is written, finalize is not
// called, and the outcome names the step that stopped the run.
func TestHandlerPrepareFailureRecordsNothing(t *testing.T) {
	dir := writeStack(t, withChanges(map[string]string{
		"handler.sh": "#!/bin/sh\necho \"$1\" >> handler.log\n[ \"$1\" = prepare ] && exit 3\nexit 0\n",
	}, func(f map[string]string) {
		f["hub.yaml"] = strings.Replace(f["hub.yaml"], "meta: {name: two}", "meta:\n  name: two\n  installationHandler: {path: handler.sh}", 1)
	}))
	inDir(t, dir)
	out, err := (&Deploy{RunOptions{Source: Source{Manifest: "hub.yaml"}}}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != StatusFailed || !out.NothingRan || out.Halt == nil || out.Halt.ID != "installation-handler/prepare" {
		t.Fatalf("outcome %+v halt %+v", out, out.Halt)
	}
	if !strings.Contains(out.HaltReason(), "installation handler handler.sh prepare") {
		t.Errorf("halt reason %q", out.HaltReason())
	}
	if got, _ := os.ReadFile("handler.log"); string(got) != "prepare\n" {
		t.Errorf("handler calls:\n%s", got)
	}
	for _, f := range []string{"hub.yaml.state", "ran"} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was written", f)
		}
	}
}

// TestValidateWarnsAndCounts: validate reports missing values from the
// environment as warnings, through Warn, and counts what it checked.
func TestValidateWarnsAndCounts(t *testing.T) {
	dir := writeStack(t, withChanges(nil, func(f map[string]string) {
		f["hub.yaml"] += "parameters:\n  - name: region\n    fromEnv: GANTRY_TEST_NO_SUCH_VAR\n"
	}))
	inDir(t, dir)
	var warned manifest.Diagnostics
	v, err := (&Validate{Source: Source{Manifest: "hub.yaml"}, Warn: func(d manifest.Diagnostics) { warned = append(warned, d...) }}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if v.Components != 2 || v.Parameters != 1 || v.Stack != "two" {
		t.Errorf("got %+v", v)
	}
	if len(warned) == 0 || !strings.Contains(warned[0].String(), "region") {
		t.Errorf("warnings: %v", warned)
	}
}

func TestInvokeWantsADeployedComponent(t *testing.T) {
	dir := writeStack(t, withChanges(map[string]string{"db/backup": "#!/bin/sh\necho backup >> ../ran\n"}, func(f map[string]string) {
		f["db/hub-component.yaml"] += "lifecycle:\n  verbs: [backup]\n"
	}))
	if err := os.Chmod(filepath.Join(dir, "db/backup"), 0o755); err != nil {
		t.Fatal(err)
	}
	inDir(t, dir)
	inv := &Invoke{Source: Source{Manifest: "hub.yaml"}, Component: "db", Verb: "backup"}
	var ie *InvalidError
	if _, err := inv.Run(context.Background()); !errors.As(err, &ie) || !strings.Contains(err.Error(), "deploy the stack first") {
		t.Fatalf("before any deploy: %v", err)
	}
	if _, err := (&Deploy{RunOptions{Source: Source{Manifest: "hub.yaml"}}}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile("hub.yaml.state")
	out, err := inv.Run(context.Background())
	if err != nil || out.Status != StatusOK {
		t.Fatalf("invoke: %v %+v", err, out)
	}
	if got, _ := os.ReadFile("ran"); !strings.HasSuffix(string(got), "backup\n") {
		t.Errorf("ran:\n%s", got)
	}
	if after, _ := os.ReadFile("hub.yaml.state"); string(after) != string(before) {
		t.Error("invoke changed the state")
	}
}
