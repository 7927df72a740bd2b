package helm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"

	"github.com/gantry-dev/gantry/internal/manifest"
	"github.com/gantry-dev/gantry/internal/plugin"
	"github.com/gantry-dev/gantry/internal/plugin/kubernetes"
)

func init() { plugin.Register("helm", kubernetes.NewPlugin(charts{}), plugin.ForLists) }

// charts is the helm plugin's source for the stage engine.
type charts struct{}

// instance is what an action of an instance works with once its config,
// and at run time its environment, are read.
type instance struct {
	cfg                config
	ref                chartRef
	chartHere          bool
	release, namespace string
	// deferred says why the plan cannot render the chart (it is named by
	// a parameter); "" when it can.
	deferred string
}

// resolve reads what an instance deploys. env is the component's
// environment at run time, nil at plan time.
func resolve(dir, component string, cfg config, env []string, run bool) (instance, error) {
	in := instance{cfg: cfg, release: cfg.Release, namespace: cfg.Namespace}
	get := func(name string) string {
		if !run {
			return ""
		}
		return kubernetes.EnvValue(env, name)
	}
	in.ref = chartRef{Name: cfg.Chart, Repo: cfg.Repo, Version: cfg.Version}
	switch {
	case cfg.Chart != "":
	case fileExists(filepath.Join(dir, "Chart.yaml")):
		in.ref.Name, in.chartHere = ".", true
	case run:
		in.ref = chartRef{Name: get("HELM_CHART"), Repo: get("HELM_REPO"), Version: get("HELM_CHART_VERSION")}
		if in.ref.Name == "" {
			return in, errors.New("no chart: the component folder has no Chart.yaml, the config names no chart, and HELM_CHART is not set (the Hub's way: a parameter with env: HELM_CHART)")
		}
	default:
		in.deferred = "the chart is named by the component's HELM_CHART"
	}
	// HELM_REPO and HELM_CHART_VERSION go with HELM_CHART only: a chart
	// the config names is the config's (version:, repo:), which the plan
	// reads as the run does, so that both find the same chart.
	if cfg.Chart == "." {
		in.chartHere = true
	}
	if kubernetes.HasRef(in.ref.Name) || kubernetes.HasRef(in.ref.Version) || kubernetes.HasRef(in.ref.Repo) {
		in.deferred = "the chart is named by parameters"
	}
	if in.release == "" {
		in.release = get("COMPONENT_NAME")
	}
	if in.release == "" {
		in.release = component
	}
	if !kubernetes.HasRef(in.release) {
		if err := chartutil.ValidateReleaseName(in.release); err != nil {
			return in, fmt.Errorf("release name %q: %v", in.release, err)
		}
	}
	return in, nil
}

// Plan renders the chart for the plan with the values as written: values
// files' templates unrendered, references in set as text, the default
// capabilities and no cluster lookups (helm template's view); the values
// schema is checked without the values these leave unknown.
func (charts) Plan(req plugin.StagesRequest) (*kubernetes.Rendered, error) {
	cfg, err := parseConfig(req.Entry.Config)
	if err != nil {
		return nil, err
	}
	in, err := resolve(req.Dir, req.Component, cfg, nil, false)
	if err != nil {
		return nil, err
	}
	// Without a release in the config, the release is named when the
	// instance runs (COMPONENT_NAME, which a parameter may set).
	name := "the helm release"
	if cfg.Release != "" {
		name = "helm release " + cfg.Release
	}
	out := &kubernetes.Rendered{Finish: "record " + name, What: "the rendered chart's objects"}
	if req.Action == plugin.ActionDelete {
		out.Finish = "remove " + name + " and its history"
	}
	// Read even when the chart is not known yet: a values file the run
	// will not find is an error now.
	read, err := readValues(req.Dir, valuesFiles(req.Dir, cfg, in.chartHere), cfg.Values == nil, newPlanView(req.Dir, req.Templates))
	if err != nil {
		return out, err
	}
	for _, w := range read.skipped {
		warnOnce(req.Component, w)
	}
	vals, unknown := read.values, read.unknown
	if in.deferred != "" {
		out.Deferred = in.deferred
		return out, nil
	}
	path, err := locate(req.Dir, in.ref)
	if err != nil {
		return out, err
	}
	ch, err := loadChart(path)
	if err != nil {
		return out, err
	}
	vals = mergeValues(vals, cfg.Set)
	unknown = append(unknown, pathsHolding(vals, kubernetes.HasRef)...)
	recorded := kubernetes.Upgrading(req.Recorded)
	if req.Action != plugin.ActionDeploy {
		out.Upgrade = recorded
	} else {
		// A deploy upgrades a release Helm's storage has deployed, and
		// installs one it does not have, whatever the state says (Open):
		// the plan asks the cluster. Where it cannot look (a parameter
		// names the release, its namespace or cluster) or cannot reach
		// the cluster, the run may find either: a release helm installed,
		// one a component that left the stack deployed, or a recorded one
		// whose namespace was deleted.
		hist, looked := []*rspb.Release(nil), false
		known := knownRelease(in, req.Parameters)
		if known {
			hist, looked = releaseHistory(req.Dir, in)
		}
		out.Upgrade = looked && upgrades(hist)
		out.UpgradeUnknown = !looked
		if !looked && recorded && known {
			warnOnce(req.Component, fmt.Sprintf("cannot reach the cluster to read the history of %s: the plan has the hooks of both an install and an upgrade", name))
		}
		if looked && recorded && len(hist) == 0 {
			warnOnce(req.Component, fmt.Sprintf("%s is recorded in the state but helm's storage has no revision of it (was its namespace deleted?): the deploy installs it again, with its install hooks", name))
		}
	}
	ns := in.namespace
	if ns == "" {
		ns = "default"
	}
	r, err := render(context.Background(), renderRequest{chart: ch, values: vals, release: in.release, namespace: ns,
		revision: 1, upgrade: out.Upgrade, caps: common.DefaultCapabilities, plan: true, unknown: unknown})
	if err != nil {
		return out, relative(err, req.Dir, path)
	}
	out.Documents = r.docs
	return out, nil
}

