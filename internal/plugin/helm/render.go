package helm

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"helm.sh/helm/v4/pkg/chart/common"
	cutil "helm.sh/helm/v4/pkg/chart/common/util"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/gantry-dev/gantry/internal/plugin/kubernetes"
)

// renderRequest is what a chart is rendered with.
type renderRequest struct {
	chart              *chart.Chart
	values             map[string]any
	release, namespace string
	revision           int
	upgrade            bool
	// caps are the cluster's at run time; at plan time Helm's defaults
	// (common.DefaultCapabilities itself), against which the chart's
	// kubeVersion is not checked.
	caps *common.Capabilities
	// plan is set for the plan's render: the values schema is checked
	// without the unknown values, the values not known yet (which hold
	// references and unrendered templates' text), and without fetching the
	// schemas it refers to by URL (checkSchema); prepare checks the real
	// values, as Helm does.
	plan    bool
	unknown []valuePath
	// rc lets templates look objects up in the cluster (Helm's lookup);
	// nil at plan time, when lookup finds nothing, as in helm template.
	rc *rest.Config
}

// rendered is a chart rendered: the documents the stage engine deploys,
// and what Helm's release record keeps of them.
type rendered struct {
	docs     []kubernetes.Document
	manifest string
	hooks    []*rspb.Hook
	notes    string
}

// render renders a chart as helm install or helm upgrade would: its
// dependencies enabled by their conditions, the values checked against the
// chart's schema, the templates executed, NOTES.txt kept apart, the CRDs
// of crds/ (the chart's and its dependencies') first.
func render(ctx context.Context, r renderRequest) (*rendered, error) {
	ch := r.chart
	// The default capabilities (the plan's) are Helm's guess, not the
	// cluster's version: only the cluster's (prepare's) can refuse a chart.
	if v := ch.Metadata.KubeVersion; v != "" && r.caps != common.DefaultCapabilities && !chartutil.IsCompatibleRange(v, r.caps.KubeVersion.String()) {
		return nil, fmt.Errorf("chart %s needs Kubernetes %s; the cluster runs %s", ch.Name(), v, r.caps.KubeVersion.Version)
	}
	if err := missingDependencies(ch); err != nil {
		return nil, fmt.Errorf("chart %s: %w; run helm dependency build", ch.Name(), err)
	}
	if err := chartutil.ProcessDependencies(ch, r.values); err != nil {
		return nil, fmt.Errorf("chart %s: dependencies: %w", ch.Name(), err)
	}
	opts := common.ReleaseOptions{Name: r.release, Namespace: r.namespace, Revision: r.revision, IsInstall: !r.upgrade, IsUpgrade: r.upgrade}
	vals, err := cutil.ToRenderValuesWithSchemaValidation(ch, r.values, opts, r.caps, r.plan)
	if err == nil && r.plan {
		err = checkSchema(ch, vals["Values"].(common.Values).AsMap(), r.unknown)
	}
	if err != nil {
		return nil, fmt.Errorf("chart %s: %s", ch.Name(), flat(err))
	}
	var e engine.Engine
	if r.rc != nil {
		e = engine.New(r.rc)
	}
	files, err := e.RenderWithContext(ctx, ch, vals)
	if err != nil {
		return nil, fmt.Errorf("render chart %s: %s", ch.Name(), flat(err))
	}
	out := &rendered{}
	var notes []string
	names := make([]string, 0, len(files))
	for name, text := range files {
		switch {
		case strings.HasSuffix(name, "/NOTES.txt"):
			if name == path.Join(ch.Name(), "templates", "NOTES.txt") {
				notes = append(notes, text)
			}
			delete(files, name)
		case strings.TrimSpace(text) == "":
			delete(files, name)
		default:
			names = append(names, name)
		}
	}
	slices.Sort(names)
	out.notes = strings.Join(notes, "\n")
	for _, crd := range ch.CRDObjects() {
		out.docs = append(out.docs, kubernetes.Document{Name: crd.Filename, Data: crd.File.Data, CRD: true})
	}
	for _, name := range names {
		out.docs = append(out.docs, kubernetes.Document{Name: name, Data: []byte(files[name])})
	}
	hooks, manifests, err := releaseutil.SortManifests(files, r.caps.APIVersions, releaseutil.InstallOrder)
	if err != nil {
		return nil, fmt.Errorf("chart %s: %w", ch.Name(), err)
	}
	out.hooks = hooks
	var b strings.Builder
	for _, m := range manifests {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", m.Name, m.Content)
	}
	out.manifest = b.String()
	return out, nil
}

// missingDependencies names the dependencies Chart.yaml lists that are not
// in the chart's charts/ folder, which helm install refuses too.
func missingDependencies(ch *chart.Chart) error {
	var missing []string
	for _, r := range ch.Metadata.Dependencies {
		if !slices.ContainsFunc(ch.Dependencies(), func(d *chart.Chart) bool { return d.Name() == r.Name }) {
			missing = append(missing, r.Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("found in Chart.yaml, but missing in charts/: %s", strings.Join(missing, ", "))
	}
	return nil
}

// flat puts a Helm error on one line: its messages run over several, and
// every line of a plugin's error is a problem of its own to the plan.
func flat(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// capabilities are the cluster's, for .Capabilities: its version and the
// API versions and kinds it serves.
func capabilities(dc discovery.DiscoveryInterface) (*common.Capabilities, error) {
	v, err := dc.ServerVersion()
	if err != nil {
		return nil, fmt.Errorf("ask the cluster its version: %w", err)
	}
	_, lists, err := dc.ServerGroupsAndResources()
	if err != nil && !discovery.IsGroupDiscoveryFailedError(err) {
		return nil, fmt.Errorf("ask the cluster what it serves: %w", err)
	}
	set := common.VersionSet{}
	for _, l := range lists {
		set = append(set, l.GroupVersion)
		for _, res := range l.APIResources {
			set = append(set, l.GroupVersion+"/"+res.Kind)
		}
	}
	return &common.Capabilities{
		KubeVersion: common.KubeVersion{Version: v.GitVersion, Major: v.Major, Minor: v.Minor},
		APIVersions: set,
		HelmVersion: common.DefaultCapabilities.HelmVersion,
	}, nil
}
