package kubernetes

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// A deploy that applies an object gantry adopts (one made by kubectl, or
// a release helm installed) first takes over the fields the tool that made
// it set: server-side apply would otherwise leave every field of the
// maker's that the manifests leave out on the object for ever (a
// ConfigMap's old keys, a Deployment's dropped env vars and sidecars). The
// takeover is what kubectl does when it moves an object from client-side
// to server-side apply (k8s.io/client-go/util/csaupgrade), for the
// managers of the tools that make objects only: a controller's fields (a
// Deployment's revision annotation, a claim's binding), a later edit's
// (kubectl label, kubectl patch: a Namespace's Pod Security labels, a
// webhook's injected caBundle), another tool's, and a subresource's
// (status, scale) stay theirs.

// maker reports whether a field manager is a tool that makes objects,
// whose fields gantry takes over when it adopts one: kubectl create,
// kubectl apply (client-side and server-side), helm, and the manager the
// API server names fields set before managed fields were tracked.
func maker(manager string) bool {
	switch manager {
	case "kubectl-create", "kubectl-client-side-apply", "kubectl", "helm", "before-first-apply":
		return true
	}
	return false
}

// helmOwnership reports whether a path is one of the annotations that say
// which Helm release an object belongs to (meta.helm.sh/release-name and
// release-namespace).
func helmOwnership(p fieldpath.Path) bool {
	return len(p) == 3 && p[0].FieldName != nil && *p[0].FieldName == "metadata" &&
		p[1].FieldName != nil && *p[1].FieldName == "annotations" &&
		p[2].FieldName != nil && strings.HasPrefix(*p[2].FieldName, "meta.helm.sh/")
}

// takeover is the fields of an object gantry takes over before an apply,
// and from whom.
type takeover struct {
	fields   *fieldpath.Set
	managers []string
	// live is the object's content before the takeover: what the apply
	// removed or reset is told against it.
	live map[string]any
	// before are the object's managed fields before the takeover, and
	// version its resource version after it: an apply that fails puts
	// them back (undo).
	before  []metav1.ManagedFieldsEntry
	version string
	// left marks what an interrupted run's takeover left (leftOver):
	// told, never undone.
	left bool
}

// needsTakeover reports whether the object whose metadata live is (nil:
// it does not exist) has fields a maker set that gantry takes over before
// it applies it: one gantry never applied (it has no gantry field
// manager), one a takeover of an interrupted run left without gantry's
// content (no gantry annotations), or one gantry adopted (an older gantry
// adopted it without a takeover, or its maker applied it again since).
func needsTakeover(live metav1.Object) bool {
	if live == nil {
		return false
	}
	if leftTakenOver(live) {
		return true
	}
	if !slices.ContainsFunc(live.GetManagedFields(), func(e metav1.ManagedFieldsEntry) bool {
		return maker(e.Manager) && e.Subresource == ""
	}) {
		return false
	}
	a := live.GetAnnotations()
	if a[annotationAdopted] == "true" {
		return true
	}
	if _, ok := a[annotationComponent]; !ok {
		return true
	}
	return !slices.ContainsFunc(live.GetManagedFields(), func(e metav1.ManagedFieldsEntry) bool {
		return e.Manager == fieldManager
	})
}

// leftTakenOver reports whether a takeover left the object without
// gantry's content: gantry manages its fields (its makers' entries merged
// into gantry's), but gantry never applied its annotations — the run was
// killed between the takeover and the apply, and the undo could not run.
func leftTakenOver(live metav1.Object) bool {
	if _, ok := live.GetAnnotations()[annotationComponent]; ok {
		return false
	}
	return slices.ContainsFunc(live.GetManagedFields(), func(e metav1.ManagedFieldsEntry) bool {
		return e.Manager == fieldManager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == ""
	})
}

// leftOver is the takeover an interrupted run left on the object (live):
// gantry's fields, which the apply now removes or resets where the
// manifests leave them out, told as a takeover's are. nil when it left
// none.
func leftOver(live *unstructured.Unstructured, apiVersion string) *takeover {
	if !leftTakenOver(live) {
		return nil
	}
	t := &takeover{fields: &fieldpath.Set{}, managers: []string{"an interrupted run of gantry took over"}, live: live.Object, left: true}
	for _, e := range live.GetManagedFields() {
		if e.Manager != fieldManager || e.Subresource != "" || e.APIVersion != apiVersion || e.FieldsV1 == nil {
			continue
		}
		s := &fieldpath.Set{}
		if s.FromJSON(bytes.NewReader(e.FieldsV1.Raw)) == nil {
			t.fields = t.fields.Union(s)
		}
	}
	return t
}

