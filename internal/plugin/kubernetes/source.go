package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/gantry-dev/gantry/internal/plugin"
)

// Source is an input the stage engine deploys besides manifests: the helm
// plugin's charts. It renders an instance into YAML documents; the engine
// parses them and carries out the stages of seed 004 — CRDs, hooks, weight
// groups, readiness, inventory and pruning — as for manifests.
type Source interface {
	// Plan renders an instance for the plan, from its entry as written
	// (parameter references unexpanded). For a delete it returns what it
	// could alongside an error.
	Plan(req plugin.StagesRequest) (*Rendered, error)
	// Open renders it for a run, parameters expanded, connected to the
	// cluster.
	Open(ctx context.Context, c *plugin.Call) (*Opened, error)
}

// Document is one stream of YAML documents a source rendered.
type Document struct {
	// Name is where the documents come from, for messages and for the
	// ids of hook stages ("templates/job.yaml").
	Name string
	Data []byte
	// CRD marks a chart's crds/ documents: deployed in the CRDs stage, as
	// helm installs them — created when missing and otherwise left as they
	// are, whoever made them, and never deleted (not by prune, not by an
	// undeploy).
	CRD bool
}

// Rendered is an instance as a source rendered it.
type Rendered struct {
	Documents []Document
	// Upgrade marks a deploy that upgrades what is there: its hooks are
	// pre-upgrade and post-upgrade.
	Upgrade bool
	// UpgradeUnknown marks a plan that cannot tell whether the deploy
	// installs or upgrades (the release's name or namespace is a
	// parameter, and the state records no deploy): the plan has the
	// stages of the hooks of both, and the run runs those it finds.
	UpgradeUnknown bool
	// Finish labels the action's last stage, in which the Record finishes
	// it; "" when the source keeps no record.
	Finish string
	// Deferred says why the plan cannot render the instance (its input is
	// named by a parameter): the plan then shows one stage that runs the
	// stages the run finds, in their order. "" when it can.
	Deferred string
	// What names the input for the plan: "the chart".
	What string
}

// Opened is an instance rendered for a run.
type Opened struct {
	Rendered
	Cluster *Cluster
	// Timeout bounds how long each object may take to become ready.
	Timeout time.Duration
	// Record is what the source keeps of the action; nil for nothing.
	Record Record
	// HelmRelease is the Helm release the instance deploys, nil for none:
	// objects whose Helm annotations name it are the instance's own (a
	// release helm installed, adopted); another release's are refused.
	HelmRelease *HelmRelease
}

// Record is what a source keeps of an action beside the objects in the
// cluster: the helm plugin's release.
type Record interface {
	// Begin runs at the end of prepare, once everything was found valid
	// and before anything is applied.
	Begin(ctx context.Context) error
	// Finish is the action's last stage; out is its log.
	Finish(ctx context.Context, out io.Writer) error
	// Fail runs when a stage after prepare fails with err.
	Fail(ctx context.Context, err error) error
}

// Cluster is a connection to the cluster an instance deploys to.
type Cluster struct{ c *cluster }

// Target says where an instance deploys; "" fields take the usual
// defaults (KUBECONFIG or ~/.kube/config, its current context and
// namespace).
type Target struct{ Kubeconfig, Context, Namespace string }

// TargetOf works out where an instance deploys: the fields given, else the
// component's parameters kubeconfig, context and namespace, else the
// KUBECONFIG of its environment.
func TargetOf(given Target, params map[string]string, env []string) Target {
	t := targetOf(config{Kubeconfig: given.Kubeconfig, Context: given.Context, Namespace: given.Namespace}, params, env)
	return Target{Kubeconfig: t.kubeconfig, Context: t.context, Namespace: t.namespace}
}

// Connect connects to a target's cluster and checks that it answers;
// relative kubeconfig paths are relative to dir.
func Connect(ctx context.Context, t Target, dir string) (*Cluster, error) {
	c, err := connect(ctx, target{kubeconfig: t.Kubeconfig, context: t.Context, namespace: t.Namespace}, dir)
	if err != nil {
		return nil, err
	}
	return &Cluster{c}, nil
}

