package kubernetes

import (
	"bytes"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		name: "another API version stays",
		entries: []metav1.ManagedFieldsEntry{
			entry("kubectl-create", upd, "apps/v1beta1", "", `{"f:spec":{"f:x":{}}}`),
		},
		kept: map[string][]string{"kubectl-create": {".spec.x"}},
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

func TestTakeoverRemoved(t *testing.T) {
	s := &fieldpath.Set{}
	raw := `{"f:data":{"f:a":{},"f:old":{}},"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{"f:image":{},"f:env":{}}},"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{"f:name":{}}},"f:finalizers":{"v:\"x\"":{}}}}`
	if err := s.FromJSON(bytes.NewReader([]byte(raw))); err != nil {
		t.Fatal(err)
	}
	took := &takeover{fields: s}
	applied := map[string]any{
		"data": map[string]any{"a": "1"},
		"spec": map[string]any{
			"containers": []any{map[string]any{"name": "app", "image": "i"}},
			"ports":      []any{map[string]any{"containerPort": int64(80), "protocol": "TCP", "name": "http"}},
			"finalizers": []any{"y"},
		},
	}
	got, more := took.removed(applied, 10)
	want := []string{".data.old", `.spec.containers[name="app"].env`, `.spec.finalizers[="x"]`}
	if diff := cmp.Diff(want, got); diff != "" || more != 0 {
		t.Errorf("removed (-want +got):\n%s (more %d)", diff, more)
	}
	if got, more := took.removed(applied, 1); len(got) != 1 || more != 2 {
		t.Errorf("removed with limit 1 = %q and %d more, want 1 and 2 more", got, more)
	}
}
