package helm

import (
	"path/filepath"
	"testing"

	"github.com/gantry-dev/gantry/internal/manifest"
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

// TestKnownRelease: the plan knows which release it looks for only when
// neither the config nor, where the config leaves a field out, a
// parameter of the component that the run reads instead names it.
func TestKnownRelease(t *testing.T) {
	param := func(name, env string) manifest.Parameter { return manifest.Parameter{Name: name, Env: env} }
	tests := []struct {
		name   string
		cfg    config
		params []manifest.Parameter
		want   bool
	}{
		{"all written out", config{Release: "web", Namespace: "shop"}, nil, true},
		{"release a reference", config{Release: "${name}", Namespace: "shop"}, nil, false},
		{"namespace a reference", config{Release: "web", Namespace: "${ns}"}, nil, false},
		{"kubeconfig a reference", config{Release: "web", Kubeconfig: "${kc}"}, nil, false},
		{"unrelated parameters", config{}, []manifest.Parameter{param("replicas", "REPLICAS")}, true},
		{"the Hub's namespace parameter", config{Release: "web"}, []manifest.Parameter{param("namespace", "")}, false},
		{"namespace exported as NAMESPACE", config{Release: "web"}, []manifest.Parameter{param("app.ns", "NAMESPACE")}, false},
		{"the config's namespace wins", config{Release: "web", Namespace: "shop"}, []manifest.Parameter{param("namespace", "NAMESPACE")}, true},
		{"release from COMPONENT_NAME", config{Namespace: "shop"}, []manifest.Parameter{param("component.name", "COMPONENT_NAME")}, false},
		{"the config's release wins", config{Release: "web", Namespace: "shop"}, []manifest.Parameter{param("component.name", "COMPONENT_NAME")}, true},
		{"kubeconfig parameter", config{Release: "web", Namespace: "shop"}, []manifest.Parameter{param("kubeconfig", "")}, false},
		{"kubeconfig exported", config{Release: "web", Namespace: "shop"}, []manifest.Parameter{param("kube.file", "KUBECONFIG")}, false},
		{"context parameter", config{Release: "web", Namespace: "shop"}, []manifest.Parameter{param("context", "")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := instance{cfg: tt.cfg, release: tt.cfg.Release, namespace: tt.cfg.Namespace}
			if in.release == "" {
				in.release = "app"
			}
			if got := knownRelease(in, tt.params); got != tt.want {
				t.Errorf("knownRelease = %v, want %v", got, tt.want)
			}
		})
	}
}
