package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// cluster is a connection to the cluster an instance deploys to: the
// dynamic client for every kind, and a mapper from kinds to API resources
// that learns CRDs created during the deploy when it is reset.
type cluster struct {
	rc  *rest.Config
	dyn dynamic.Interface
	// raw is a REST client for what the dynamic client does not tell:
	// the answer to a DELETE (cluster.remove).
	raw rest.Interface
	// meta reads objects' metadata only: who owns an object (owner.go).
	meta   metadata.Interface
	disc   discovery.DiscoveryInterface
	mapper *restmapper.DeferredDiscoveryRESTMapper
	// namespace is the release namespace: objects of namespaced kinds that
	// name none go there.
	namespace string
	// server is the API server's address, for messages.
	server string
	// asking holds a place for each request in flight: a release works on
	// every object of a group at once, but only releaseRequests ask at a
	// time (nil: no bound).
	asking chan struct{}
}

// ask makes one request (or opens one watch) once fewer than
// releaseRequests are in flight.
func (c *cluster) ask(ctx context.Context, fn func() error) error {
	if c.asking != nil {
		select {
		case c.asking <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		defer func() { <-c.asking }()
	}
	return fn()
}

// target says where an instance deploys: the config's fields, else the
// component's parameters kubeconfig, context and namespace, else the
// KUBECONFIG of its environment.
type target struct {
	kubeconfig, context, namespace string
}

// targetOf works out where an instance deploys.
func targetOf(cfg config, params map[string]string, env []string) target {
	t := target{kubeconfig: cfg.Kubeconfig, context: cfg.Context, namespace: cfg.Namespace}
	if t.kubeconfig == "" {
		t.kubeconfig = params["kubeconfig"]
	}
	if t.kubeconfig == "" {
		t.kubeconfig = EnvValue(env, "KUBECONFIG")
	}
	if t.context == "" {
		t.context = params["context"]
	}
	if t.namespace == "" {
		t.namespace = params["namespace"]
	}
	return t
}

// EnvValue is the value of a variable in an environment (the last one set
// wins, as for exec), "" when unset.
func EnvValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v
		}
	}
	return ""
}

// restConfig loads the client configuration of a target. A KUBECONFIG may
// list several files, as kubectl reads it.
func restConfig(t target, dir string) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.Precedence = nil
	if t.kubeconfig != "" {
		for _, p := range filepath.SplitList(t.kubeconfig) {
			if p != "" && !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			rules.Precedence = append(rules.Precedence, p)
		}
	} else if home, err := os.UserHomeDir(); err == nil {
		rules.Precedence = []string{filepath.Join(home, ".kube", "config")}
	}
	rules.WarnIfAllMissing = false
	overrides := &clientcmd.ConfigOverrides{CurrentContext: t.context}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	rc, err := cc.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			return nil, "", fmt.Errorf("no cluster to deploy to: set the component's kubeconfig parameter or KUBECONFIG (looked in %s)", strings.Join(rules.Precedence, ", "))
		}
		return nil, "", fmt.Errorf("kubeconfig %s: %w", strings.Join(rules.Precedence, ", "), err)
	}
	ns := t.namespace
	if ns == "" {
		if n, _, err := cc.Namespace(); err == nil {
			ns = n
		}
	}
	if ns == "" {
		ns = "default"
	}
	// No rate limit of the client's own: a release sends at most
	// releaseRequests requests at once (cluster.ask), and the API
	// server's priority and fairness queues what it cannot take at once,
	// answering 429 with a time to retry after, which client-go waits for.
	// A rate would make gantry wait on itself: at client-go's default of 5
	// a second, or even at 200 (what gantry had), a release of 1,000
	// objects spent 10 of its 13 seconds waiting for its turn to ask.
	rc.QPS = -1
	rc.UserAgent = "gantry"
	return rc, ns, nil
}