// Claim is the release a deploy of the instance claims, when the entry
// names it, its namespace and its cluster without parameters: the plan
// refuses two components of a stack that deploy one release. A release
// named by COMPONENT_NAME, or in the namespace of the environment, is
// checked when the instance runs (ownership.shared).
func (charts) Claim(req plugin.StagesRequest) string {
	cfg, err := parseConfig(req.Entry.Config)
	if err != nil || cfg.Release == "" || cfg.Namespace == "" || cfg.Kubeconfig != "" && !filepath.IsAbs(cfg.Kubeconfig) {
		return ""
	}
	for _, v := range []string{cfg.Release, cfg.Namespace, cfg.Kubeconfig, cfg.Context} {
		if kubernetes.HasRef(v) {
			return ""
		}
	}
	out := fmt.Sprintf("helm release %s in namespace %s", cfg.Release, cfg.Namespace)
	if cfg.Kubeconfig != "" || cfg.Context != "" {
		out += fmt.Sprintf(" (kubeconfig %q, context %q)", cfg.Kubeconfig, cfg.Context)
	}
	return out
}

// warned are the plan's warnings given, by component: the plan plans
// each action of an instance, some more than once, and says each once.
var warned sync.Map

// warnOnce gives a warning of the plan for a component, once.
func warnOnce(component, msg string) {
	if _, dup := warned.LoadOrStore(component+"\x00"+msg, true); !dup {
		slog.Warn(msg, "component", component)
	}
}

// releaseHistory is the release's history in Helm's storage, as the
// plan finds it: whether helm installed it (a deploy adopts it as an
// upgrade), another component of the stack deployed it (taken over as
// one), or it is gone with its namespace (installed again). The plan does
// not read whose the release is: it plans an upgrade for another stack's,
// or an older gantry's unmarked, release too, which the run refuses before
// anything is applied (ownership.refusal). It asks the cluster of the
// config or of the environment, briefly; looked is false when it could not
// reach it.
func releaseHistory(dir string, in instance) (hist []*rspb.Release, looked bool) {
	// The plan plans an instance's actions, some more than once, and is
	// built again under the lock: what the cluster said is used for a few
	// seconds (a process that lives longer plans with a fresh answer; the
	// run reads the history again in Open).
	key := strings.Join([]string{dir, in.cfg.Kubeconfig, in.cfg.Context, in.namespace, in.release}, "\x00")
	if v, ok := histories.Load(key); ok && time.Since(v.(lookedHistory).at) < historyFresh {
		h := v.(lookedHistory)
		return h.hist, h.looked
	}
	defer func() { histories.Store(key, lookedHistory{hist, looked, time.Now()}) }()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	env := os.Environ()
	t := kubernetes.TargetOf(kubernetes.Target{Kubeconfig: in.cfg.Kubeconfig, Context: in.cfg.Context, Namespace: in.namespace}, nil, env)
	if t.Namespace == "" {
		// As Open finds it: gantry's environment is the component's,
		// but for its parameters (knownRelease).
		t.Namespace = kubernetes.EnvValue(env, "NAMESPACE")
	}
	cl, err := kubernetes.Connect(ctx, t, dir)
	if err != nil {
		return nil, false
	}
	store, err := releases(cl.Config(), cl.Namespace())
	if err != nil {
		return nil, false
	}
	hist, err = history(store, in.release)
	return hist, err == nil
}

