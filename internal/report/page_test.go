package report

import (
	"bytes"
	"encoding/json"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/ui"
)

// dataOf finds the model a page embeds.
func dataOf(t *testing.T, page string) *Model {
	t.Helper()
	re := regexp.MustCompile(`(?s)<script type="application/json" id="gantry-data">(.*?)</script>`)
	m := re.FindStringSubmatch(page)
	if m == nil {
		t.Fatal("the page embeds no data")
	}
	var model Model
	if err := json.Unmarshal([]byte(m[1]), &model); err != nil {
		t.Fatalf("the page's data: %v", err)
	}
	return &model
}

// TestWriteRun: the report of a run is one page with everything inline —
// no address it would fetch — its data the run's, and no secret in it.
func TestWriteRun(t *testing.T) {
	dir, _ := fakeRun(t)
	path, err := WriteRun(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if path != filepath.Join(dir, ReportFile) {
		t.Errorf("written to %s", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, s := range []string{fakeSecret, "T0ken-Value"} {
		if strings.Contains(page, s) {
			t.Errorf("the report holds the secret %q", s)
		}
	}
	for _, bad := range []string{`src="http`, `href="http`, "<link", "@import", "url(http", "fetch("} {
		if strings.Contains(page, bad) {
			t.Errorf("the report would fetch something: %q", bad)
		}
	}
	for _, want := range []string{"<!DOCTYPE html>", "Content-Security-Policy", "default-src 'none'", "<style>", "gantryReport", "<title>shop — deploy failed (run 20260101T000000Z-abcdef) — gantry</title>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	m := dataOf(t, page)
	if m.Stack != "shop" || len(m.Components) != 5 || m.Components[1].Status != "failed" {
		t.Errorf("embedded data: %s, %d components", m.Stack, len(m.Components))
	}
}

// TestWriteEscapesLogs: a log line that looks like the end of the data's
// script element cannot end it, and markup in it stays text.
func TestWriteEscapesLogs(t *testing.T) {
	p := plan.New(`<b>stack</b>`, plan.VerbDeploy)
	p.Add(&plan.Node{ID: "a/deploy", Kind: plan.KindComponent, Label: "deploy a", Component: "a", Group: "a", Spec: plan.Verb{Component: "a", Verb: "deploy"}})
	m := FromPlan(p, nil)
	evil := `</script><script>alert(1)</script><!--`
	m.Components[0].Log = &Log{Lines: []string{evil}, Total: 1}
	var b bytes.Buffer
	if err := Write(&b, m); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Count(page, "</script>") != 2 || strings.Contains(page, "<script>alert") {
		t.Errorf("a log line broke out of the data:\n%s", page[strings.Index(page, "gantry-data"):][:300])
	}
	if !strings.Contains(page, "<title>"+html.EscapeString(`<b>stack</b>`)) {
		t.Error("the title is not escaped")
	}
	if got := dataOf(t, page).Components[0].Log.Lines[0]; got != evil {
		t.Errorf("the line reads back as %q", got)
	}
}

// TestFromPlan: before a run the page shows what would happen: each
// component's action, no times, the plan's statuses.
func TestFromPlan(t *testing.T) {
	p := fakePlan(t)
	p.Components["api"].Action, p.Components["api"].Reason = "skip", "requires x, which nothing provides (optional requirement)"
	for _, n := range p.Nodes {
		if n.Component == "api" && n.Kind == plan.KindComponent {
			n.Action = "skip"
		}
	}
	m := FromPlan(p, &Params{Stack: []Param{{Name: "a", Value: "b"}}, Components: map[string][]Param{"db": {{Name: "x", Value: "y"}}}})
	if m.Kind != KindPlan || m.Run != "" || m.Status != "" || len(m.Critical) != 0 {
		t.Errorf("a plan's page: kind %s run %q status %q critical %v", m.Kind, m.Run, m.Status, m.Critical)
	}
	for _, c := range m.Components {
		if c.Start != -1 || c.End != -1 || c.Log != nil {
			t.Errorf("%s has times or a log before running", c.Name)
		}
		if !c.Group && c.Status != c.Action {
			t.Errorf("%s: status %q, want its action %q", c.Name, c.Status, c.Action)
		}
	}
	if api := m.Components[2]; api.Status != "skip" || !strings.Contains(api.Reason, "optional requirement") {
		t.Errorf("api: %+v", api)
	}
	if !m.ParamsKept || len(m.Params) != 1 || len(m.Components[1].Params) != 1 {
		t.Errorf("parameters: %+v", m.Params)
	}
	if m.Components[4].Name != "pre-flight" || !m.Components[4].Group || m.Components[4].Status != ui.Waiting && m.Components[4].Status != "" {
		t.Errorf("the pre-flight group: %+v", m.Components[4])
	}
}
