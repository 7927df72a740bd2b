package helm

import (
	"path/filepath"
	"testing"
)

// TestResolveSameChartAtPlanAndRun: the plan and the run pick the same
// chart: HELM_REPO and HELM_CHART_VERSION, which the plan does not read,
// go with HELM_CHART only, never with a chart the config names.
func TestResolveSameChartAtPlanAndRun(t *testing.T) {
	dir := t.TempDir()
	local := writeChart(t, filepath.Join(t.TempDir(), "here"), "here", "0.1.0")
	env := []string{"HELM_CHART=hubchart", "HELM_REPO=https://hub.example.com", "HELM_CHART_VERSION=9.9.9"}
	tests := []struct {
		name string
		dir  string
		cfg  config
		// plan and run are the refs the plan and the run resolve; a
		// zero plan means the plan defers.
		plan, run chartRef
	}{
		{
			name: "chart with no version or repo",
			dir:  dir,
			cfg:  config{Chart: "web"},
			plan: chartRef{Name: "web"}, run: chartRef{Name: "web"},
		},
		{
			name: "chart with a repo, no version",
			dir:  dir,
			cfg:  config{Chart: "web", Repo: "https://charts.example.com"},
			plan: chartRef{Name: "web", Repo: "https://charts.example.com"},
			run:  chartRef{Name: "web", Repo: "https://charts.example.com"},
		},
		{
			name: "chart with a version",
			dir:  dir,
			cfg:  config{Chart: "web", Version: "1.0.0"},
			plan: chartRef{Name: "web", Version: "1.0.0"}, run: chartRef{Name: "web", Version: "1.0.0"},
		},
		{
			name: "the component folder's chart",
			dir:  local,
			plan: chartRef{Name: "."}, run: chartRef{Name: "."},
		},
		{
			name: "the Hub's variables",
			dir:  dir,
			run:  chartRef{Name: "hubchart", Repo: "https://hub.example.com", Version: "9.9.9"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := resolve(tt.dir, "web", tt.cfg, nil, false)
			if err != nil {
				t.Fatal(err)
			}
			run, err := resolve(tt.dir, "web", tt.cfg, env, true)
			if err != nil {
				t.Fatal(err)
			}
			if (tt.plan == chartRef{}) != (plan.deferred != "") || tt.plan != (chartRef{}) && plan.ref != tt.plan {
				t.Errorf("plan: %+v (deferred %q); want %+v", plan.ref, plan.deferred, tt.plan)
			}
			if run.ref != tt.run {
				t.Errorf("run: %+v; want %+v", run.ref, tt.run)
			}
		})
	}
}