// histories are the release histories the plan read, by where it looked
// (releaseHistory).
var histories sync.Map

// lookedHistory is what releaseHistory found, and when.
type lookedHistory struct {
	hist   []*rspb.Release
	looked bool
	at     time.Time
}

// historyFresh is how long the plan uses a history it read.
const historyFresh = 10 * time.Second

// knownRelease reports whether the plan knows which release, in which
// namespace of which cluster, the instance deploys: none of them is named
// by a parameter — a reference in the config, or where the config leaves
// one out, a parameter of the component that Open reads instead: one
// named kubeconfig, context or namespace (kubernetes.TargetOf), or one
// exported as KUBECONFIG, NAMESPACE or COMPONENT_NAME (the Hub's way).
func knownRelease(in instance, params []manifest.Parameter) bool {
	if kubernetes.HasRef(in.release) || kubernetes.HasRef(in.namespace) || kubernetes.HasRef(in.cfg.Kubeconfig) || kubernetes.HasRef(in.cfg.Context) {
		return false
	}
	names := func(name, env string) bool {
		return slices.ContainsFunc(params, func(p manifest.Parameter) bool {
			return name != "" && p.Name == name || env != "" && p.Env == env
		})
	}
	return !(in.cfg.Release == "" && names("", "COMPONENT_NAME") ||
		in.cfg.Namespace == "" && names("namespace", "NAMESPACE") ||
		in.cfg.Kubeconfig == "" && names("kubeconfig", "KUBECONFIG") ||
		in.cfg.Context == "" && names("context", ""))
}

// Open renders the chart for a run: values files rendered, parameters
// expanded, the cluster's capabilities and lookups, and the release's
// revision after the last one Helm's storage holds.
func (charts) Open(ctx context.Context, c *plugin.Call) (*kubernetes.Opened, error) {
	cfg, err := parseConfig(c.Entry.Config)
	if err != nil {
		return nil, err
	}
	component := ""
	var params map[string]string
	if c.Instance != nil {
		component, params = c.Instance.Component, c.Instance.Params
	}
	in, err := resolve(c.Dir, component, cfg, c.Env, true)
	if err != nil {
		return nil, err
	}
	t := kubernetes.TargetOf(kubernetes.Target{Kubeconfig: cfg.Kubeconfig, Context: cfg.Context, Namespace: cfg.Namespace}, params, c.Env)
	if t.Namespace == "" {
		t.Namespace = kubernetes.EnvValue(c.Env, "NAMESPACE")
	}
	cl, err := kubernetes.Connect(ctx, t, c.Dir)
	if err != nil {
		return nil, err
	}
	store, err := releases(cl.Config(), cl.Namespace())
	if err != nil {
		return nil, err
	}
	hist, err := history(store, in.release)
	if err != nil {
		return nil, err
	}
	// Whose the release is: a deploy refuses another's; an undeploy
	// leaves it, and its history, in place (record.left).
	me := markOf(kubernetes.EnvValue(c.Env, "HUB_STACK_NAME"), component)
	recorded := c.Recorded != nil && len(c.Recorded.Resources) > 0
	var live []mark
	if !recorded && !marked(hist) {
		if live, err = liveNames(ctx, cl, hist); err != nil {
			return nil, err
		}
	}
	own := ownershipOf(hist, me, recorded, live)
	rec := &record{store: store, name: in.release, hist: hist, me: me}
	if c.Action == plugin.ActionDelete {
		if rec.left = own.leftReason(me); rec.left != "" {
			rec.hist = nil
		}
	} else {
		if err := own.refusal(in.release, cl.Namespace(), me); err != nil {
			return nil, err
		}
		if err := own.shared(in.release, cl.Namespace(), component, me, func() []string { return staying(c) }); err != nil {
			return nil, err
		}
		rec.takeover = own.takenFrom(me) != ""
		if err := inProgress(hist, me, rec.takeover, in.release, cl.Namespace(), time.Now()); err != nil {
			return nil, err
		}
	}
	rec.claim = rec.left == ""
	out := &kubernetes.Opened{Cluster: cl, Timeout: cfg.Timeout,
		HelmRelease: &kubernetes.HelmRelease{Name: in.release, Namespace: cl.Namespace(), Hooks: hooksOf(rec.hist),
			TemplateCRD: templateCRD(hist)}}
	out.Record = rec
	// A deploy upgrades a release Helm's storage has deployed, as helm
	// upgrade --install does: one the state records whose revisions are
	// gone (its namespace deleted) is installed again, with its install
	// hooks and .Release.IsInstall.
	out.Upgrade = upgrades(rec.hist)
	if c.Action == plugin.ActionDelete {
		out.Upgrade = out.Upgrade || kubernetes.Upgrading(c.Recorded)
	}
	out.Finish = "record helm release " + in.release
	if c.Action == plugin.ActionDelete {
		out.Finish = "remove helm release " + in.release + " and its history"
	}
	docs, rel, err := renderRun(ctx, c, cl, in, hist, out.Upgrade)
	if err != nil {
		if c.Action != plugin.ActionDelete {
			return nil, err
		}
		fmt.Fprintf(c.Stdout, "warning: cannot render the chart, so no delete hooks run: %v\n", err)
	}
	out.Documents = docs
	if c.Action == plugin.ActionDeploy {
		rel.Labels = me.labels()
		rec.rel = rel
		switch from := own.takenFrom(me); {
		case from != "":
			fmt.Fprintf(c.Stdout, "helm release %s belonged to %s: taken over by this component (the component that deploys a release last owns it, as with objects)\n", in.release, from)
		case kubernetes.Upgrading(c.Recorded) && len(hist) == 0:
			fmt.Fprintf(c.Stdout, "release %s is recorded in the state but helm's storage has no revision of it (was its namespace deleted?): installing it again\n", in.release)
		case !kubernetes.Upgrading(c.Recorded) && upgrades(hist):
			how := "was installed by helm"
			if own.standing == standOwn {
				how = "was deployed by this component, which its state does not record"
			}
			fmt.Fprintf(c.Stdout, "release %s %s (revision %d): upgrading it\n", in.release, how, lastOf(hist).Version)
		}
	}
	return out, nil
}

