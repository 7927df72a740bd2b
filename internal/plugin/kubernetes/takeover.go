package kubernetes

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// A deploy that applies an object gantry never applied (one made by
// kubectl, or a release helm installed, that gantry adopts) first takes
// over the fields the tool that made it set: server-side apply would
// otherwise leave every field of the earlier manager that the manifests
// leave out on the object for ever (a ConfigMap's old keys, a
// Deployment's dropped env vars and sidecars). The takeover is what
// kubectl does when it moves an object from client-side to server-side
// apply (k8s.io/client-go/util/csaupgrade), for the managers of deploy
// tools only: a controller's fields (a Deployment's revision annotation, a
// claim's binding) stay its own, and a subresource's (status, scale) are
// never applied.

// deployTool reports whether a field manager is a tool that deploys
// objects, whose fields gantry takes over when it adopts one: kubectl
// (kubectl, kubectl-create, kubectl-client-side-apply, kubectl-edit, …),
// helm, and the manager the API server names fields set before managed
// fields were tracked.
func deployTool(manager string) bool {
	return manager == "kubectl" || strings.HasPrefix(manager, "kubectl-") ||
		manager == "helm" || manager == "before-first-apply"
}

// helmOwnership reports whether a path is one of the annotations that say
// which Helm release an object belongs to (meta.helm.sh/release-name and
// release-namespace).
func helmOwnership(p fieldpath.Path) bool {
	return len(p) == 3 && p[0].FieldName != nil && *p[0].FieldName == "metadata" &&
		p[1].FieldName != nil && *p[1].FieldName == "annotations" &&
		p[2].FieldName != nil && strings.HasPrefix(*p[2].FieldName, "meta.helm.sh/")
}

// takeover is the fields of an object gantry takes over before its first
// apply, and from whom.
type takeover struct {
	fields   *fieldpath.Set
	managers []string
	// before are the object's managed fields before the takeover, and
	// version its resource version after it: an apply that fails puts
	// them back (undo).
	before  []metav1.ManagedFieldsEntry
	version string
}

// firstApply reports whether gantry never applied the object whose
// metadata live is (nil: it does not exist).
func firstApply(live metav1.Object) bool {
	if live == nil {
		return false
	}
	for _, e := range live.GetManagedFields() {
		if e.Manager == fieldManager {
			return false
		}
	}
	return true
}

// takeOver makes gantry the manager of the fields the deploy tools that
// made the object set (deployTool), in the API version it applies, so that
// the apply that follows removes those its manifests leave out. It reads
// the object and patches its managed fields, guarded by the resource
// version read. It returns nil when no deploy tool manages a field.
func (c *cluster) takeOver(ctx context.Context, u *unstructured.Unstructured) (*takeover, error) {
	ri, _, err := c.resource(u.GroupVersionKind(), u.GetNamespace())
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		var live *unstructured.Unstructured
		err := c.ask(ctx, func() (err error) {
			live, err = ri.Get(ctx, u.GetName(), metav1.GetOptions{})
			return err
		})
		if apierrors.IsNotFound(err) {
			return nil, nil // deleted meanwhile: the apply creates it
		}
		if err != nil {
			return nil, err
		}
		entries, took, err := takenOver(live.GetManagedFields(), u.GetAPIVersion(), time.Now())
		if err != nil || took == nil {
			return nil, err
		}
		patch, err := json.Marshal([]map[string]any{
			{"op": "test", "path": "/metadata/resourceVersion", "value": live.GetResourceVersion()},
			{"op": "replace", "path": "/metadata/managedFields", "value": entries},
		})
		if err != nil {
			return nil, err
		}
		var patched *unstructured.Unstructured
		err = c.ask(ctx, func() (err error) {
			patched, err = ri.Patch(ctx, u.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{})
			return err
		})
		if err == nil {
			took.before, took.version = live.GetManagedFields(), patched.GetResourceVersion()
			return took, nil
		}
		// Changed since it was read (the test failed): read it again.
		if attempt < 4 && (apierrors.IsConflict(err) || apierrors.IsInvalid(err) || apierrors.IsBadRequest(err)) {
			continue
		}
		return nil, fmt.Errorf("take over the fields %s set: %s", strings.Join(took.managers, ", "), apiMessage(err))
	}
}

// undo gives the object its managed fields back after an apply that
// failed (the API server refused what the takeover would remove: an
// immutable field the manifests leave out): the object is as it was, and
// the next deploy tries again. It does nothing when the object changed
// since the takeover.
func (c *cluster) undo(ctx context.Context, u *unstructured.Unstructured, t *takeover) error {
	ri, _, err := c.resource(u.GroupVersionKind(), u.GetNamespace())
	if err != nil {
		return err
	}
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/resourceVersion", "value": t.version},
		{"op": "replace", "path": "/metadata/managedFields", "value": t.before},
	})
	if err != nil {
		return err
	}
	err = c.ask(ctx, func() error {
		_, err := ri.Patch(ctx, u.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{})
		return err
	})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) || apierrors.IsInvalid(err) {
		return nil // changed meanwhile: not the takeover's to undo
	}
	return err
}

