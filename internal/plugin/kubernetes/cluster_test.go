package kubernetes

import (
	"os"
	"path/filepath"
	"testing"

	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// TestClientNotRateLimited: the clients of a release have no rate limit of
// their own (a release bounds its requests in flight; the API server's
// priority and fairness does the rest): client-go's default of 5 requests
// a second, or any rate, would make a large release wait on itself.
func TestClientNotRateLimited(t *testing.T) {
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u, namespace: apps}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	rc, ns, err := restConfig(target{kubeconfig: kubeconfig}, dir)
	if err != nil {
		t.Fatal(err)
	}
	if ns != "apps" {
		t.Errorf("namespace %q, want the context's, apps", ns)
	}
	cfg := rest.CopyConfig(rc)
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	client, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if l := client.GetRateLimiter(); l != nil {
		t.Errorf("the client limits its rate (QPS %v): %T", l.QPS(), l)
	}
}
