package kubernetes

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
)

// TestRemovalOf reads answers to DELETE requests for an object named "a".
// The first six are what a kube-apiserver 1.37 answered (shortened); the
// others are answers a server that is not the API server's store may give.
func TestRemovalOf(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		want         removal
	}{
		{"configmap: the store's status", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"a","kind":"configmaps","uid":"716b9e95-03ef-4964-8f82-8962abfa4c5b"}}`, removed},
		{"custom resource: the store's status", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"a","group":"x.dev","kind":"widgets","uid":"9f0c2d7e-41aa-4d0e-9d3c-2b8e5f1a7c11"}}`, removed},
		{"service: the object as deleted", `{"kind":"Service","apiVersion":"v1","metadata":{"name":"a","namespace":"rawt","resourceVersion":"1386"}}`, removed},
		{"held by a finalizer", `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","deletionTimestamp":"2026-11-29T23:28:06Z","finalizers":["x.dev/hold"]}}`, removing},
		{"pod: always with its timestamp", `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"a","deletionTimestamp":"2026-11-29T23:28:36Z"}}`, removing},
		{"CRD: its own cleanup", `{"kind":"CustomResourceDefinition","apiVersion":"apiextensions.k8s.io/v1","metadata":{"name":"a","deletionTimestamp":"2026-11-29T23:28:24Z"}}`, removing},
		{"foreground deletion", `{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"a","deletionTimestamp":"2026-11-29T23:28:36Z","finalizers":["foregroundDeletion"]}}`, removing},
		{"a status without the uid (made up, or an aggregated server's)", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"a","kind":"projects"}}`, removing},
		{"a status with nothing in it", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success"}`, removing},
		{"a status naming another object", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"b","uid":"1"}}`, removing},
		{"a status that is not success", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","details":{"name":"a","uid":"1"}}`, removing},
		{"another object", `{"kind":"ConfigMap","metadata":{"name":"b"}}`, removing},
		{"an object without a name", `{"kind":"ConfigMap","metadata":{}}`, removing},
		{"JSON without a kind", `{"metadata":{"name":"a"}}`, removing},
		{"no answer", ``, removing},
		{"not JSON", `<html>proxy</html>`, removing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := removalOf([]byte(tc.answer), "a"); got != tc.want {
				t.Errorf("removalOf(%s) = %d, want %d", tc.answer, got, tc.want)
			}
		})
	}
}

// deleteRequest is a DELETE as a server saw it.
type deleteRequest struct {
	Path, ContentType, Accept, Body string
}