// notInManifests are the fields taken over that the manifests leave out
// (u is the object applied), for an error: at most limit.
func (t *takeover) notInManifests(u *unstructured.Unstructured, limit int) []string {
	var out []string
	t.fields.Leaves().Iterate(func(p fieldpath.Path) {
		if len(out) < limit && !has(u.Object, p) {
			out = append(out, p.String())
		}
	})
	return out
}

// takenOver is an object's managed fields with the entries of deploy tools
// in apiVersion, on the object itself (not a subresource), merged into one
// Apply entry of gantry's; took is nil when there is none.
func takenOver(entries []metav1.ManagedFieldsEntry, apiVersion string, now time.Time) (out []metav1.ManagedFieldsEntry, took *takeover, err error) {
	took = &takeover{fields: &fieldpath.Set{}}
	for _, e := range entries {
		if !deployTool(e.Manager) || e.Subresource != "" || e.APIVersion != apiVersion || e.FieldsV1 == nil {
			out = append(out, e)
			continue
		}
		s := &fieldpath.Set{}
		if err := s.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
			return nil, nil, fmt.Errorf("read the fields %s manages: %w", e.Manager, err)
		}
		// Helm's ownership annotations stay helm's: helm upgrade and
		// helm rollback of the release still find its objects.
		var helmOwn []fieldpath.Path
		s.Leaves().Iterate(func(p fieldpath.Path) {
			if helmOwnership(p) {
				helmOwn = append(helmOwn, p.Copy())
			}
		})
		if len(helmOwn) > 0 {
			kept := fieldpath.NewSet(helmOwn...)
			raw, err := kept.ToJSON()
			if err != nil {
				return nil, nil, err
			}
			k := *e.DeepCopy()
			k.FieldsV1 = &metav1.FieldsV1{Raw: raw}
			out = append(out, k)
			s = s.Difference(kept)
		}
		took.fields = took.fields.Union(s)
		if !slices.Contains(took.managers, e.Manager) {
			took.managers = append(took.managers, e.Manager)
		}
	}
	if len(took.managers) == 0 {
		return entries, nil, nil
	}
	raw, err := took.fields.ToJSON()
	if err != nil {
		return nil, nil, err
	}
	t := metav1.NewTime(now)
	out = append(out, metav1.ManagedFieldsEntry{Manager: fieldManager, Operation: metav1.ManagedFieldsOperationApply,
		APIVersion: apiVersion, Time: &t, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw}})
	return out, took, nil
}

// removed are the fields taken over that the object no longer has after
// the apply (applied is its content): those the manifests left out, as
// paths (".data.old"); at most limit, and how many more. A field the API
// server set again (a default) is not removed.
func (t *takeover) removed(applied map[string]any, limit int) (paths []string, more int) {
	t.fields.Leaves().Iterate(func(p fieldpath.Path) {
		switch {
		case has(applied, p):
		case len(paths) < limit:
			paths = append(paths, p.String())
		default:
			more++
		}
	})
	return paths, more
}

// has reports whether an object's content has the field at a path.
func has(obj any, p fieldpath.Path) bool {
	cur := obj
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			m, ok := cur.(map[string]any)
			if !ok {
				return false
			}
			if cur, ok = m[*pe.FieldName]; !ok {
				return false
			}
		case pe.Index != nil:
			l, ok := cur.([]any)
			if !ok || *pe.Index >= len(l) {
				return false
			}
			cur = l[*pe.Index]
		default:
			l, ok := cur.([]any)
			if !ok {
				return false
			}
			i := slices.IndexFunc(l, func(e any) bool { return matches(e, pe) })
			if i < 0 {
				return false
			}
			cur = l[i]
		}
	}
	return true
}

// matches reports whether a list element is the one a path element names
// by its key fields (an associative list's: a container's name) or by its
// value (a set's member).
func matches(e any, pe fieldpath.PathElement) bool {
	if pe.Value != nil {
		return sameValue(e, (*pe.Value).Unstructured())
	}
	m, ok := e.(map[string]any)
	if !ok || pe.Key == nil {
		return false
	}
	for _, f := range *pe.Key {
		if !sameValue(m[f.Name], f.Value.Unstructured()) {
			return false
		}
	}
	return true
}

// sameValue compares scalars of an object and of a path, whose numbers
// may be of different Go types.
func sameValue(a, b any) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// String says what was taken over, for the deploy's log.
func (t *takeover) String() string {
	return "took over the fields " + strings.Join(t.managers, ", ") + " set"
}
