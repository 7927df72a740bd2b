package kubernetes

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

func entry(manager string, op metav1.ManagedFieldsOperationType, apiVersion, subresource, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: apiVersion, Subresource: subresource,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)}}
}

func leaves(t *testing.T, raw []byte) []string {
	t.Helper()
	s := &fieldpath.Set{}
	if err := s.FromJSON(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	var out []string
	s.Leaves().Iterate(func(p fieldpath.Path) { out = append(out, p.String()) })
	return out
}

func TestTakenOver(t *testing.T) {
	const upd, apply = metav1.ManagedFieldsOperationUpdate, metav1.ManagedFieldsOperationApply
	tests := []struct {
		name     string
		entries  []metav1.ManagedFieldsEntry
		managers []string
		gantry   []string            // the leaves of gantry's new entry
		kept     map[string][]string // the leaves of the entries left, by manager
	}{{
		name: "kubectl create and a controller",
		entries: []metav1.ManagedFieldsEntry{
			entry("kubectl-create", upd, "v1", "", `{"f:data":{".":{},"f:a":{},"f:old":{}}}`),
			entry("kube-controller-manager", upd, "v1", "", `{"f:metadata":{"f:annotations":{"f:rev":{}}}}`),
			entry("kubectl-edit", upd, "v1", "status", `{"f:status":{"f:x":{}}}`),
		},
		managers: []string{"kubectl-create"},
		gantry:   []string{".data.a", ".data.old"},
		kept:     map[string][]string{"kube-controller-manager": {".metadata.annotations.rev"}, "kubectl-edit": {".status.x"}},
	}, {
		name: "helm keeps its ownership annotations",
		entries: []metav1.ManagedFieldsEntry{
			entry("helm", apply, "v1", "", `{"f:data":{"f:a":{}},"f:metadata":{"f:annotations":{"f:meta.helm.sh/release-name":{},"f:meta.helm.sh/release-namespace":{},"f:note":{}}}}`),
			entry("kubectl", apply, "v1", "", `{"f:data":{"f:b":{}}}`),
		},
		managers: []string{"helm", "kubectl"},
		gantry:   []string{".data.a", ".data.b", ".metadata.annotations.note"},
		kept:     map[string][]string{"helm": {".metadata.annotations.meta.helm.sh/release-name", ".metadata.annotations.meta.helm.sh/release-namespace"}},
	}, {
		name: "helm's entry after a takeover holds its ownership annotations alone",
		entries: []metav1.ManagedFieldsEntry{
			entry("helm", apply, "v1", "", `{"f:metadata":{"f:annotations":{"f:meta.helm.sh/release-name":{}}}}`),
			entry("gantry", apply, "v1", "", `{"f:data":{"f:a":{}}}`),
		},
		gantry: []string{".data.a"}, // as it was: nothing taken over
		kept:   map[string][]string{"helm": {".metadata.annotations.meta.helm.sh/release-name"}},
	}, {
		name: "another API version stays",
		entries: []metav1.ManagedFieldsEntry{
			entry("kubectl-create", upd, "apps/v1beta1", "", `{"f:spec":{"f:x":{}}}`),
		},
		kept: map[string][]string{"kubectl-create": {".spec.x"}},
	}, {
		name: "a later edit stays its author's; gantry's own entry is merged",
		entries: []metav1.ManagedFieldsEntry{
			entry("kubectl-create", upd, "v1", "", `{"f:data":{"f:a":{}}}`),
			entry("kubectl-label", upd, "v1", "", `{"f:metadata":{"f:labels":{"f:pod-security.kubernetes.io/enforce":{}}}}`),
			entry("kubectl-patch", upd, "v1", "", `{"f:data":{"f:ca":{}}}`),
			entry("gantry", apply, "v1", "", `{"f:data":{"f:b":{}}}`),
		},
		managers: []string{"kubectl-create"},
		gantry:   []string{".data.a", ".data.b"},
		kept:     map[string][]string{"kubectl-label": {".metadata.labels.pod-security.kubernetes.io/enforce"}, "kubectl-patch": {".data.ca"}},
	}, {
		name: "no deploy tool",
		entries: []metav1.ManagedFieldsEntry{
			entry("Terraform", apply, "v1", "", `{"f:data":{"f:a":{}}}`),
		},
		kept: map[string][]string{"Terraform": {".data.a"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, took, err := takenOver(tt.entries, "v1", time.Unix(0, 0))
			if err != nil {
				t.Fatal(err)
			}
			var managers, gantry []string
			if took != nil {
				managers = took.managers
			}
			kept := map[string][]string{}
			for _, e := range out {
				if e.Manager == fieldManager {
					if e.Operation != apply || e.APIVersion != "v1" {
						t.Errorf("gantry's entry is %s %s, want Apply v1", e.Operation, e.APIVersion)
					}
					gantry = leaves(t, e.FieldsV1.Raw)
					continue
				}
				kept[e.Manager] = append(kept[e.Manager], leaves(t, e.FieldsV1.Raw)...)
			}
			if diff := cmp.Diff(tt.managers, managers); diff != "" {
				t.Errorf("managers taken over (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.gantry, gantry); diff != "" {
				t.Errorf("gantry's fields (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.kept, kept); diff != "" {
				t.Errorf("fields left to others (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTakeoverChanges: the fields the manifests leave out that the apply
// removed or reset are named by path, whatever list or set they are in; a
// field the manifests say, or that kept its value, is not.
func TestTakeoverChanges(t *testing.T) {
	s := &fieldpath.Set{}
	raw := `{"f:data":{"f:a":{},"f:old":{}},"f:spec":{"f:replicas":{},"f:type":{},"f:containers":{"k:{\"name\":\"app\"}":{"f:image":{},"f:env":{}}},"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{"f:name":{}}},"f:finalizers":{"v:\"x\"":{}}}}`
	if err := s.FromJSON(bytes.NewReader([]byte(raw))); err != nil {
		t.Fatal(err)
	}
	took := &takeover{fields: s, managers: []string{"kubectl-create"}, live: map[string]any{
		"data": map[string]any{"a": "1", "old": "2"},
		"spec": map[string]any{
			"replicas":   int64(3),
			"type":       "ClusterIP",
			"containers": []any{map[string]any{"name": "app", "image": "i", "env": []any{}}},
			"ports":      []any{map[string]any{"containerPort": int64(80), "protocol": "TCP", "name": "http"}},
			"finalizers": []any{"x"},
		},
	}}
	after := map[string]any{
		"data": map[string]any{"a": "10"},
		"spec": map[string]any{
			"replicas":   int64(1),
			"type":       "ClusterIP",
			"containers": []any{map[string]any{"name": "app", "image": "i"}},
			"ports":      []any{map[string]any{"containerPort": int64(80), "protocol": "TCP", "name": "http"}},
			"finalizers": []any{"y"},
		},
	}
	manifests := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"a": "10"}}}
	removed, reset, more := took.changes(after, manifests, 10)
	if diff := cmp.Diff([]string{".data.old", `.spec.containers[name="app"].env`, `.spec.finalizers[="x"]`}, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{".spec.replicas"}, reset); diff != "" || more != 0 {
		t.Errorf("reset (-want +got):\n%s (more %d)", diff, more)
	}
	if got, want := took.describe(removed, reset, more), `took over the fields kubectl-create set; removed those the manifests leave out: .data.old, .spec.containers[name="app"].env, .spec.finalizers[="x"]; reset to their defaults those the manifests leave out: .spec.replicas`; got != want {
		t.Errorf("describe = %q, want %q", got, want)
	}
	if removed, _, more := took.changes(after, manifests, 1); len(removed) != 1 || more != 2 {
		t.Errorf("changes with limit 1 = %q and %d more, want 1 and 2 more", removed, more)
	}
}

// TestNeedsTakeover: an object gantry never applied, one a takeover left
// without gantry's content, and one gantry adopted are taken over when a
// maker manages fields of it; one gantry made, and one no maker touched,
// are not.
func TestNeedsTakeover(t *testing.T) {
	const upd, apply = metav1.ManagedFieldsOperationUpdate, metav1.ManagedFieldsOperationApply
	obj := func(ann map[string]string, entries ...metav1.ManagedFieldsEntry) metav1.Object {
		m := &metav1.ObjectMeta{Annotations: ann, ManagedFields: entries}
		return m
	}
	created := entry("kubectl-create", upd, "v1", "", `{}`)
	gantry := entry("gantry", apply, "v1", "", `{}`)
	mine := map[string]string{annotationComponent: "app"}
	for _, tt := range []struct {
		name string
		live metav1.Object
		want bool
	}{
		{"absent", nil, false},
		{"made by kubectl, never applied", obj(nil, created), true},
		{"taken over, not applied (interrupted)", obj(nil, gantry), true},
		{"adopted by an older gantry", obj(map[string]string{annotationComponent: "app", annotationAdopted: "true"}, created, gantry), true},
		{"gantry's own, someone ran kubectl label", obj(mine, gantry, entry("kubectl-label", upd, "v1", "", `{}`)), false},
		{"gantry's own, status by a controller", obj(mine, gantry, entry("kubectl-create", upd, "v1", "status", `{}`)), false},
		{"made by a controller", obj(nil, entry("kube-controller-manager", upd, "v1", "", `{}`)), false},
	} {
		if got := needsTakeover(tt.live); got != tt.want {
			t.Errorf("%s: needsTakeover = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestLeftOver: what an interrupted takeover left (gantry's Apply entry,
// no gantry annotations) is told as a takeover, against the object as it
// is, and never undone.
func TestLeftOver(t *testing.T) {
	live := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "pre"}, "data": map[string]any{"a": "1", "old": "2"}}}
	live.SetManagedFields([]metav1.ManagedFieldsEntry{entry("gantry", metav1.ManagedFieldsOperationApply, "v1", "", `{"f:data":{"f:a":{},"f:old":{}}}`)})
	took := leftOver(live, "v1")
	if took == nil {
		t.Fatal("no takeover told")
	}
	manifests := &unstructured.Unstructured{Object: map[string]any{"data": map[string]any{"a": "10"}}}
	removed, reset, more := took.changes(map[string]any{"data": map[string]any{"a": "10"}}, manifests, 10)
	if got, want := took.describe(removed, reset, more), "the fields an interrupted run of gantry took over; removed those the manifests leave out: .data.old"; got != want {
		t.Errorf("describe = %q, want %q", got, want)
	}
	if err := (&cluster{}).undo(context.Background(), live, took); err != nil {
		t.Errorf("undo of a left-over takeover: %v", err)
	}
	live.SetAnnotations(map[string]string{annotationComponent: "app"})
	if leftOver(live, "v1") != nil {
		t.Error("an object gantry applied told as left over")
	}
}
