package kubernetes

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/gantry-dev/gantry/internal/state"
)

// fieldManager is the owner of the fields gantry applies (server-side
// apply): fields another manager set conflict, and gantry takes them over,
// as the manifests are the truth for what they say.
const fieldManager = "gantry"

// Labels and annotations gantry puts on every object it applies, so that a
// person looking at the cluster can tell where an object comes from.
const (
	labelManagedBy      = "app.kubernetes.io/managed-by"
	annotationStack     = "gantry.dev/stack"
	annotationComponent = "gantry.dev/component"
	// annotationAdopted ("true") marks an object that existed before
	// gantry applied it: the state records it too (Resource.Adopted), but
	// the mark on the object outlives the record — an undeploy that leaves
	// the object and forgets it, a component that takes it over — so that
	// no later deploy takes the object for one gantry created.
	annotationAdopted = "gantry.dev/adopted"
)

// resource is a client for the object's kind in its namespace.
func (c *cluster) resource(gvk schema.GroupVersionKind, namespace string) (dynamic.ResourceInterface, *meta.RESTMapping, error) {
	m, err := c.mapping(gvk)
	if err != nil {
		return nil, nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return c.dyn.Resource(m.Resource).Namespace(namespace), m, nil
	}
	return c.dyn.Resource(m.Resource), m, nil
}

// apply applies an object server-side, forcing conflicts; dryRun only
// asks the API server whether it would accept it.
func (c *cluster) apply(ctx context.Context, u *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, error) {
	ri, _, err := c.resource(u.GroupVersionKind(), u.GetNamespace())
	if err != nil {
		return nil, err
	}
	opts := metav1.ApplyOptions{FieldManager: fieldManager, Force: true}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	var out *unstructured.Unstructured
	err = c.ask(ctx, func() (err error) {
		out, err = ri.Apply(ctx, u.GetName(), u, opts)
		return err
	})
	return out, err
}

// create creates an object, failing with AlreadyExists when one has its
// name; dryRun only asks the API server whether it would.
func (c *cluster) create(ctx context.Context, u *unstructured.Unstructured, dryRun bool) (*unstructured.Unstructured, error) {
	opts := metav1.CreateOptions{FieldManager: fieldManager}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return c.post(ctx, u, opts)
}

// post creates an object with the options given.
func (c *cluster) post(ctx context.Context, u *unstructured.Unstructured, opts metav1.CreateOptions) (*unstructured.Unstructured, error) {
	ri, _, err := c.resource(u.GroupVersionKind(), u.GetNamespace())
	if err != nil {
		return nil, err
	}
	var out *unstructured.Unstructured
	err = c.ask(ctx, func() (err error) {
		out, err = ri.Create(ctx, u, opts)
		return err
	})
	return out, err
}

// mergePatch changes an object with a JSON merge patch.
func (c *cluster) mergePatch(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, patch []byte) error {
	ri, _, err := c.resource(gvk, namespace)
	if err != nil {
		return err
	}
	return c.ask(ctx, func() error {
		_, err := ri.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
		return err
	})
}

// createDryRun asks the API server whether it would create the object.
func (c *cluster) createDryRun(ctx context.Context, u *unstructured.Unstructured) error {
	_, err := c.create(ctx, u, true)
	return err
}