// connect opens a connection to a target and checks that the cluster
// answers.
func connect(ctx context.Context, t target, dir string) (*cluster, error) {
	rc, ns, err := restConfig(t, dir)
	if err != nil {
		return nil, err
	}
	dyn, raw, mc, err := objectClients(rc)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", rc.Host, err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", rc.Host, err)
	}
	c := &cluster{rc: rc, dyn: dyn, raw: raw, meta: mc, disc: disc, namespace: ns, server: rc.Host,
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)),
		asking: make(chan struct{}, releaseRequests)}
	// The version is the cheapest question: it tells that the cluster is
	// there and lets gantry in, before anything is read or applied.
	done := make(chan error, 1)
	go func() { _, err := disc.ServerVersion(); done <- err }()
	select {
	case err := <-done:
		if err != nil {
			return nil, fmt.Errorf("cluster %s does not answer: %w", rc.Host, err)
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return c, nil
}

// objectClients makes the clients of a connection's objects: the dynamic
// client, a REST client for what the dynamic one does not tell (the
// answer to a DELETE) and a client of objects' metadata, which share one
// HTTP client.
func objectClients(rc *rest.Config) (dynamic.Interface, rest.Interface, metadata.Interface, error) {
	cfg := dynamic.ConfigFor(rc)
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	dyn, err := dynamic.NewForConfigAndClient(rc, hc)
	if err != nil {
		return nil, nil, nil, err
	}
	raw, err := rest.UnversionedRESTClientForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, nil, nil, err
	}
	mc, err := metadata.NewForConfigAndClient(rc, hc)
	if err != nil {
		return nil, nil, nil, err
	}
	return dyn, raw, mc, nil
}

// mapping finds the API resource of a kind.
func (c *cluster) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("the cluster serves no %s: %w", gvkText(gvk), err)
	}
	return m, nil
}

// anyVersionMapping is the mapping of gvk's kind at gvk's version, else
// at the version the cluster prefers: to read or delete an object, which
// is one whatever version it is asked at. An operator's upgrade that stops
// serving the version a state recorded (v1beta1, v1 still served) leaves
// its objects in place, and an undeploy must still find and delete them.
func (c *cluster) anyVersionMapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		if other, oerr := c.mapper.RESTMapping(gvk.GroupKind()); oerr == nil {
			return other, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("the cluster serves no %s: %w", gvkText(gvk), err)
	}
	return m, nil
}

// awaitServed waits until the API serves a kind, whose CRD was just
// created: discovery learns it only after the CRD is established, so the
// mapper is reset and asked again.
func (c *cluster) awaitServed(ctx context.Context, gvk schema.GroupVersionKind) error {
	wait := 20 * time.Millisecond
	for {
		c.mapper.Reset()
		_, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		var disc *discovery.ErrGroupDiscoveryFailed
		switch {
		case err == nil:
			return nil
		case !meta.IsNoMatchError(err) && !errors.As(err, &disc):
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the API does not serve %s yet: %w", gvkText(gvk), ctx.Err())
		case <-time.After(wait):
		}
		if wait < 500*time.Millisecond {
			wait *= 2
		}
	}
}

func gvkText(gvk schema.GroupVersionKind) string {
	if gvk.Group == "" {
		return gvk.Version + " " + gvk.Kind
	}
	return gvk.Group + "/" + gvk.Version + " " + gvk.Kind
}

// kindFor finds the kind an external dependency names: "Deployment",
// "deployment", "deployments" or "deployment.apps" (the group after the
// first dot, as kubectl reads it).
func (c *cluster) kindFor(kind, group string) (schema.GroupVersionKind, error) {
	gvk, err := c.mapper.KindFor(schema.GroupVersionResource{Group: group, Resource: strings.ToLower(kind)})
	if err == nil {
		return gvk, nil
	}
	// A kind as manifests spell it (CamelCase) is not a resource name.
	if m, merr := c.mapper.RESTMapping(schema.GroupKind{Group: group, Kind: kind}); merr == nil {
		return m.GroupVersionKind, nil
	}
	// The REST mapper's own words ("no matches for /, Resource=…") say
	// nothing more.
	return schema.GroupVersionKind{}, fmt.Errorf("the cluster serves no kind %q%s", kind, groupText(group))
}

func groupText(group string) string {
	if group == "" {
		return ""
	}
	return " in group " + group
}