// takeOver makes gantry the manager of the fields the tools that made the
// object set (maker), in the API version it applies, so that the apply
// that follows removes those its manifests leave out. It reads
// the object and patches its managed fields, guarded by the resource
// version read. It returns nil when no maker manages a field.
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
		if err != nil {
			return nil, err
		}
		if took == nil {
			// Nothing to take over; what an interrupted takeover left
			// is told (no undo: it is gantry's already).
			return leftOver(live, u.GetAPIVersion()), nil
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
			took.before, took.version, took.live = live.GetManagedFields(), patched.GetResourceVersion(), live.Object
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
	// Also when the run is interrupted (the apply failed for that): an
	// object left taken over, without gantry's content, would lose its
	// maker's fields at the next deploy (needsTakeover takes it over
	// again then, and says what goes).
	if t.left {
		return nil // nothing of this run's to undo
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
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

// takenOver is an object's managed fields with the entries of makers in
// apiVersion, on the object itself (not a subresource), merged into one
// Apply entry of gantry's (with gantry's own, if it has one); took is nil
// when there is none.
func takenOver(entries []metav1.ManagedFieldsEntry, apiVersion string, now time.Time) (out []metav1.ManagedFieldsEntry, took *takeover, err error) {
	took = &takeover{fields: &fieldpath.Set{}}
	var own []metav1.ManagedFieldsEntry // gantry's Apply entry, merged into the new one
	for _, e := range entries {
		if e.Manager == fieldManager && e.Operation == metav1.ManagedFieldsOperationApply && e.Subresource == "" && e.APIVersion == apiVersion && e.FieldsV1 != nil {
			own = append(own, e)
			continue
		}
		if !maker(e.Manager) || e.Subresource != "" || e.APIVersion != apiVersion || e.FieldsV1 == nil {
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
			if s.Leaves().Difference(kept).Empty() {
				out = append(out, e) // nothing but them: nothing to take over
				continue
			}
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
	all := took.fields
	for _, e := range own {
		s := &fieldpath.Set{}
		if err := s.FromJSON(bytes.NewReader(e.FieldsV1.Raw)); err != nil {
			return nil, nil, fmt.Errorf("read the fields %s manages: %w", e.Manager, err)
		}
		all = all.Union(s)
	}
	raw, err := all.ToJSON()
	if err != nil {
		return nil, nil, err
	}
	t := metav1.NewTime(now)
	out = append(out, metav1.ManagedFieldsEntry{Manager: fieldManager, Operation: metav1.ManagedFieldsOperationApply,
		APIVersion: apiVersion, Time: &t, FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: raw}})
	return out, took, nil
}

// changes are what the takeover made of the fields the manifests leave
// out, against after (the object after the apply, or as a fresh object
// with the manifests' content gets it: defaults): removed, the fields it
// no longer has; reset, those whose value changed (a Deployment's
// replicas back to 1, a Service's type back to ClusterIP). Paths only,
// never values (a Secret's data). At most limit of each, and how many
// more in all.
func (t *takeover) changes(after map[string]any, manifests *unstructured.Unstructured, limit int) (removed, reset []string, more int) {
	t.fields.Leaves().Iterate(func(p fieldpath.Path) {
		if _, set := valueAt(manifests.Object, p); set {
			return // the manifests say it
		}
		was, had := valueAt(t.live, p)
		now, has := valueAt(after, p)
		var list *[]string
		switch {
		case had && !has:
			list = &removed
		case had && has && !reflect.DeepEqual(was, now):
			list = &reset
		default:
			return
		}
		if len(*list) < limit {
			*list = append(*list, p.String())
		} else {
			more++
		}
	})
	return removed, reset, more
}

// describe says what the takeover did, for the deploy's log.
func (t *takeover) describe(removed, reset []string, more int) string {
	out := "took over the fields " + strings.Join(t.managers, ", ") + " set"
	if t.left {
		out = "the fields " + strings.Join(t.managers, ", ")
	}
	if len(removed) > 0 {
		out += "; removed those the manifests leave out: " + strings.Join(removed, ", ")
	}
	if len(reset) > 0 {
		out += "; reset to their defaults those the manifests leave out: " + strings.Join(reset, ", ")
	}
	if more > 0 {
		out += fmt.Sprintf(" and %d more", more)
	}
	return out
}

// defaults is the object as the API server would create it from the
// manifests' content alone, with its defaults: a dry-run creation under a
// generated name (its own is taken). nil when the server refuses it.
func (c *cluster) defaults(ctx context.Context, u *unstructured.Unstructured) *unstructured.Unstructured {
	probe := u.DeepCopy()
	probe.SetName("")
	probe.SetGenerateName("gantry-defaults-")
	out, err := c.post(ctx, probe, metav1.CreateOptions{FieldManager: fieldManager, DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		return nil
	}
	return out
}

// valueAt is the value of the field at a path in an object's content, and
// whether it has it.
func valueAt(obj any, p fieldpath.Path) (any, bool) {
	cur := obj
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, false
			}
			if cur, ok = m[*pe.FieldName]; !ok {
				return nil, false
			}
		case pe.Index != nil:
			l, ok := cur.([]any)
			if !ok || *pe.Index >= len(l) {
				return nil, false
			}
			cur = l[*pe.Index]
		default:
			l, ok := cur.([]any)
			if !ok {
				return nil, false
			}
			i := slices.IndexFunc(l, func(e any) bool { return matches(e, pe) })
			if i < 0 {
				return nil, false
			}
			cur = l[i]
		}
	}
	return cur, true
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
