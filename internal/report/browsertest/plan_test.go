package browsertest

import (
	"context"
	"path/filepath"

	"github.com/gantry-dev/gantry/internal/action"
	"github.com/gantry-dev/gantry/internal/plan"
	"github.com/gantry-dev/gantry/internal/report"
)

// planModel is the page gantry plan --output html writes for the stack in
// dir.
func planModel(dir string) (*report.Model, error) {
	return (&action.Plan{Source: action.Source{Manifest: filepath.Join(dir, "hub.yaml")}, Verb: plan.VerbDeploy}).Report(context.Background())
}