// deleteServer answers DELETE requests for objects named gone (the
// store's status), held (the object with its deletion timestamp) and
// missing (not found), behind a path prefix, and records them.
func deleteServer(t *testing.T) (*httptest.Server, func() []deleteRequest) {
	var mu sync.Mutex
	var seen []deleteRequest
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, deleteRequest{Path: r.URL.Path, ContentType: r.Header.Get("Content-Type"), Accept: r.Header.Get("Accept"), Body: string(body)})
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.Method != http.MethodDelete {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		switch r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:] {
		case "gone":
			io.WriteString(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"gone","kind":"configmaps","uid":"u-1"}}`)
		case "held":
			io.WriteString(w, `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"held","deletionTimestamp":"2026-11-29T23:28:06Z","finalizers":["x.dev/hold"]}}`)
		default:
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","reason":"NotFound","code":404}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() []deleteRequest {
		mu.Lock()
		defer mu.Unlock()
		out := seen
		seen = nil
		return out
	}
}

// TestRemove deletes objects through the clients connect makes, against
// a server behind a path prefix: the request is the one the dynamic client
// makes for the same object (path, body, content type), JSON is asked for,
// and the answer says gone, still there or absent.
func TestRemove(t *testing.T) {
	srv, requests := deleteServer(t)
	dyn, raw, _, err := objectClients(&rest.Config{Host: srv.URL + "/clusters/c1"})
	if err != nil {
		t.Fatal(err)
	}
	c := fakeCluster(dyn, raw,
		&metav1.APIResourceList{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "configmaps", Kind: "ConfigMap", Namespaced: true, Verbs: metav1.Verbs{"delete"}}}},
		&metav1.APIResourceList{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{{Name: "deployments", Kind: "Deployment", Namespaced: true, Verbs: metav1.Verbs{"delete"}}}},
		&metav1.APIResourceList{GroupVersion: "rbac.authorization.k8s.io/v1", APIResources: []metav1.APIResource{{Name: "clusterroles", Kind: "ClusterRole", Verbs: metav1.Verbs{"delete"}}}})
	ctx := context.Background()
	foreground := metav1.DeletePropagationForeground
	configMap := schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	deployment := schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	clusterRole := schema.GroupVersionKind{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}

	for _, tc := range []struct {
		gvk       schema.GroupVersionKind
		ns, name  string
		want      removal
		dynOpts   metav1.DeleteOptions
		namespace bool
	}{
		{configMap, "apps", "gone", removed, metav1.DeleteOptions{}, true},
		{configMap, "apps", "held", removing, metav1.DeleteOptions{}, true},
		{configMap, "apps", "missing", wasAbsent, metav1.DeleteOptions{}, true},
		{deployment, "apps", "held", removing, metav1.DeleteOptions{PropagationPolicy: &foreground}, true},
		{clusterRole, "", "gone", removed, metav1.DeleteOptions{}, false},
	} {
		got, err := c.remove(ctx, tc.gvk, tc.ns, tc.name)
		if err != nil || got != tc.want {
			t.Errorf("remove %s %s/%s = %d, %v; want %d", tc.gvk.Kind, tc.ns, tc.name, got, err, tc.want)
		}
		ours := requests()
		m, err := c.mapping(tc.gvk)
		if err != nil {
			t.Fatal(err)
		}
		ri := dyn.Resource(m.Resource)
		if tc.namespace {
			_ = ri.Namespace(tc.ns).Delete(ctx, tc.name, tc.dynOpts)
		} else {
			_ = ri.Delete(ctx, tc.name, tc.dynOpts)
		}
		theirs := requests()
		if len(ours) != 1 || len(theirs) != 1 {
			t.Fatalf("%s/%s: %d requests by remove, %d by the dynamic client; want 1 each", tc.ns, tc.name, len(ours), len(theirs))
		}
		if ours[0].Accept != "application/json" {
			t.Errorf("%s/%s: remove accepts %q, want JSON only", tc.ns, tc.name, ours[0].Accept)
		}
		// The dynamic client's encoder ends its JSON with a newline.
		ours[0].Accept, theirs[0].Accept = "", ""
		theirs[0].Body = strings.TrimSuffix(theirs[0].Body, "\n")
		if diff := cmp.Diff(theirs[0], ours[0]); diff != "" {
			t.Errorf("%s %s/%s: remove's request differs from the dynamic client's (-dynamic +remove):\n%s", tc.gvk.Kind, tc.ns, tc.name, diff)
		}
	}

	// A name or namespace that is not one path segment is refused before
	// anything is asked: an empty name is the collection's path.
	for _, tc := range []struct{ ns, name, want string }{
		{"apps", "", "without a name"},
		{"apps", "a/b", "invalid name"},
		{"apps", "..", "invalid name"},
		{"", "a", "no namespace"},
		{"a%2Fb", "a", "invalid namespace"},
	} {
		_, err := c.remove(ctx, configMap, tc.ns, tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("remove configmap %q/%q: %v, want an error saying %q", tc.ns, tc.name, err, tc.want)
		}
	}
	if got := requests(); len(got) != 0 {
		t.Errorf("requests made for names that are not path segments: %v", got)
	}
}

// TestObjectPath: the core group under /api, the others under /apis,
// cluster-scoped kinds without a namespace.
func TestObjectPath(t *testing.T) {
	mapping := func(group, version, resource string, scope meta.RESTScope) *meta.RESTMapping {
		return &meta.RESTMapping{Resource: schema.GroupVersionResource{Group: group, Version: version, Resource: resource}, Scope: scope}
	}
	for _, tc := range []struct {
		m    *meta.RESTMapping
		ns   string
		want []string
	}{
		{mapping("", "v1", "configmaps", meta.RESTScopeNamespace), "apps", []string{"/api", "v1", "namespaces", "apps", "configmaps", "c"}},
		{mapping("apps", "v1", "deployments", meta.RESTScopeNamespace), "apps", []string{"/apis", "apps", "v1", "namespaces", "apps", "deployments", "c"}},
		{mapping("", "v1", "namespaces", meta.RESTScopeRoot), "", []string{"/api", "v1", "namespaces", "c"}},
		{mapping("rbac.authorization.k8s.io", "v1", "clusterroles", meta.RESTScopeRoot), "ignored", []string{"/apis", "rbac.authorization.k8s.io", "v1", "clusterroles", "c"}},
	} {
		got, err := objectPath(tc.m, tc.ns, "c")
		if err != nil {
			t.Errorf("objectPath(%v): %v", tc.m.Resource, err)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("objectPath(%v) (-want +got):\n%s", tc.m.Resource, diff)
		}
	}
}
