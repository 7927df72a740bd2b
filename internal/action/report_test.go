package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/report"
	"github.com/gantry-dev/gantry/internal/secret"
	"github.com/gantry-dev/gantry/internal/ui"
	"github.com/gantry-dev/gantry/internal/workspace"
)

func TestLinkOf(t *testing.T) {
	tests := []struct {
		up, reason string
		want       plan.Link
	}{
		{"db", "depends", plan.Link{Kind: plan.LinkDepends}},
		{"k8s", "requires kubernetes", plan.Link{Kind: plan.LinkProvides, What: "kubernetes"}},
		{"a", "requires helm, which an earlier component may provide", plan.Link{Kind: plan.LinkProvides, What: "helm", Maybe: true}},
		{"db", "uses db:host", plan.Link{Kind: plan.LinkOutput, What: "host"}},
		{"db", "uses other:host", plan.Link{Kind: plan.LinkOutput, What: "other:host"}},
		{"db", "uses db.url", plan.Link{Kind: plan.LinkOutput, What: "db.url"}},
		{"x", "something new", plan.Link{Kind: plan.LinkAfter, What: "something new"}},
	}
	for _, tt := range tests {
		if got := linkOf(tt.up, tt.reason); got != tt.want {
			t.Errorf("linkOf(%q, %q) = %+v, want %+v", tt.up, tt.reason, got, tt.want)
		}
	}
}

// secretStack has a secret parameter the first component prints, an
// output of it the second reads, and a secret output.
var secretStack = map[string]string{
	"hub.yaml": `version: 1
kind: stack
meta: {name: two}
components:
  - name: db
    source: {dir: db}
  - name: app
    source: {dir: app}
parameters:
  - name: db.password
    value: Sup3r-Secret-Pw
`,
	"db/hub-component.yaml":  "version: 1\nkind: component\nmeta: {name: db}\nparameters:\n  - name: db.password\n    env: PW\noutputs:\n  - name: db.host\n  - name: db.token\n    kind: secret\n",
	"db/deploy":              "#!/bin/sh\necho \"password $PW\"\nprintf 'Outputs:\\ndb.host = h1\\ndb.token = T0ken-From-0utput\\n\\n'\n",
	"app/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: app}\nparameters:\n  - name: db.host\n    env: DB_HOST\n",
	"app/deploy":             "#!/bin/sh\necho app $DB_HOST\n",
}

