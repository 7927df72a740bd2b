package browsertest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/report"
	"github.com/gantry-dev/gantry/internal/ui"
)

// TestFailedRunReport opens the report of a run whose mandatory db failed:
// db is drawn failed and shown first, its log's failing line on top; a
// click on another component shows that one; the timeline and the search
// find what they should; and the page holds no secret.
func TestFailedRunReport(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	writeFiles(t, dir, failingStack)
	runDir := deploy(t, dir, 2)
	page := filepath.Join(runDir, report.ReportFile)
	open(t, ctx, page)

	var failed, selected int
	var details, failing string
	if err := chromedp.Run(ctx,
		chromedp.Evaluate(`document.querySelectorAll('#graph-root .node.st-failed[data-name="db"]').length`, &failed),
		chromedp.Evaluate(`document.querySelectorAll('#graph-root .node.sel[data-name="db"]').length`, &selected),
		chromedp.Text(`#details h2`, &details, chromedp.ByQuery),
		chromedp.Text(`#failing`, &failing, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	if failed != 1 || selected != 1 {
		t.Errorf("db drawn failed %d times and selected %d times, want once each", failed, selected)
	}
	if !strings.HasPrefix(details, "db") || !strings.Contains(details, "failed") {
		t.Errorf("the details show %q, want db, failed", details)
	}
	if !strings.Contains(failing, "ERROR: connection refused to db.local:5432") {
		t.Errorf("the failing lines are %q, want the line that says why", failing)
	}
	screenshot(t, ctx, "failed-run")

	// A click on a box shows that component.
	var clicked, log string
	if err := chromedp.Run(ctx,
		chromedp.Click(`#graph-root [data-name="cache"] rect`, chromedp.ByQuery),
		chromedp.WaitVisible(`#graph-root .node.sel[data-name="cache"]`, chromedp.ByQuery),
		chromedp.Text(`#details h2`, &clicked, chromedp.ByQuery),
		chromedp.Text(`#log-lines`, &log, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(clicked, "cache") || !strings.Contains(clicked, "deployed") || !strings.Contains(clicked, "optional") {
		t.Errorf("after a click on cache the details show %q", clicked)
	}
	if !strings.Contains(log, "cache warming") || !strings.Contains(log, "cache ready") {
		t.Errorf("cache's log shows %q", log)
	}
	screenshot(t, ctx, "clicked-cache")

	// The timeline has a row per component and stack group, the critical
	// path marked.
	var rows, comps, critical int
	if err := chromedp.Run(ctx,
		chromedp.Click(`#tabs button[data-tab="timeline"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#tl-rows .tl-row`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('#tl-rows .tl-row:not(.step)').length`, &rows),
		chromedp.Evaluate(`window.gantryReport.data.components.length`, &comps),
		chromedp.Evaluate(`document.querySelectorAll('#tl-rows .tl-bar.crit').length`, &critical),
	); err != nil {
		t.Fatal(err)
	}
	if rows != comps || comps < 4 || critical == 0 {
		t.Errorf("the timeline has %d component rows for %d components and groups, and %d bars on the critical path", rows, comps, critical)
	}
	screenshot(t, ctx, "timeline")

	// The search finds the failing line in the logs, and leads to it.
	var hits string
	if err := chromedp.Run(ctx,
		chromedp.Click(`#tabs button[data-tab="graph"]`, chromedp.ByQuery),
		chromedp.SendKeys(`#search`, "refused", chromedp.ByQuery),
		chromedp.WaitVisible(`#search-results .hit[data-n]`, chromedp.ByQuery),
		chromedp.Text(`#search-results`, &hits, chromedp.ByQuery),
		chromedp.Click(`#search-results .hit[data-n]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#log-lines .ln.flash`, chromedp.ByQuery),
		chromedp.Text(`#details h2`, &details, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(hits, "db:") || !strings.Contains(hits, "connection refused") {
		t.Errorf("the search shows %q", hits)
	}
	if !strings.HasPrefix(details, "db") {
		t.Errorf("the search hit led to %q, want db", details)
	}

	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "Sup3r-Secret-Pw") {
		t.Error("the report holds the secret")
	}
	var shown string
	eval(t, ctx, `document.body.innerText`, &shown)
	if strings.Contains(shown, "Sup3r-Secret-Pw") {
		t.Error("the page shows the secret")
	}
}

// TestPlanPage opens the page of a plan (gantry plan --output html): each
// component with what would happen to it, and why.
func TestPlanPage(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	writeFiles(t, dir, failingStack)
	openPlanPage(t, ctx, action.Source{Manifest: filepath.Join(dir, "hub.yaml")})
	var boxes, timelineHidden int
	var summary string
	if err := chromedp.Run(ctx,
		chromedp.Evaluate(`document.querySelectorAll('#graph-root .node.st-deploy').length`, &boxes),
		chromedp.Evaluate(`document.getElementById('tab-timeline').hidden ? 1 : 0`, &timelineHidden),
		chromedp.Click(`#tabs button[data-tab="summary"]`, chromedp.ByQuery),
		chromedp.Text(`#summary`, &summary, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	if boxes != 4 || timelineHidden != 1 {
		t.Errorf("%d boxes to deploy (want 4), timeline hidden %d (want 1)", boxes, timelineHidden)
	}
	for _, want := range []string{"what would run, and why", "db.password", "*****", "hub.yaml:"} {
		if !strings.Contains(strings.ToLower(summary), want) {
			t.Errorf("the summary lacks %q:\n%s", want, summary)
		}
	}
	screenshot(t, ctx, "plan")
}

// TestLargeRunReport opens the report of a run of 1,000 components: it is
// drawn in under 2 seconds (first paint, by the Performance API, from the
// page's navigation; the best of up to three loads), and its size is
// reported. The bound is the one the report is asked to keep (issue 18);
// the figures are logged.
func TestLargeRunReport(t *testing.T) {
	if testing.Short() {
		t.Skip("deploys 1,000 components")
	}
	ctx := browser(t)
	dir := t.TempDir()
	largeStack(t, dir, 1000)
	start := time.Now()
	runDir := deploy(t, dir, 8)
	ran := time.Since(start)
	start = time.Now()
	page, err := report.WriteRun(runDir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	written := time.Since(start)
	fi, err := os.Stat(page)
	if err != nil {
		t.Fatal(err)
	}
	var perf struct {
		FCP   float64 `json:"fcp"`
		Ready float64 `json:"ready"`
		Nodes int     `json:"nodes"`
	}
	const measure = `(() => {
		const fcp = performance.getEntriesByName('first-contentful-paint')[0];
		const ready = performance.getEntriesByName('gantry-ready')[0];
		return {fcp: fcp ? fcp.startTime : -1, ready: ready ? ready.startTime : -1,
			nodes: document.querySelectorAll('#graph-root [data-i]').length};
	})()`
	// The page is loaded up to three times and its best load counts: what
	// is measured is the page's cost, and a machine busy with other work
	// (this one is shared) only ever adds to it. Every load is logged.
	const loads = 3
	for load := 1; ; load++ {
		open(t, ctx, page)
		for {
			// first-contentful-paint is recorded once the frame is
			// presented, a moment after the page is ready: wait for it.
			eval(t, ctx, measure, &perf)
			if perf.FCP >= 0 {
				break
			}
			var ok bool
			if err := chromedp.Run(ctx, chromedp.Evaluate(`new Promise(r => requestAnimationFrame(() => r(true)))`, &ok,
				func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) })); err != nil {
				t.Fatalf("wait for a frame: %v", err)
			}
		}
		t.Logf("1,000 components, load %d: the run took %s; the report is %.1f MB (%d bytes), written in %s (from the run's folder); first contentful paint %.0f ms, drawn (gantry-ready) at %.0f ms; %d boxes drawn",
			load, ran.Round(time.Millisecond), float64(fi.Size())/(1<<20), fi.Size(), written.Round(time.Millisecond), perf.FCP, perf.Ready, perf.Nodes)
		if perf.FCP <= 2000 && perf.Ready <= 2000 || load == loads {
			break
		}
	}
	if perf.FCP > 2000 || perf.Ready > 2000 {
		t.Errorf("first paint at %.0f ms, drawn at %.0f ms at best of %d loads: want both under 2 s", perf.FCP, perf.Ready, loads)
	}
	if perf.Nodes == 0 {
		t.Error("no box is drawn")
	}
	screenshot(t, ctx, "large-run-overview")
	// It stays usable: a click on a box shows its component.
	var details string
	if err := chromedp.Run(ctx,
		chromedp.Evaluate(`window.gantryReport.select('c0500')`, nil),
		chromedp.Text(`#details h2`, &details, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(details, "c0500") {
		t.Errorf("the details show %q, want c0500", details)
	}
	screenshot(t, ctx, "large-run")
	// The timeline draws the rows in view, not a thousand.
	var rows int
	if err := chromedp.Run(ctx,
		chromedp.Click(`#tabs button[data-tab="timeline"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#tl-rows .tl-row`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll('#tl-rows .tl-row').length`, &rows),
	); err != nil {
		t.Fatal(err)
	}
	if rows == 0 || rows > 200 {
		t.Errorf("the timeline drew %d rows, want those in view", rows)
	}
	screenshot(t, ctx, "large-run-timeline")
}

// TestUndoneRunSaysWhy: a run failed by a mandatory component skipped
// after an optional one failed says why in its summary (its only failed
// component is the optional one, whose failure the run tolerates).
func TestUndoneRunSaysWhy(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"hub.yaml": `version: 1
kind: stack
meta: {name: undone}
components:
  - name: metrics
    source: {dir: broken}
  - name: dashboards
    source: {dir: ok}
    depends: [metrics]
lifecycle:
  optional: [metrics]
`,
		"broken/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: broken}\n",
		"broken/deploy":             "#!/bin/sh\necho broken >&2\nexit 2\n",
		"ok/hub-component.yaml":     "version: 1\nkind: component\nmeta: {name: ok}\n",
		"ok/deploy":                 "#!/bin/sh\necho ok\n",
	})
	runDir := deploy(t, dir, 2)
	open(t, ctx, filepath.Join(runDir, report.ReportFile))
	var summary string
	if err := chromedp.Run(ctx,
		chromedp.Click(`#tabs button[data-tab="summary"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#summary p.why`, chromedp.ByQuery),
		chromedp.Text(`#summary p.why`, &summary, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	if want := "The run failed: mandatory components were skipped because an optional one they wait for failed, so the deploy did not do them: dashboards: metrics failed"; summary != want {
		t.Errorf("the summary says %q, want %q", summary, want)
	}
	var failedRows string
	eval(t, ctx, `document.querySelector('#summary table').innerText`, &failedRows)
	if !strings.Contains(failedRows, "metrics optional: tolerated") {
		t.Errorf("the failed table says %q, want metrics marked optional: tolerated", failedRows)
	}
}

// TestUnfinishedRunSaysWhatIsKnown: the report of a run with no end does
// not say how long it took: killed, it was last heard of then; still
// running (its gantry alive), that much so far, and it has not kept its
// parameters yet (its gantry is not "gone").
func TestUnfinishedRunSaysWhatIsKnown(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"hub.yaml":              "version: 1\nkind: stack\nmeta: {name: cut}\ncomponents:\n  - name: a\n    source: {dir: ok}\n",
		"ok/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: ok}\n",
		"ok/deploy":             "#!/bin/sh\necho ok\n",
	})
	runDir := deploy(t, dir, 1)
	// As a kill leaves it: no end event, no parameters.
	events := filepath.Join(runDir, report.EventsFile)
	b, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if !strings.Contains(l, `"run_finished"`) {
			kept = append(kept, l)
		}
	}
	if err := os.WriteFile(events, []byte(strings.Join(kept, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(runDir, report.ParamsFile)); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	for _, tc := range []struct {
		name, header, params string
		pid                  int
	}{
		{"killed", "ended without finishing (killed or crashed), last heard of ", "its gantry was gone before", 0},
		{"running", fmt.Sprintf("still running (gantry pid %d on %s), ", os.Getpid(), host), "has kept no parameters yet", os.Getpid()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := ui.WriteRunTag(runDir, ui.RunTag{State: "hub.yaml.state", PID: tc.pid, Host: host}); err != nil {
				t.Fatal(err)
			}
			m, err := report.LoadRun(runDir)
			if err != nil {
				t.Fatal(err)
			}
			page := filepath.Join(t.TempDir(), "report.html")
			if err := report.WriteFile(page, m); err != nil {
				t.Fatal(err)
			}
			open(t, ctx, page)
			var header, params string
			eval(t, ctx, `document.getElementById('h-facts').innerText`, &header)
			if !strings.Contains(header, tc.header) || strings.Contains(header, "took") {
				t.Errorf("the header says %q, want %q and no 'took'", header, tc.header)
			}
			if err := chromedp.Run(ctx, chromedp.Click(`#tabs button[data-tab="summary"]`, chromedp.ByQuery)); err != nil {
				t.Fatal(err)
			}
			eval(t, ctx, `document.getElementById('summary').innerText`, &params)
			if !strings.Contains(params, tc.params) {
				t.Errorf("the summary says %q, want %q", params, tc.params)
			}
		})
	}
}

// TestWarningsAreCounted: steps that failed and the run went on (on_fail:
// [warn, next]) are counted in the header and listed in the summary with
// their warnings; they were only in each component's step table.
func TestWarningsAreCounted(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"hub.yaml": "version: 1\nkind: stack\nmeta: {name: warned}\ncomponents:\n  - name: api\n    source: {dir: api}\n",
		"api/hub-component.yaml": `version: 1
kind: component
meta: {name: api}
lifecycle:
  post_instance_create:
    steps:
      - exec:
          arguments: [sh, -c, "exit 3"]
          label: verify api
          on_fail: [warn, next]
`,
		"api/deploy": "#!/bin/sh\necho deployed\n",
	})
	runDir := deploy(t, dir, 1)
	open(t, ctx, filepath.Join(runDir, report.ReportFile))
	var header, summary string
	eval(t, ctx, `document.getElementById('h-facts').innerText`, &header)
	if !strings.Contains(header, "1 warning") {
		t.Errorf("the header says %q, want 1 warning", header)
	}
	if err := chromedp.Run(ctx, chromedp.Click(`#tabs button[data-tab="summary"]`, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	eval(t, ctx, `document.getElementById('summary').innerText`, &summary)
	if !strings.Contains(summary, "WARNINGS") || !strings.Contains(summary, "verify api") || !strings.Contains(summary, "exited with status 3") {
		t.Errorf("the summary says %q, want a Warnings table with verify api's failure", summary)
	}
}
