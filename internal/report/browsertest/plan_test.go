package browsertest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/report"
)

// openPlanPage writes the page gantry plan --output html writes for a
// deploy of src, as plan.html beside its manifest, opens it and returns
// its path.
func openPlanPage(t *testing.T, ctx context.Context, src action.Source) string {
	t.Helper()
	m, err := (&action.Plan{Source: src, Verb: plan.VerbDeploy}).Report(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(filepath.Dir(src.Manifest), "plan.html")
	if err := report.WriteFile(page, m); err != nil {
		t.Fatal(err)
	}
	open(t, ctx, page)
	return page
}

// TestNestedPlanPage opens the page of examples/nested's plan: a leaf of
// the nested stack web says where it is nested, and the secret resource
// the params file registers shows nowhere.
func TestNestedPlanPage(t *testing.T) {
	ctx := browser(t)
	dir := filepath.Join(t.TempDir(), "nested")
	if err := os.CopyFS(dir, os.DirFS("../../../examples/nested")); err != nil {
		t.Fatal(err)
	}
	page := openPlanPage(t, ctx, action.Source{Manifest: filepath.Join(dir, "hub.yaml"), ParamsFiles: []string{filepath.Join(dir, "params.yaml")}})
	var facts, shown string
	if err := chromedp.Run(ctx,
		chromedp.Evaluate(`window.gantryReport.select('web.proxy')`, nil),
		chromedp.Text(`#details dl.facts`, &facts, chromedp.ByQuery),
		chromedp.Evaluate(`document.body.innerText`, &shown),
	); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(facts, "nested in") || !strings.Contains(facts, "nested stack, up to shop") {
		t.Errorf("web.proxy's facts are %q, want where it is nested", facts)
	}
	screenshot(t, ctx, "nested-plan")
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "s3cret-for-the-demo") || strings.Contains(shown, "s3cret-for-the-demo") {
		t.Error("the page holds the secret resource's value")
	}
}