// Config is the client configuration of the connection.
func (c *Cluster) Config() *rest.Config { return rest.CopyConfig(c.c.rc) }

// Namespace is the release namespace.
func (c *Cluster) Namespace() string { return c.c.namespace }

// Server is the API server's address.
func (c *Cluster) Server() string { return c.c.server }

// Discovery answers what the cluster serves.
func (c *Cluster) Discovery() discovery.DiscoveryInterface { return c.c.disc }

// GantryMark is the stack and component the gantry annotations of an
// object in the cluster name (gantry.dev/stack, gantry.dev/component);
// ok is false when it carries neither, is not there, or is of a kind the
// cluster does not serve. A namespaced object without a namespace is
// looked for in the release namespace.
func (c *Cluster) GantryMark(ctx context.Context, apiVersion, kind, namespace, name string) (stack, component string, ok bool, err error) {
	if namespace == "" {
		namespace = c.c.namespace
	}
	u, err := c.c.get(ctx, schema.FromAPIVersionAndKind(apiVersion, kind), namespace, name)
	if meta.IsNoMatchError(err) || err == nil && u == nil {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, fmt.Errorf("read %s/%s: %s", strings.ToLower(kind), name, apiMessage(err))
	}
	o := ownerOf(u)
	return o.stack, o.component, o.gantry, nil
}

// ParseTimeout reads a timeout as configs give it: seconds as a number, or
// a string of seconds or a Go duration ("90s").
func ParseTimeout(v any) (time.Duration, error) { return parseTimeout(v) }

// DefaultTimeout is how long one object may take to become ready when
// nothing says otherwise.
const DefaultTimeout = defaultTimeout

// NewPlugin is a staged plugin that deploys what a source renders.
func NewPlugin(s Source) plugin.Staged { return engine{rendered{s}} }

// rendered adapts a Source to the engine.
type rendered struct{ s Source }

// claim is what the source says a deploy of the instance claims
// (plugin.Claimer), for a source that says.
func (r rendered) claim(req plugin.StagesRequest) string {
	if c, ok := r.s.(plugin.Claimer); ok {
		return c.Claim(req)
	}
	return ""
}

func (r rendered) plan(req plugin.StagesRequest) (*planned, error) {
	out, err := r.s.Plan(req)
	if out == nil {
		return nil, err
	}
	objs, perr := parseDocuments(out.Documents)
	return &planned{objs: objs, upgrade: out.Upgrade, eitherUpgrade: out.UpgradeUnknown && !out.Upgrade, finish: out.Finish, deferred: out.Deferred, what: out.What, rendered: true}, errors.Join(err, perr)
}

func (r rendered) open(ctx context.Context, c *plugin.Call) (*opened, error) {
	out, err := r.s.Open(ctx, c)
	if err != nil {
		return nil, err
	}
	if out.Cluster == nil {
		return nil, fmt.Errorf("internal error: the source opened no cluster")
	}
	objs, err := parseDocuments(out.Documents)
	if err != nil {
		return nil, err
	}
	timeout := out.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	return &opened{planned: planned{objs: objs, upgrade: out.Upgrade, finish: out.Finish},
		cl: out.Cluster.c, timeout: timeout, record: out.Record, helm: out.HelmRelease}, nil
}

// parseDocuments reads the objects of rendered documents, with the checks
// and bounds of manifests. A hook's stage is named after the document it
// comes from rather than its name and namespace, which rendering may take
// from parameters the plan does not know.
func parseDocuments(docs []Document) ([]*object, error) {
	l := &loader{seen: map[objectKey]string{}, aliasBudget: maxAliasNodes}
	for _, d := range docs {
		before := len(l.objs)
		l.documents(input{name: d.Name, crd: d.CRD}, d.Data)
		for i, o := range l.objs[before:] {
			o.createOnly = d.CRD
			o.planned = o.u.GetKind() + "/" + d.Name
			if i > 0 {
				o.planned += fmt.Sprintf("#%d", i+1)
			}
		}
	}
	if len(l.errs) > 0 {
		return nil, errors.Join(l.errs...)
	}
	return l.objs, nil
}
