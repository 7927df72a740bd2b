package kubernetes

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery/cached/memory"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/dynamic"
	fakedynamic "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	clienttesting "k8s.io/client-go/testing"
)

// fakeCluster is a cluster of the given clients whose discovery serves
// the given resources, in the release namespace "apps".
func fakeCluster(dyn dynamic.Interface, raw rest.Interface, resources ...*metav1.APIResourceList) *cluster {
	disc := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	disc.Resources = resources
	return &cluster{dyn: dyn, raw: raw, disc: disc, namespace: "apps", asking: make(chan struct{}, releaseRequests),
		mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))}
}

// TestWatchEndingAtOnceIsNotRetriedInALoop: a watch that the server (or a
// proxy before it) ends as soon as it opens is taken up again after a
// wait that grows, not at once: the client has no rate limit, and every
// object not ready has a tracker. Over a third of a second the tracker
// lists a handful of times (waits of about 50, 100, 200 ms); without the
// wait it listed thousands of times.
func TestWatchEndingAtOnceIsNotRetriedInALoop(t *testing.T) {
	dyn := fakedynamic.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{{Group: "apps", Version: "v1", Resource: "deployments"}: "DeploymentList"})
	var lists atomic.Int64
	dyn.PrependReactor("list", "deployments", func(clienttesting.Action) (bool, runtime.Object, error) {
		lists.Add(1)
		return true, &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "apps/v1", "kind": "DeploymentList", "metadata": map[string]any{"resourceVersion": "1"}}}, nil
	})
	dyn.PrependWatchReactor("deployments", func(clienttesting.Action) (bool, watch.Interface, error) {
		w := watch.NewFake()
		w.Stop() // ends at once
		return true, w, nil
	})
	c := fakeCluster(dyn, nil, &metav1.APIResourceList{GroupVersion: "apps/v1",
		APIResources: []metav1.APIResource{{Name: "deployments", Kind: "Deployment", Namespaced: true, Verbs: metav1.Verbs{"list", "watch"}}}})
	ctx, cancel := context.WithTimeout(context.Background(), 350*time.Millisecond)
	defer cancel()
	gvk := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	err := c.await(ctx, gvk, "apps", "web", func(u *unstructured.Unstructured) (bool, error) { return false, nil })
	if err == nil {
		t.Fatal("await ended without the object")
	}
	// The waits are at least 37, 75, 150 and 300 ms: five lists at most,
	// however fast the machine (a slow one lists fewer times).
	if n := lists.Load(); n > 8 {
		t.Errorf("%d lists in 350 ms of watches that end at once, want a few (5 at most)", n)
	}
}
