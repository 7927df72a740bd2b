package kubernetes

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestRemovalOf reads answers a kube-apiserver 1.37 gave to DELETE
// requests (shortened): gone at once, as a Status or as the deleted object,
// or still there with its deletion timestamp.
func TestRemovalOf(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		want         removal
	}{
		{"configmap: a status of success", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","details":{"name":"a","kind":"configmaps"}}`, removed},
		{"service: the object as deleted", `{"kind":"Service","apiVersion":"v1","metadata":{"name":"s","namespace":"rawt","resourceVersion":"1386"}}`, removed},
		{"custom resource: a status", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success"}`, removed},
		{"held by a finalizer", `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"held","deletionTimestamp":"2026-11-29T23:28:06Z","finalizers":["x.dev/hold"]}}`, removing},
		{"pod in its grace period", `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","deletionTimestamp":"2026-11-29T23:28:36Z"}}`, removing},
		{"foreground deletion", `{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"web","deletionTimestamp":"2026-11-29T23:28:36Z","finalizers":["foregroundDeletion"]}}`, removing},
		{"a status that is not success", `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure"}`, removing},
		{"no answer", ``, removing},
		{"not JSON", `<html>proxy</html>`, removing},
		{"JSON without a kind", `{"metadata":{"name":"x"}}`, removing},
		{"an object without a name", `{"kind":"ConfigMap","metadata":{}}`, removing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := removalOf([]byte(tc.answer)); got != tc.want {
				t.Errorf("removalOf(%s) = %d, want %d", tc.answer, got, tc.want)
			}
		})
	}
}

// TestObjectPath builds the paths the dynamic client uses for the same
// objects.
func TestObjectPath(t *testing.T) {
	namespaced := func(group, version, resource string) *meta.RESTMapping {
		return &meta.RESTMapping{Resource: schema.GroupVersionResource{Group: group, Version: version, Resource: resource}, Scope: meta.RESTScopeNamespace}
	}
	cluster := func(group, version, resource string) *meta.RESTMapping {
		return &meta.RESTMapping{Resource: schema.GroupVersionResource{Group: group, Version: version, Resource: resource}, Scope: meta.RESTScopeRoot}
	}
	for _, tc := range []struct {
		m    *meta.RESTMapping
		ns   string
		want []string
	}{
		{namespaced("", "v1", "configmaps"), "apps", []string{"/api", "v1", "namespaces", "apps", "configmaps", "c"}},
		{namespaced("apps", "v1", "deployments"), "apps", []string{"/apis", "apps", "v1", "namespaces", "apps", "deployments", "c"}},
		{cluster("", "v1", "namespaces"), "", []string{"/api", "v1", "namespaces", "c"}},
		{cluster("rbac.authorization.k8s.io", "v1", "clusterroles"), "ignored", []string{"/apis", "rbac.authorization.k8s.io", "v1", "clusterroles", "c"}},
	} {
		if diff := cmp.Diff(tc.want, objectPath(tc.m, tc.ns, "c")); diff != "" {
			t.Errorf("objectPath(%v) (-want +got):\n%s", tc.m.Resource, diff)
		}
	}
}