// validateCreate asks the API server to validate the object as the
// creation an apply will make of it, whether or not an object has its name
// now (one that will be deleted first, or, in the namespace a dry run
// borrows, one that proves nothing against it). A name that is taken is no
// error: the server validates and admits an object before it looks whether
// its name is taken (an invalid one is refused as invalid). Unknown and
// duplicate fields are refused, as server-side apply refuses them (a plain
// create would drop them with a warning).
func (c *cluster) validateCreate(ctx context.Context, u *unstructured.Unstructured) error {
	_, err := c.post(ctx, u, metav1.CreateOptions{FieldManager: fieldManager,
		DryRun: []string{metav1.DryRunAll}, FieldValidation: metav1.FieldValidationStrict})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// get reads an object; nil without error when it does not exist.
func (c *cluster) get(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, error) {
	ri, _, err := c.resource(gvk, namespace)
	if err != nil {
		return nil, err
	}
	u, err := ri.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return u, err
}

// removal is what a DELETE found and left.
type removal int

const (
	// wasAbsent: there was nothing to delete.
	wasAbsent removal = iota
	// removed: the object is gone; the API server said so.
	removed
	// removing: the object is being deleted and is still there
	// (finalizers, dependents deleted first, a grace period): wait for it
	// to go (cluster.awaitGone).
	removing
)

// remove deletes an object; one of the built-in kinds that own what they
// make (a Deployment its ReplicaSets and Pods, a Job its Pods) together
// with its dependents: foreground, so it is gone only when they are. Other
// kinds are deleted in the background: foreground deletion waits for the
// garbage collector, which learns the kinds of a CRD created moments ago
// only at its next discovery (up to half a minute later), and until then
// leaves the custom resource there. An object already gone is no error.
//
// An object the DELETE's answer says is gone is not asked about again
// (removalOf): undeploying 1,000 ConfigMaps is 1,000 requests, not 2,000.
func (c *cluster) remove(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) (removal, error) {
	return c.removeUID(ctx, gvk, namespace, name, "")
}

// removeUID is remove of the object with the uid only (uid "": whatever
// object has the name): an object deleted and made again by someone else
// since its owner was read is not deleted — the API server answers
// Conflict.
func (c *cluster) removeUID(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, uid types.UID) (removal, error) {
	m, err := c.anyVersionMapping(gvk)
	if err != nil {
		if meta.IsNoMatchError(err) {
			// The kind is gone at every version (its CRD was deleted):
			// so are its objects.
			return wasAbsent, nil
		}
		return wasAbsent, err
	}
	path, err := objectPath(m, namespace, name)
	if err != nil {
		return wasAbsent, err
	}
	opts := metav1.DeleteOptions{TypeMeta: metav1.TypeMeta{Kind: "DeleteOptions", APIVersion: "v1"}}
	if ownsWhatItMakes(gvk) {
		fg := metav1.DeletePropagationForeground
		opts.PropagationPolicy = &fg
	}
	if uid != "" {
		opts.Preconditions = &metav1.Preconditions{UID: &uid}
	}
	body, err := json.Marshal(&opts)
	if err != nil {
		return wasAbsent, err
	}
	var answer []byte
	err = c.ask(ctx, func() (err error) {
		// JSON, which removalOf reads, whatever the client would prefer.
		answer, err = c.raw.Delete().AbsPath(path...).
			SetHeader("Content-Type", runtime.ContentTypeJSON).SetHeader("Accept", runtime.ContentTypeJSON).
			Body(body).Do(ctx).Raw()
		return err
	})
	if apierrors.IsNotFound(err) {
		return wasAbsent, nil
	}
	if err != nil {
		return wasAbsent, err
	}
	return removalOf(answer, name), nil
}

// removalOf reads the answer to the DELETE of the object name that
// succeeded. The API server's store answers with a Status of success that
// names the object and its uid when the object is gone, or, for the kinds
// whose deletion answers with the object (Services, ServiceAccounts), with
// the object as it was deleted. An object that is still there (finalizers,
// dependents deleted first, a grace period) comes back with its deletion
// timestamp set; so do Pods, Namespaces and CRDs, always. A Status without
// the uid is not the store's: the API server makes one up when a handler
// returns nothing, and aggregated API servers answer so for deletions they
// only started. Whatever is not read as gone is watched until it is gone:
// waiting for an object that is gone costs a request, forgetting one that
// is not would be wrong.
func removalOf(answer []byte, name string) removal {
	var head struct {
		Kind    string `json:"kind"`
		Status  string `json:"status"`
		Details struct {
			Name string `json:"name"`
			UID  string `json:"uid"`
		} `json:"details"`
		Metadata struct {
			Name              string  `json:"name"`
			DeletionTimestamp *string `json:"deletionTimestamp"`
		} `json:"metadata"`
	}
	if json.Unmarshal(answer, &head) != nil {
		return removing
	}
	switch {
	case head.Kind == "Status":
		if head.Status == metav1.StatusSuccess && head.Details.Name == name && head.Details.UID != "" {
			return removed
		}
	case head.Kind != "" && head.Metadata.Name == name && head.Metadata.DeletionTimestamp == nil:
		return removed
	}
	return removing
}

// objectPath is the path of an object of a mapped kind, as the dynamic
// client makes it: /api/v1/… for the core group, /apis/GROUP/VERSION/…
// for the others. A name or a namespace that is not one path segment is an
// error: an empty name would make the path the collection's, and a DELETE
// of it would delete every object of the kind.
func objectPath(m *meta.RESTMapping, namespace, name string) ([]string, error) {
	gvr := m.Resource
	if name == "" {
		return nil, fmt.Errorf("delete a %s without a name", gvr.Resource)
	}
	if msgs := rest.IsValidPathSegmentName(name); len(msgs) > 0 {
		return nil, fmt.Errorf("delete %s %q: invalid name: %s", gvr.Resource, name, strings.Join(msgs, "; "))
	}
	p := []string{"/apis", gvr.Group, gvr.Version}
	if gvr.Group == "" {
		p = []string{"/api", gvr.Version}
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		if namespace == "" {
			return nil, fmt.Errorf("delete %s %s: no namespace", gvr.Resource, name)
		}
		if msgs := rest.IsValidPathSegmentName(namespace); len(msgs) > 0 {
			return nil, fmt.Errorf("delete %s %s: invalid namespace %q: %s", gvr.Resource, name, namespace, strings.Join(msgs, "; "))
		}
		p = append(p, "namespaces", namespace)
	}
	return append(p, gvr.Resource, name), nil
}

// ownsWhatItMakes reports the built-in workload kinds, whose controllers
// make the objects they own.
func ownsWhatItMakes(gvk schema.GroupVersionKind) bool {
	switch gvk.Group {
	case "apps", "batch":
		return true
	case "":
		return gvk.Kind == "ReplicationController"
	}
	return false
}

// resourceOf names an object for the state.
func resourceOf(o *object) state.Resource {
	gvk := o.u.GroupVersionKind()
	return state.Resource{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: o.u.GetNamespace(),
		Name: o.u.GetName(), Weight: o.weight(), CRD: o.crd, Keep: o.keep()}
}

// gvkOf is the kind of a recorded resource.
func gvkOf(r state.Resource) schema.GroupVersionKind {
	gv, err := schema.ParseGroupVersion(r.APIVersion)
	if err != nil {
		gv = schema.GroupVersion{Version: r.APIVersion}
	}
	return gv.WithKind(r.Kind)
}

// resourceKey identifies a resource across runs: its group, kind,
// namespace and name (the version may change).
func resourceKey(r state.Resource) string {
	return fmt.Sprintf("%s/%s/%s/%s", gvkOf(r).Group, r.Kind, r.Namespace, r.Name)
}

// resourceText names a resource for people: Kind/name or Kind/ns/name.
func resourceText(r state.Resource) string {
	if r.Namespace == "" {
		return r.Kind + "/" + r.Name
	}
	return r.Kind + "/" + r.Namespace + "/" + r.Name
}