// staying are the components of the stack that stay after the run
// (plugin.Call.Staying); none where the call has no plan.
func staying(c *plugin.Call) []string {
	if c.Staying == nil {
		return nil
	}
	return c.Staying()
}

// renderRun renders the chart for a run and makes the release's next
// revision, pending.
func renderRun(ctx context.Context, c *plugin.Call, cl *kubernetes.Cluster, in instance, hist []*rspb.Release, upgrade bool) ([]kubernetes.Document, *rspb.Release, error) {
	path, err := locate(c.Dir, in.ref)
	if err != nil {
		return nil, nil, err
	}
	ch, err := loadChart(path)
	if err != nil {
		return nil, nil, err
	}
	read, err := readValues(c.Dir, valuesFiles(c.Dir, in.cfg, in.chartHere), in.cfg.Values == nil, nil)
	if err != nil {
		return nil, nil, err
	}
	for _, w := range read.skipped {
		fmt.Fprintf(c.Stdout, "warning: %s\n", w)
	}
	vals := read.values
	// The runner expanded the entry's config, set included.
	vals = mergeValues(vals, in.cfg.Set)
	caps, err := capabilities(cl.Discovery())
	if err != nil {
		return nil, nil, err
	}
	revision := 1
	if last := lastOf(hist); last != nil {
		revision = last.Version + 1
	}
	r, err := render(ctx, renderRequest{chart: ch, values: vals, release: in.release, namespace: cl.Namespace(),
		revision: revision, upgrade: upgrade, caps: caps, rc: cl.Config()})
	if err != nil {
		return nil, nil, relative(err, c.Dir, path)
	}
	now := time.Now()
	first := now
	if len(hist) > 0 && hist[0].Info != nil {
		first = hist[0].Info.FirstDeployed
	}
	status := rcommon.StatusPendingInstall
	if upgrade {
		status = rcommon.StatusPendingUpgrade
	}
	rel := &rspb.Release{Name: in.release, Namespace: cl.Namespace(), Chart: ch, Config: vals, Manifest: r.manifest,
		Hooks: r.hooks, Version: revision, ApplyMethod: string(rspb.ApplyMethodServerSideApply),
		Info: &rspb.Info{FirstDeployed: first, LastDeployed: now, Status: status, Notes: r.notes,
			Description: descDeploying}}
	return r.docs, rel, nil
}

// mergeValues applies set values over the files' (helm --set over -f).
func mergeValues(base, over map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		if bm, ok := out[k].(map[string]any); ok {
			if om, ok := v.(map[string]any); ok {
				out[k] = mergeValues(bm, om)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// relative makes a render error name the chart's files from the component
// folder when the chart is in it.
func relative(err error, dir, chartPath string) error {
	rel, rerr := filepath.Rel(dir, chartPath)
	if rerr != nil || strings.HasPrefix(rel, "..") {
		return err
	}
	return fmt.Errorf("chart %s: %w", filepath.ToSlash(rel), err)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// hooksOf are the hooks the release's revisions record, as "Kind/name"
// (kubernetes.HelmRelease.Hooks).
func hooksOf(hist []*rspb.Release) map[string]bool {
	out := map[string]bool{}
	for _, r := range hist {
		for _, h := range r.Hooks {
			if h != nil {
				out[h.Kind+"/"+h.Name] = true
			}
		}
	}
	return out
}