// TestRunWritesItsReport: a run keeps its parameters and writes its
// report next to its logs, secrets masked in both; the plan says why app
// runs after db (it reads db's output).
func TestRunWritesItsReport(t *testing.T) {
	dir := writeStack(t, secretStack)
	inDir(t, dir)
	out, err := (&Deploy{RunOptions{Source: Source{Manifest: "hub.yaml"}}}).Run(context.Background())
	if err != nil || out.Status != StatusOK {
		t.Fatalf("deploy: %v %+v", err, out)
	}
	if diff := cmp.Diff(map[string][]plan.Link{"db": {{Kind: plan.LinkOutput, What: "db.host"}}}, out.Plan.Components["app"].Links); diff != "" {
		t.Errorf("app's links (-want +got):\n%s", diff)
	}
	for _, f := range []string{report.ReportFile, report.ParamsFile} {
		b, err := os.ReadFile(filepath.Join(out.LogDir, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"Sup3r-Secret-Pw", "T0ken-From-0utput"} {
			if strings.Contains(string(b), s) {
				t.Errorf("%s holds the secret %s", f, s)
			}
		}
	}
	b, _ := os.ReadFile(filepath.Join(out.LogDir, report.ParamsFile))
	var ps report.Params
	if err := json.Unmarshal(b, &ps); err != nil {
		t.Fatal(err)
	}
	want := map[string][]report.Param{
		"db":  {{Name: "db.password", Value: secret.Mask, Source: "hub.yaml:10", Env: "PW", Secret: true}},
		"app": {{Name: "db.host", Value: "h1", Source: "output:db", Env: "DB_HOST"}},
	}
	if diff := cmp.Diff(want, ps.Components); diff != "" {
		t.Errorf("the components' parameters (-want +got):\n%s", diff)
	}
	if out.Heard == nil || out.Heard.Params == nil {
		t.Error("the run did not hand the report the parameters it kept: the report read them back")
	}
	m, err := report.LoadRun(out.LogDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Edges) != 1 || m.Edges[0].Label != "output db.host" {
		t.Errorf("the report's ties: %+v", m.Edges)
	}
}

// TestPlanReport: the page of a plan has each component's parameters as
// they would be, outputs not known yet pending, secrets masked.
func TestPlanReport(t *testing.T) {
	dir := writeStack(t, secretStack)
	inDir(t, dir)
	m, err := (&Plan{Source: Source{Manifest: "hub.yaml"}, Verb: plan.VerbDeploy}).Report(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind != report.KindPlan || len(m.Components) < 2 {
		t.Fatalf("model %+v", m)
	}
	got := map[string][]report.Param{}
	for _, c := range m.Components {
		if !c.Group {
			got[c.Name] = c.Params
		}
	}
	want := map[string][]report.Param{
		"db":  {{Name: "db.password", Value: secret.Mask, Source: "hub.yaml:10", Env: "PW", Secret: true}},
		"app": {{Name: "db.host", Value: "(pending output of db)", Source: "output:db", Env: "DB_HOST"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parameters (-want +got):\n%s", diff)
	}
}

// TestVeryLargeRunsWriteTheirReportWhenAsked: past autoReportMax
// components a run keeps its parameters but leaves its report to gantry
// report.
func TestVeryLargeRunsWriteTheirReportWhenAsked(t *testing.T) {
	dir := t.TempDir()
	p := plan.New("big", plan.VerbDeploy)
	for i := 0; i <= autoReportMax; i++ {
		name := fmt.Sprintf("c%05d", i)
		p.Components[name] = &plan.Component{Name: name}
	}
	writeReport(&Stack{}, &built{masker: secret.NewMasker()}, &Outcome{Plan: p, LogDir: dir, RunID: "r"})
	if _, err := os.Stat(filepath.Join(dir, report.ParamsFile)); err != nil {
		t.Errorf("no parameters kept: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, report.ReportFile)); err == nil {
		t.Error("a run of more than autoReportMax components wrote its report")
	}
}

// TestRecordHearsOnlyFreshRuns: a run's record keeps its logs for the
// report (Outcome.Heard) when it started the run's folder; a run attached to
// again (its client died) appends to logs it did not hear, and its report
// reads them from the folder.
func TestRecordHearsOnlyFreshRuns(t *testing.T) {
	ws := workspace.Workspace{Root: t.TempDir()}
	p := plan.New("s", plan.VerbDeploy)
	for i, want := range []bool{true, false} {
		rec, err := openRecord(ws, "run-1", ui.RunTag{}, p, secret.NewMasker(), nil)
		if err != nil {
			t.Fatal(err)
		}
		rec.runLog.Log(&plan.Node{ID: "c/deploy", Group: "c"}, fmt.Sprintf("line of opening %d", i), time.Now())
		out := rec.close(nil)
		if got := out.Heard != nil; got != want {
			t.Errorf("opening %d: logs heard %v, want %v", i, got, want)
		}
	}
}

// TestRecordCloseStatus: a run that ended with an error before or after its
// plan (another run's registry, the state not written) is recorded failed,
// though none of its steps failed; an interrupt still says interrupted.
func TestRecordCloseStatus(t *testing.T) {
	ws := workspace.Workspace{Root: t.TempDir()}
	p := plan.New("s", "backup")
	for _, tc := range []struct {
		name      string
		err       error
		cancelled bool
		want      string
	}{
		{"plan ran", nil, false, StatusOK},
		{"error around the plan", errors.New("process registry: resource temporarily unavailable"), false, StatusFailed},
		{"interrupted", errors.New("interrupted"), true, StatusInterrupted},
	} {
		rec, err := openRecord(ws, "run-"+strings.ReplaceAll(tc.name, " ", "-"), ui.RunTag{}, p, secret.NewMasker(), nil)
		if err != nil {
			t.Fatal(err)
		}
		rec.engine.Cancelled = tc.cancelled
		if got := rec.close(tc.err).Status; got != tc.want {
			t.Errorf("%s: status %q, want %q", tc.name, got, tc.want)
		}
	}
}
