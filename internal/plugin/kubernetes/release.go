package kubernetes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gantry-dev/gantry/internal/plugin"
	"github.com/gantry-dev/gantry/internal/state"
)

// release is an instance's action once prepared: its objects read,
// expanded and checked, the cluster connected, and the stages to run.
type release struct {
	action string
	// upgrade: the deploy upgrades what is there (its hooks are
	// pre-upgrade and post-upgrade).
	upgrade bool
	timeout time.Duration
	cl      *cluster
	// id is who the instance is: the owner its objects' annotations name.
	id identity
	// others reads the resources the state records of the stack's other
	// components (plugin.Call.Others); nil for none.
	others func() map[string][]state.Resource
	// forgetIfHeld forgets an object another component of the stack
	// records too, in one step with that check (plugin.Call.ForgetIfHeld);
	// nil for none (then others is read).
	forgetIfHeld func(match func(state.Resource) bool) ([]string, error)
	// planned are the stages the run's plan deploys the stack's other
	// components with (plugin.Call.Planned): prune leaves them what they
	// are about to apply.
	planned map[string][]plugin.Stage
	// record is the source's record of the action (a Helm release), nil
	// for none.
	rec Record
	// stages are the action's stages by ID, with their objects.
	stages map[string]stage
	// order is the stages' ids in the order they run.
	order []string
	// objects are every object of the manifests (deploy).
	objects []*object
	// inventory is what the state records the instance created, by
	// resourceKey: it grows before objects are created and shrinks after
	// they are deleted.
	inventory map[string]state.Resource
	keep      func(resources []state.Resource, cluster string) error
	// cluster is the id of the cluster the run works in (identity), which
	// the state records with the inventory.
	cluster string

	mu  sync.Mutex
	out io.Writer
	// live are the objects as the API server returned them when applied;
	// gone the hooks deleted by their policies.
	live map[*object]*unstructured.Unstructured
	gone map[*object]bool
	// forgotten are a chart's crds/ CRDs the state recorded (an older
	// gantry's): forgotten by the deploy, and unmarked when it finds
	// them (createMissing).
	forgotten map[*object]bool
	// before are the resource versions of the objects the deploy applies,
	// as prepare found them ("" for one that did not exist): an apply says
	// whether it created, changed or left each alone, as kubectl does.
	before map[*object]string
}

// logf writes one line of the stage's output; stages write from several
// goroutines.
func (r *release) logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.out, format+"\n", args...)
}

// Upgrading reports an instance that was installed: a deploy of it
// succeeded once, and some of the objects it recorded are there since (not
// pending). Its deploy is an upgrade (pre-upgrade and post-upgrade hooks),
// not an install. A first install that failed recorded every object as
// pending before creating any: it is retried as an install, its install
// hooks with it.
func Upgrading(rec *state.PluginInstance) bool {
	if rec == nil {
		return false
	}
	for _, res := range rec.Resources {
		if !res.Pending {
			return true
		}
	}
	return false
}

func recordedResources(rec *state.PluginInstance) []state.Resource {
	if rec == nil {
		return nil
	}
	return rec.Resources
}

// prepare reads the instance's objects with its parameters expanded,
// connects to the cluster, fills in namespaces, asks the API server to
// validate every object (a dry run) and records, before anything is
// created, every object the deploy may create: nothing is applied unless
// all of it is valid, and a run killed afterwards leaves nothing unknown.
func (e engine) prepare(ctx context.Context, c *plugin.Call) (*release, error) {
	in, err := e.src.open(ctx, c)
	if err != nil {
		return nil, err
	}
	r := &release{action: c.Action, upgrade: in.upgrade, timeout: in.timeout, cl: in.cl, rec: in.record, out: c.Stdout,
		inventory: map[string]state.Resource{}, keep: c.Keep, others: c.Others, forgetIfHeld: c.ForgetIfHeld, planned: c.Planned,
		live: map[*object]*unstructured.Unstructured{}, gone: map[*object]bool{}, before: map[*object]string{}, forgotten: map[*object]bool{}}
	for _, res := range recordedResources(c.Recorded) {
		r.inventory[resourceKey(res)] = res
	}
	// Before the manifests are checked with the cluster: a wrong
	// context's first sign may be a kind it does not serve.
	if err := r.sameCluster(ctx, c.Recorded, c.Env); err != nil {
		return nil, err
	}
	objs, err := r.place(in.objs, c.Action == plugin.ActionDelete)
	if err != nil {
		return nil, err
	}
	stack := EnvValue(c.Env, "HUB_STACK_NAME")
	component := ""
	if c.Instance != nil {
		component = c.Instance.Component
	}
	for _, o := range objs {
		if !o.createOnly { // nobody owns a chart's crds/ CRD
			mark(o.u, stack, component)
		}
	}
	r.objects = objs
	r.id = identity{stack: stack, component: component, helm: in.helm}
	// A delete leaves some recorded CRDs in place (leftCRDs): its stages
	// are those of the rest.
	recorded := recordedResources(c.Recorded)
	var left map[string]string
	if c.Action == plugin.ActionDelete {
		left = leftCRDs(objs, recorded, in.helm)
		recorded = slices.DeleteFunc(slices.Clone(recorded), func(res state.Resource) bool { return left[resourceKey(res)] != "" })
	}
	sts, _ := stagesOf(c.Action, &in.planned, recorded)
	if err := checkPlanned(c.Stages, sts); err != nil {
		return nil, err
	}
	r.stages = map[string]stage{}
	for _, st := range sts {
		r.stages[st.ID] = st
		r.order = append(r.order, st.ID)
	}
	if c.Action == plugin.ActionDelete {
		if err := r.claimHooks(ctx); err != nil {
			return nil, err
		}
		if err := r.leaveCRDs(ctx, objs, left); err != nil {
			return nil, err
		}
		r.logf("%s to delete from %s", objectCount(len(r.inventory)), r.cl.server)
		return r, r.begin(ctx)
	}
	// Objects of another stack or Helm release are refused before
	// anything is applied; those that existed before gantry and nobody
	// owned are recorded as adopted, and marked so on the object (it
	// keeps the mark as long as gantry applies it): an undeploy leaves
	// them in place.
	claims, live, err := r.claimAll(ctx)
	if err != nil {
		return nil, err
	}
	heldAdopted := r.adoptedByOthers()
	for _, o := range objs {
		res := resourceOf(o)
		k := resourceKey(res)
		if o.createOnly {
			// Never deleted, so not recorded; a gantry before helm's
			// rule for crds/ recorded it: forgotten now, and its
			// annotations removed in the CRDs stage (createMissing).
			if _, had := r.inventory[k]; had {
				delete(r.inventory, k)
				r.forgotten[o] = true
			}
			continue
		}
		var prev *state.Resource
		if p, had := r.inventory[k]; had {
			prev = &p
		}
		res = recordOf(res, claims[o], live[o], prev, heldAdopted[k])
		if res.Adopted {
			a := o.u.GetAnnotations()
			a[annotationAdopted] = "true"
			o.u.SetAnnotations(a)
		}
		r.inventory[k] = res
	}
	if err := r.validate(ctx, live); err != nil {
		return nil, err
	}
	if err := r.externalKindsServed(); err != nil {
		return nil, err
	}
	if err := r.crdPruneRefusal(c.Staying); err != nil {
		return nil, err
	}
	mode := "install"
	if in.upgrade {
		mode = "upgrade"
	}
	if err := r.record(); err != nil {
		return nil, err
	}
	r.logf("%s: %s in namespace %s on %s, all valid", mode, objectCount(len(objs)), r.cl.namespace, r.cl.server)
	return r, r.begin(ctx)
}

// crdPruneRefusal refuses, before anything is applied, a deploy whose
// prune would delete the CRD of a kind its manifests still hold, or that
// another component staying in the stack records objects of (an operator's
// component dropping the CRD its users' custom resources need): deleting a
// CRD deletes every object of its kind, and the state would still record
// them. A CRD another component records, or applies later in the run, is
// not pruned. staying (nil: unknown) are the components that stay.
func (r *release) crdPruneRefusal(staying func() []string) error {
	want := map[string]bool{}
	for _, o := range r.objects {
		want[resourceKey(resourceOf(o))] = true
	}
	holders := r.holders()
	var errs []error
	for k, res := range r.inventory {
		if !res.CRD || want[k] || res.Keep || res.Adopted || len(holders[k]) > 0 || len(plannedBy(r.planned, res, false)) > 0 {
			continue
		}
		ofCRD := func(gvk schema.GroupVersionKind) bool {
			m, err := r.cl.anyVersionMapping(gvk)
			return err == nil && m.Resource.Resource+"."+m.Resource.Group == res.Name
		}
		for _, o := range r.objects {
			if !o.crd && ofCRD(o.u.GroupVersionKind()) {
				errs = append(errs, fmt.Errorf("%s: %s: its CustomResourceDefinition %s is no longer in the manifests, and pruning it would delete every %s in the cluster, this one included: put the CRD back in the manifests, or remove its %s objects from them first", o.source, o.ref(), res.Name, o.u.GetKind(), o.u.GetKind()))
				break
			}
		}
		for _, comp := range r.stayingUsers(staying, ofCRD) {
			errs = append(errs, fmt.Errorf("CustomResourceDefinition %s is no longer in the manifests, and pruning it would delete every object of its kind in the cluster, those component %s of this stack records included: put the CRD back; or, to retire the kind, remove them from %s's manifests and deploy it first (gantry deploy -c %s), then this one", res.Name, comp, comp, comp))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	return fmt.Errorf("nothing was applied:\n%w", errors.Join(errs...))
}

// stayingUsers are the components (sorted) staying in the stack whose
// recorded objects the state says are of a kind ofCRD selects.
func (r *release) stayingUsers(staying func() []string, ofCRD func(schema.GroupVersionKind) bool) []string {
	if r.others == nil {
		return nil
	}
	stays := map[string]bool{}
	if staying != nil {
		for _, c := range staying() {
			stays[c] = true
		}
	}
	var out []string
	for comp, list := range r.others() {
		if staying != nil && !stays[comp] && comp != r.id.component {
			continue
		}
		for _, res := range list {
			if !res.CRD && ofCRD(gvkOf(res)) {
				out = append(out, comp)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// leaveCRDs says, for an undeploy, that a chart's crds/ CRDs stay in the
// cluster, and that the recorded CRDs left (leftCRDs: a gantry before
// helm's rule for crds/ recorded them) do, and forgets those.
func (r *release) leaveCRDs(ctx context.Context, objs []*object, left map[string]string) error {
	for _, o := range objs {
		if o.createOnly && left[resourceKey(resourceOf(o))] == "" {
			r.logf("%s left in place: %s", display(o.u), crdsDirReason)
		}
	}
	return r.forgetLeft(ctx, left)
}

// forgetLeft forgets the recorded resources left in place (by
// resourceKey, with why), each with a line saying why, and removes the
// gantry annotations that name the instance from them (unmark).
func (r *release) forgetLeft(ctx context.Context, left map[string]string) error {
	if len(left) == 0 {
		return nil
	}
	for _, k := range slices.Sorted(maps.Keys(left)) {
		res, ok := r.inventory[k]
		if !ok {
			continue
		}
		r.logf("%s left in place: %s", strings.ToLower(res.Kind)+"/"+res.Name, left[k])
		delete(r.inventory, k)
		if err := r.unmark(ctx, gvkOf(res), res.Namespace, res.Name); err != nil {
			return errors.Join(err, r.record())
		}
	}
	return r.record()
}

// unmark removes gantry's annotations (and its managed-by label) from an
// object in the cluster that the instance forgets and leaves in place,
// when they name the instance: an older gantry marked a chart's crds/ CRDs
// as its own, and nobody owns them now — another stack would otherwise be
// refused one as this component's, and told to undeploy it from here,
// which leaves it. Annotations that name another are left as they are.
func (r *release) unmark(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string) error {
	u, err := r.cl.get(ctx, gvk, namespace, name)
	if err != nil {
		return fmt.Errorf("read %s/%s: %s", strings.ToLower(gvk.Kind), name, apiMessage(err))
	}
	if u == nil {
		return nil
	}
	if o := ownerOf(u); !o.gantry || o.stack != r.id.stack || o.component != r.id.component {
		return nil
	}
	md := map[string]any{"resourceVersion": u.GetResourceVersion(),
		"annotations": map[string]any{annotationStack: nil, annotationComponent: nil, annotationAdopted: nil}}
	if u.GetLabels()[labelManagedBy] == "gantry" {
		md["labels"] = map[string]any{labelManagedBy: nil}
	}
	patch, err := json.Marshal(map[string]any{"metadata": md})
	if err != nil {
		return err
	}
	err = r.cl.mergePatch(ctx, gvk, namespace, name, patch)
	switch {
	case apierrors.IsConflict(err) || apierrors.IsNotFound(err):
		r.logf("%s keeps gantry's annotations: it changed while gantry removed them", display(u))
	case err != nil:
		return fmt.Errorf("remove gantry's annotations from %s: %s", display(u), apiMessage(err))
	default:
		r.logf("%s: gantry's annotations removed (nobody owns it now)", display(u))
	}
	return nil
}

// begin tells the source's record that the action starts.
func (r *release) begin(ctx context.Context) error {
	if r.rec == nil {
		return nil
	}
	return r.rec.Begin(ctx)
}

// checkPlanned makes sure the stages after expansion are among the planned
// ones: the plan was built from the inputs before parameters were known,
// and an object must not land in a stage the plan does not run. A planned
// stage the run has no objects for does nothing.
func checkPlanned(plannedIDs []string, sts []stage) error {
	if plannedIDs == nil {
		return nil // not run from a plan (a unit test of the stages)
	}
	ids := map[string]bool{}
	for _, id := range plannedIDs {
		if id == stageAll {
			return nil // the plan runs whatever stages there are
		}
		ids[id] = true
	}
	var errs []error
	for _, st := range sts {
		if !ids[st.ID] {
			errs = append(errs, fmt.Errorf("after expanding parameters there is a stage the plan does not have (%s): keep hook and werf.io/weight annotations, and whether an object exists, free of parameters", st.Label))
		}
	}
	return errors.Join(errs...)
}

// mark labels an object as gantry's and says which stack and component
// deployed it.
func mark(u *unstructured.Unstructured, stack, component string) {
	l := u.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l[labelManagedBy] = "gantry"
	u.SetLabels(l)
	a := u.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	if stack != "" {
		a[annotationStack] = stack
	}
	if component != "" {
		a[annotationComponent] = component
	}
	u.SetAnnotations(a)
}

// place gives objects of namespaced kinds that name no namespace the
// release namespace, and checks that the cluster serves every kind — or
// that a CRD of the manifests defines it.
//
// For a delete, an object of a kind the cluster does not serve (its CRD
// was deleted, or an operator's upgrade stopped serving the version the
// manifests name) cannot exist: it is left out, with a line that says so,
// and the others are returned. An undeploy deletes what the state
// recorded, whatever the manifests say now.
func (r *release) place(objs []*object, deleting bool) ([]*object, error) {
	scopes := crdKinds(objs)
	var errs []error
	kept := objs[:0:0]
	for _, o := range objs {
		gvk := o.u.GroupVersionKind()
		namespaced := false
		m, err := r.cl.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		switch {
		case err == nil:
			namespaced = m.Scope.Name() == meta.RESTScopeNameNamespace
		case meta.IsNoMatchError(err):
			scope, ok := scopes[gvk.GroupKind()]
			if !ok && deleting {
				if other, oerr := r.cl.anyVersionMapping(gvk); oerr == nil {
					// Served at another version: the object is one,
					// asked at whichever.
					namespaced = other.Scope.Name() == meta.RESTScopeNameNamespace
					break
				}
				r.logf("%s: %s: the cluster serves no %s at any version: there is none of it to delete", o.source, o.ref(), gvkText(gvk))
				continue
			}
			if !ok {
				errs = append(errs, fmt.Errorf("%s: %s: the cluster serves no %s, and no CRD of the manifests defines it", o.source, o.ref(), gvkText(gvk)))
				continue
			}
			namespaced = scope != "Cluster"
		default:
			return nil, fmt.Errorf("ask %s which kinds it serves: %w", r.cl.server, err)
		}
		kept = append(kept, o)
		switch {
		case namespaced && o.u.GetNamespace() == "":
			o.u.SetNamespace(r.cl.namespace)
		case !namespaced:
			o.u.SetNamespace("")
		}
	}
	// One object written twice — once without a namespace, once in the
	// release namespace — is the same object once placed.
	seen := map[string]*object{}
	for _, o := range kept {
		k := resourceKey(resourceOf(o))
		if first, ok := seen[k]; ok {
			errs = append(errs, fmt.Errorf("%s: %s is the object of %s too (in namespace %s)", o.source, o.ref(), first.source, o.u.GetNamespace()))
			continue
		}
		seen[k] = o
	}
	return kept, errors.Join(errs...)
}

// crdKinds are the kinds the CRDs among objs define, with their scope
// (Namespaced or Cluster).
func crdKinds(objs []*object) map[schema.GroupKind]string {
	out := map[schema.GroupKind]string{}
	for _, o := range objs {
		if o.u.GetKind() != "CustomResourceDefinition" {
			continue
		}
		group, _, _ := unstructured.NestedString(o.u.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(o.u.Object, "spec", "names", "kind")
		scope, _, _ := unstructured.NestedString(o.u.Object, "spec", "scope")
		out[schema.GroupKind{Group: group, Kind: kind}] = scope
	}
	return out
}

// validate asks the API server to validate every object with a
// server-side dry run; every problem is reported, with the manifest and
// document it comes from. Objects whose CRD this deploy creates, and those
// that go into a namespace it creates, cannot be checked before. A hook is
// checked as the creation it will be: the one an earlier run left is
// deleted before it is created (hook), so checking it as a change of that
// one would refuse what cannot change in place (a Job's pod template).
// live holds the objects of the deploy that exist: a namespace of the
// manifests among them is not created by the deploy, and the objects in
// it are checked as the changes they are.
func (r *release) validate(ctx context.Context, live map[*object]metav1.Object) error {
	// The API server cannot validate objects of a kind whose CRD the same
	// deploy creates; a chart's crds/ CRD that exists is left as it is,
	// so the objects of its kinds are checked against it.
	byCRD := crdKinds(r.objects)
	existing, err := r.existingCreateOnly(ctx)
	if err != nil {
		return err
	}
	for gk := range existing {
		delete(byCRD, gk)
	}
	if err := r.checkServed(existing); err != nil {
		return err
	}
	newNS := map[string]bool{}
	for _, o := range r.objects {
		if isNamespace(o) && live[o] == nil {
			newNS[o.u.GetName()] = true
		}
	}
	var mu sync.Mutex
	var errs []error
	r.each(ctx, r.objects, func(ctx context.Context, o *object) error {
		if _, ok := byCRD[o.u.GroupVersionKind().GroupKind()]; ok {
			return nil
		}
		var err error
		switch {
		case o.createOnly:
			// Created only when missing: one that exists is left as it
			// is, whatever it holds.
			err = r.cl.createDryRun(ctx, o.u.DeepCopy())
			if apierrors.IsAlreadyExists(err) {
				err = nil
			}
		case newNS[o.u.GetNamespace()]:
			// Its namespace does not exist yet: the server validates a
			// creation in one that does.
			u := o.u.DeepCopy()
			u.SetNamespace(metav1.NamespaceDefault)
			err = r.cl.validateCreate(ctx, u)
		case o.isHook():
			err = r.cl.validateCreate(ctx, o.u.DeepCopy())
		default:
			_, err = r.cl.apply(ctx, o.u.DeepCopy(), true)
		}
		if err == nil {
			return nil
		}
		mu.Lock()
		errs = append(errs, fmt.Errorf("%s: %s: %s", o.source, o.ref(), apiMessage(err)))
		mu.Unlock()
		return nil
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(errs) > 0 {
		sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
		return fmt.Errorf("the API server refuses %d of %d objects, so nothing was applied:\n%w", len(errs), len(r.objects), errors.Join(errs...))
	}
	return nil
}

// liveCRD is a chart's crds/ CRD found in the cluster: the deploy leaves
// it as it is.
type liveCRD struct {
	o *object
	// group is the group it defines; served the versions of it the CRD
	// in the cluster serves.
	group  string
	served []string
}

// existingCreateOnly reads the chart's crds/ CRDs among the objects that
// exist in the cluster, by the group and kind they define.
func (r *release) existingCreateOnly(ctx context.Context) (map[schema.GroupKind]*liveCRD, error) {
	out := map[schema.GroupKind]*liveCRD{}
	for _, o := range r.objects {
		if !o.createOnly || !isCRD(o.u) {
			continue
		}
		u, err := r.cl.get(ctx, o.u.GroupVersionKind(), "", o.u.GetName())
		if err != nil {
			return nil, fmt.Errorf("read %s: %s", display(o.u), apiMessage(err))
		}
		if u == nil {
			continue
		}
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
		out[schema.GroupKind{Group: group, Kind: kind}] = &liveCRD{o: o, group: group, served: servedVersions(u)}
	}
	return out, nil
}

// checkServed refuses objects of a kind a chart's crds/ CRD in the
// cluster defines (existing) in a version it does not serve: the deploy
// leaves that CRD as it is, so they could not be applied, and the deploy
// would stop half-way.
func (r *release) checkServed(existing map[schema.GroupKind]*liveCRD) error {
	var errs []error
	var crds []string
	for _, o := range r.objects {
		gvk := o.u.GroupVersionKind()
		crd := existing[gvk.GroupKind()]
		if crd == nil || slices.Contains(crd.served, gvk.Version) {
			continue
		}
		errs = append(errs, fmt.Errorf("%s: %s: %s is served in version %s by the cluster's %s, not in %s",
			o.source, o.ref(), gvk.Kind, strings.Join(crd.served, ", "), display(crd.o.u), gvk.Version))
		crds = append(crds, chartFile(crd.o.source))
	}
	if len(errs) == 0 {
		return nil
	}
	slices.Sort(crds)
	return fmt.Errorf("the chart's crds/ define versions the cluster's CRDs do not serve, so nothing was applied: a CRD of a chart's crds/ that exists is left as it is (helm does not update it either); update it first: kubectl apply -f <the chart's folder>/%s\n%w",
		strings.Join(slices.Compact(crds), " -f <the chart's folder>/"), errors.Join(errs...))
}

// servedVersions are the versions a CRD serves.
func servedVersions(u *unstructured.Unstructured) []string {
	versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
	var out []string
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		name, _ := vm["name"].(string)
		if served, _ := vm["served"].(bool); served && name != "" {
			out = append(out, name)
		}
	}
	return out
}

// differsFromChart says, for a chart's crds/ CRD left as it is, how the
// one in the cluster differs from the chart's in the versions it serves;
// "" when it does not.
func differsFromChart(live *unstructured.Unstructured, o *object) string {
	have, want := servedVersions(live), servedVersions(o.u)
	if slices.Equal(have, want) {
		return ""
	}
	return fmt.Sprintf("; it differs from the chart's: it serves %s, the chart's serves %s (update it: kubectl apply -f <the chart's folder>/%s)",
		strings.Join(have, ", "), strings.Join(want, ", "), chartFile(o.source))
}

// chartFile is the file of a chart an object's source names, relative to
// the chart's folder: without its line and column, and without the
// chart's name, which a rendered chart's file names start with
// ("web/crds/widgets.yaml:1:1": crds/widgets.yaml).
func chartFile(source string) string {
	name, _, _ := strings.Cut(source, ":")
	if _, rest, ok := strings.Cut(name, "/"); ok {
		return rest
	}
	return name
}

// apiMessage is an API error as people read it: the server's message.
func apiMessage(err error) string {
	var st apierrors.APIStatus
	if errors.As(err, &st) && st.Status().Message != "" {
		return st.Status().Message
	}
	return err.Error()
}

// releaseRequests is how many requests a release has in flight at most:
// those it makes for its objects (applies, dry runs, deletions, the lists
// and watch openings of tracking) go through cluster.ask. It bounds the
// load a release puts on the API server, which the client does not
// rate-limit (restConfig). Watches, once open, are not counted: every
// object of a group is watched from the start, one watch each while it is
// not ready (or not gone).
const releaseRequests = 16

// each runs fn for every object at once (their requests releaseRequests at
// a time: cluster.ask); it returns the first error, which cancels the
// others. Run a few objects at a time instead, objects slow to become
// ready or to go would hold back the others, and a failure behind them
// would be seen only once they were done or timed out.
func (r *release) each(ctx context.Context, objs []*object, fn func(context.Context, *object) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for _, o := range objs {
		wg.Go(func() {
			if err := fn(ctx, o); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		})
	}
	wg.Wait()
	return first
}

// record writes the inventory to the state, durably.
func (r *release) record() error {
	if r.keep == nil {
		return nil
	}
	list := make([]state.Resource, 0, len(r.inventory))
	for _, res := range r.inventory {
		list = append(list, res)
	}
	sort.Slice(list, func(i, j int) bool {
		a, b := list[i], list[j]
		if a.Weight != b.Weight {
			return a.Weight < b.Weight
		}
		if ra, rb := kindRank(a.Kind), kindRank(b.Kind); ra != rb {
			return ra < rb
		}
		return resourceKey(a) < resourceKey(b)
	})
	cluster := r.cluster
	if len(list) == 0 {
		cluster = "" // nothing is anywhere: the next deploy may go anywhere
	}
	return r.keep(list, cluster)
}

// whyEmpty says why a planned stage has nothing to do: the hooks of an
// install in a deploy that turned out an upgrade (or the other way round:
// a plan that could not tell plans both), or no object left in it after
// the parameters were expanded.
func (r *release) whyEmpty(id string) string {
	if sid, err := parseStageID(id); err == nil && sid.Kind == stageHook {
		switch {
		case r.upgrade && (sid.Phase == eventPreInstall || sid.Phase == eventPostInstall):
			return "the release exists, and this deploy upgrades it (its upgrade hooks run)"
		case !r.upgrade && (sid.Phase == eventPreUpgrade || sid.Phase == eventPostUpgrade):
			return "the release is new, and this deploy installs it (its install hooks run)"
		}
	}
	return "no object is in this stage any more"
}

// run carries out one stage after prepare.
func (r *release) run(ctx context.Context, c *plugin.Call, id string) error {
	r.mu.Lock()
	r.out = c.Stdout
	r.mu.Unlock()
	switch id {
	case stageAll:
		return r.runAll(ctx, c)
	case plugin.StageOutputs:
		return r.readOutputs(ctx, c)
	}
	st, ok := r.stages[id]
	if !ok {
		r.logf("nothing to do: %s", r.whyEmpty(id))
		if id == "prune" {
			return r.prune(ctx)
		}
		return nil
	}
	switch {
	case id == "crds":
		return r.applyCRDs(ctx, st.Objects)
	case strings.HasPrefix(id, "hook:"):
		phase, _, _ := strings.Cut(strings.TrimPrefix(id, "hook:"), ":")
		if len(st.Objects) != 1 {
			return fmt.Errorf("internal error: hook stage %s has %d objects", id, len(st.Objects))
		}
		return r.hook(ctx, st.Objects[0], phase)
	case strings.HasPrefix(id, "group:"), id == stageNamespaces:
		return r.group(ctx, st.Objects)
	case id == "prune":
		return r.prune(ctx)
	case id == stageFinish && r.rec != nil:
		return r.rec.Finish(ctx, c.Stdout)
	case strings.HasPrefix(id, "delete:"), id == stageDeleteCRDs, id == stageDeleteNamespaces:
		return r.deleteAll(ctx, st.Objects)
	}
	return fmt.Errorf("internal error: unknown stage %s", id)
}

// runAll runs the stages the plan could not list, in order; the finish
// stage stays the plan's own.
func (r *release) runAll(ctx context.Context, c *plugin.Call) error {
	for _, id := range r.order {
		if id == stageFinish {
			continue
		}
		r.logf("== %s", r.stages[id].Label)
		if err := r.run(ctx, c, id); err != nil {
			return err
		}
	}
	return nil
}

// display names an object as kubectl does: deployment/web.
func display(u *unstructured.Unstructured) string {
	return strings.ToLower(u.GetKind()) + "/" + u.GetName()
}

func (r *release) timeoutOf(o *object) time.Duration {
	if d, ok := o.timeout(); ok {
		return d
	}
	return r.timeout
}

// applyCRDs applies the CRDs (a chart's crds/ are created when missing,
// and otherwise left as they are: createMissing), waits until each is
// established and until the API serves the kinds they define — as the
// CRD in the cluster defines them.
func (r *release) applyCRDs(ctx context.Context, objs []*object) error {
	var owned, createOnly []*object
	for _, o := range objs {
		if o.createOnly {
			createOnly = append(createOnly, o)
		} else {
			owned = append(owned, o)
		}
	}
	if err := r.applyAll(ctx, owned); err != nil {
		return err
	}
	if err := r.createMissing(ctx, createOnly); err != nil {
		return err
	}
	if err := r.awaitAll(ctx, objs, false); err != nil {
		return err
	}
	for _, o := range objs {
		r.mu.Lock()
		u := r.live[o]
		r.mu.Unlock()
		if u == nil {
			u = o.u
		}
		group, _, _ := unstructured.NestedString(u.Object, "spec", "group")
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "names", "kind")
		versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
		for _, v := range versions {
			vm, _ := v.(map[string]any)
			name, _ := vm["name"].(string)
			if served, _ := vm["served"].(bool); !served || name == "" {
				continue
			}
			tctx, cancel := context.WithTimeout(ctx, r.timeoutOf(o))
			err := r.cl.awaitServed(tctx, schema.GroupVersionKind{Group: group, Version: name, Kind: kind})
			cancel()
			if err != nil {
				return fmt.Errorf("%s: %w", display(o.u), err)
			}
		}
	}
	return nil
}

// createMissing creates the objects that do not exist, as helm installs a
// chart's crds/: one that exists (made by anyone: another release, another
// stack, by hand) is left as it is, and read for the wait that follows.
func (r *release) createMissing(ctx context.Context, objs []*object) error {
	return r.each(ctx, objs, func(ctx context.Context, o *object) error {
		how := "created"
		u, err := r.cl.create(ctx, o.u, false)
		if apierrors.IsAlreadyExists(err) {
			how = "exists: left as it is (a chart's crds/ are created only when missing, as helm installs them)"
			u, err = r.cl.get(ctx, o.u.GroupVersionKind(), o.u.GetNamespace(), o.u.GetName())
			if err == nil && u == nil {
				err = errors.New("it was deleted right after it was found")
			}
			if err == nil {
				how += differsFromChart(u, o)
			}
			if err == nil && r.forgotten[o] {
				err = r.unmark(ctx, o.u.GroupVersionKind(), "", o.u.GetName())
			}
		}
		if err != nil {
			return fmt.Errorf("create %s (%s): %s", display(o.u), o.source, apiMessage(err))
		}
		r.mu.Lock()
		r.live[o] = u
		r.mu.Unlock()
		r.logf("%s %s", display(o.u), how)
		return nil
	})
}

// applyAll applies objects in the order given: those of one kind at once,
// the kinds one after the other (the seed's kind order).
func (r *release) applyAll(ctx context.Context, objs []*object) error {
	// Who owns each object is read again: prepare read it, maybe
	// minutes ago (reclaimAll).
	live, err := r.reclaimAll(ctx, objs)
	if err != nil {
		return err
	}
	for _, kind := range byKind(objs) {
		err := r.each(ctx, kind, func(ctx context.Context, o *object) error {
			// An object gantry adopts: its maker's fields become
			// gantry's first (takeover.go).
			var took *takeover
			if needsTakeover(live[o]) {
				var err error
				if took, err = r.cl.takeOver(ctx, o.u); err != nil {
					return fmt.Errorf("apply %s (%s): %w", display(o.u), o.source, err)
				}
			}
			applied, err := r.cl.apply(ctx, o.u, false)
			if err != nil && took != nil {
				return r.takeoverFailed(ctx, o, took, err)
			}
			if err != nil {
				return fmt.Errorf("apply %s (%s): %s", display(o.u), o.source, apiMessage(err))
			}
			r.mu.Lock()
			r.live[o] = applied
			before, looked := r.before[o]
			r.mu.Unlock()
			how := appliedHow(before, looked, applied.GetResourceVersion())
			if took != nil {
				how += " (" + took.describe(took.changes(applied.Object, o.u, 10)) + ")"
			}
			r.logf("%s %s", display(o.u), how)
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// takeoverFailed is the error of an apply that failed after a takeover:
// the object gets its field managers back (undo), and the error says
// which fields the takeover would change — those a fresh object with the
// manifests' content gets otherwise (an immutable field the manifests
// leave out is the usual cause).
func (r *release) takeoverFailed(ctx context.Context, o *object, took *takeover, err error) error {
	msg := fmt.Sprintf("apply %s (%s): %s", display(o.u), o.source, apiMessage(err))
	if uerr := r.cl.undo(ctx, o.u, took); uerr != nil {
		return fmt.Errorf("%s\n(gantry could not give %s its fields back: %s; the next deploy takes them over again, removing or resetting those the manifests leave out)", msg, strings.Join(took.managers, ", "), apiMessage(uerr))
	}
	if ctx.Err() != nil {
		return errors.New(msg)
	}
	what := "the fields the manifests leave out"
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if fresh := r.cl.defaults(dctx, o.u); fresh != nil {
		removed, reset, more := took.changes(fresh.Object, o.u, 10)
		if paths := append(removed, reset...); len(paths) > 0 {
			what = strings.Join(paths, ", ")
			if more > 0 {
				what += fmt.Sprintf(" and %d more", more)
			}
		}
	}
	return fmt.Errorf("%s\n(it exists, made by %s; adopting it takes over the fields that tool set, which removes or resets to their defaults those the manifests leave out — %s: put the values that must stay in the manifests. The object is as it was.)", msg, strings.Join(took.managers, ", "), what)
}

// appliedHow says what an apply did to an object, as kubectl apply does:
// created, configured (changed), unchanged (its resource version is the
// one prepare read); applied when prepare did not look it up.
func appliedHow(before string, looked bool, after string) string {
	switch {
	case !looked:
		return "applied"
	case before == "":
		return "created"
	case before == after:
		return "unchanged"
	}
	return "configured"
}

// byKind cuts objects in the order given into runs of one kind.
func byKind(objs []*object) [][]*object {
	var out [][]*object
	for i := 0; i < len(objs); {
		j := i + 1
		for j < len(objs) && objs[j].u.GetKind() == objs[i].u.GetKind() {
			j++
		}
		out = append(out, objs[i:j])
		i = j
	}
	return out
}

// awaitAll tracks objects to readiness together, every one from the
// start (each); the first failure ends the wait for the others. An
// object the apply answered with as ready (a
// ConfigMap, a Secret, an unchanged Deployment) is not asked about again:
// the answer is the object as stored, as fresh as a list right after it,
// and a large release is mostly such objects.
//
// The first failure ends the wait for the others; the error names, after
// it, every other object not ready then, with the last thing it said: the
// objects of a group that time out together are fixed together, not one
// timeout after another.
func (r *release) awaitAll(ctx context.Context, objs []*object, asHook bool) error {
	var mu sync.Mutex
	last := map[*object]string{} // what each object said last
	ready := map[*object]bool{}
	err := r.each(ctx, objs, func(ctx context.Context, o *object) error {
		r.mu.Lock()
		u := r.live[o]
		r.mu.Unlock()
		if u != nil {
			if ok, said := readyOnApply(u, asHook); ok {
				r.logf("%s %s", display(u), said)
				mu.Lock()
				ready[o] = true
				mu.Unlock()
				return nil
			}
		} else {
			u = o.u
		}
		name := display(u)
		err := r.cl.awaitReady(ctx, u, asHook, r.timeoutOf(o), func(msg string) {
			mu.Lock()
			last[o] = msg
			mu.Unlock()
			r.logf("%s %s", name, msg)
		})
		if err != nil {
			return &objectError{o: o, err: fmt.Errorf("%s: %w", name, err)}
		}
		mu.Lock()
		ready[o] = true
		mu.Unlock()
		return nil
	})
	var failed *objectError
	if !errors.As(err, &failed) || ctx.Err() != nil {
		return err // an interrupt stops every wait: nothing more to say
	}
	var others []string
	mu.Lock()
	for _, o := range objs {
		if o == failed.o || ready[o] {
			continue
		}
		msg := last[o]
		if msg == "" {
			msg = "not ready yet"
		}
		others = append(others, fmt.Sprintf("%s: %s", display(o.u), msg))
	}
	mu.Unlock()
	if len(others) == 0 {
		return failed.err
	}
	return fmt.Errorf("%w\nnot ready either, when it failed: %s", failed.err, strings.Join(others, "; "))
}

// objectError is the failure of one object of a group.
type objectError struct {
	o   *object
	err error
}

func (e *objectError) Error() string { return e.err.Error() }
func (e *objectError) Unwrap() error { return e.err }

// group deploys one weight group: it waits for the external dependencies
// of its objects, applies them in kind order and tracks them to
// readiness together.
func (r *release) group(ctx context.Context, objs []*object) error {
	if err := r.awaitExternal(ctx, objs); err != nil {
		return err
	}
	if err := r.applyAll(ctx, objs); err != nil {
		return err
	}
	return r.awaitAll(ctx, objs, false)
}

// externalKindsServed refuses, before anything is applied, an external
// dependency of a kind the cluster does not serve and no CRD of the
// manifests defines: it would fail only when its weight group came, after
// the earlier groups were applied. A CRD another component installs is
// served by the time this one runs when this one depends on it.
func (r *release) externalKindsServed() error {
	defined := r.crdNames()
	var errs []error
	for _, o := range r.objects {
		for _, d := range o.externalDeps() {
			if _, err := r.cl.kindFor(d.Kind, d.Group); err == nil || defined(d.Kind, d.Group) {
				continue
			}
			errs = append(errs, fmt.Errorf("%s: %s: external dependency %s: the cluster serves no kind %q%s, and no CRD of the manifests defines it (a typo? a CRD another component installs must be deployed first: make this component depend on that one)",
				o.source, o.ref(), d.Name, d.Kind, groupText(d.Group)))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s of a kind the cluster does not serve, so nothing was applied:\n%w", plural(len(errs), "external dependency", "external dependencies"), errors.Join(errs...))
	}
	return nil
}

// crdNames reports whether a CRD among the objects defines a kind as an
// external dependency names it: its kind, plural or singular name, in its
// group when one is given.
func (r *release) crdNames() func(kind, group string) bool {
	type name struct{ name, group string }
	names := map[name]bool{}
	for _, o := range r.objects {
		if !isCRD(o.u) {
			continue
		}
		group, _, _ := unstructured.NestedString(o.u.Object, "spec", "group")
		for _, f := range []string{"kind", "plural", "singular"} {
			if v, _, _ := unstructured.NestedString(o.u.Object, "spec", "names", f); v != "" {
				names[name{strings.ToLower(v), group}] = true
				names[name{strings.ToLower(v), ""}] = true
			}
		}
	}
	return func(kind, group string) bool { return names[name{strings.ToLower(kind), group}] }
}

// awaitExternal waits until every external dependency of the objects
// exists and is ready: resources the release does not own, named by
// werf's annotations. Each is waited for as long as the object that
// waits for it may take (its gantry.dev/timeout, else the config's).
func (r *release) awaitExternal(ctx context.Context, objs []*object) error {
	type dep struct {
		gvk             schema.GroupVersionKind
		namespace, name string
		timeout         time.Duration
		of              string
	}
	seen := map[string]int{}
	var deps []dep
	for _, o := range objs {
		for _, d := range o.externalDeps() {
			gvk, err := r.cl.kindFor(d.Kind, d.Group)
			if err != nil {
				return fmt.Errorf("%s: external dependency %s: %w", display(o.u), d.Name, err)
			}
			ns := d.Namespace
			if m, err := r.cl.mapping(gvk); err == nil && m.Scope.Name() != meta.RESTScopeNameNamespace {
				ns = ""
			} else if ns == "" {
				ns = r.cl.namespace
			}
			key := gvk.String() + "/" + ns + "/" + d.Resource
			if i, ok := seen[key]; ok {
				// Waited for once, as long as the most patient object
				// that waits for it.
				deps[i].timeout = max(deps[i].timeout, r.timeoutOf(o))
				continue
			}
			seen[key] = len(deps)
			deps = append(deps, dep{gvk, ns, d.Resource, r.timeoutOf(o), display(o.u)})
		}
	}
	if len(deps) == 0 {
		return nil
	}
	objsOf := make([]*object, len(deps))
	timeouts := make(map[*object]time.Duration, len(deps))
	for i, d := range deps {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(d.gvk)
		u.SetNamespace(d.namespace)
		u.SetName(d.name)
		objsOf[i] = &object{u: u, source: "external dependency of " + d.of}
		timeouts[objsOf[i]] = d.timeout
	}
	r.logf("waiting for %s", plural(len(deps), "external dependency", "external dependencies"))
	return r.each(ctx, objsOf, func(ctx context.Context, o *object) error {
		name := display(o.u)
		if o.u.GetNamespace() != "" {
			name += " (namespace " + o.u.GetNamespace() + ")"
		}
		err := r.cl.awaitReady(ctx, o.u, false, timeouts[o], func(msg string) { r.logf("external %s %s", name, msg) })
		if err != nil {
			return fmt.Errorf("external dependency %s: %w", name, err)
		}
		return nil
	})
}

// hook runs one hook: the one an earlier run left goes first, the new one
// is created and tracked until it completes, and then deleted as its
// policies say. Hooks of a delete are deleted once they succeed: the
// release they belonged to is gone.
//
// A hook runs anew each time, so the one left goes whatever the policies:
// before-hook-creation leaves the previous one until now; hook-succeeded or
// hook-failed alone leave one that ended otherwise, or that a killed run
// left. Applied over it, the new one would change it in place — refused for
// what cannot change (a Job's pod template), and a Job applied unchanged
// does not run again (helm v4 applies over it so; helm's client-side create
// fails with "already exists"). Only the component's own is deleted:
// prepare refused another's, and hookRefusal refuses it again.
func (r *release) hook(ctx context.Context, o *object, phase string) error {
	// A hook of a deploy waits for its external dependencies as a weight
	// group does (seed 004): a migration Job for the database another
	// component deploys. The previous one stays until then. A delete's
	// does not: what it depended on may be gone already (undeployed
	// first), and waiting for it would fail every undeploy.
	if phase != eventPreDelete && phase != eventPostDelete {
		if err := r.awaitExternal(ctx, []*object{o}); err != nil {
			return err
		}
	}
	policies := o.deletePolicies()
	name := display(o.u)
	gvk := o.u.GroupVersionKind()
	// Prepare refused a hook whose name another's object has; this is
	// checked again now, as the object may have come since (hookRefusal).
	live, err := r.cl.lookup(ctx, []*object{o})
	if err != nil {
		return err
	}
	if err := r.id.hookRefusal(o, live[o]); err != nil {
		return err
	}
	if live[o] != nil {
		rm, err := r.cl.removeUID(ctx, gvk, o.u.GetNamespace(), o.u.GetName(), live[o].GetUID())
		if apierrors.IsConflict(err) {
			return fmt.Errorf("delete the previous %s: it was deleted and made again while gantry looked at it; run again", name)
		}
		if err != nil {
			return fmt.Errorf("delete the previous %s: %s", name, apiMessage(err))
		}
		switch {
		case rm == wasAbsent:
		case slices.Contains(policies, policyBeforeCreation):
			r.logf("%s: deleting the previous one", name)
		default:
			r.logf("%s: deleting the one an earlier run left (a hook runs anew each time, whatever its delete policy)", name)
		}
		if rm == removing {
			if err := r.cl.awaitGone(ctx, gvk, o.u.GetNamespace(), o.u.GetName(), r.timeoutOf(o)); err != nil {
				return fmt.Errorf("delete the previous %s: %w", name, err)
			}
		}
		// The apply that follows creates it.
		r.mu.Lock()
		if _, looked := r.before[o]; looked {
			r.before[o] = ""
		}
		r.mu.Unlock()
	}
	r.logf("%s hook %s", phase, name)
	if err := r.applyAll(ctx, []*object{o}); err != nil {
		return err
	}
	err = r.awaitAll(ctx, []*object{o}, true)
	del := err == nil && (slices.Contains(policies, policySucceeded) || r.action == plugin.ActionDelete) ||
		err != nil && slices.Contains(policies, policyFailed)
	if del && ctx.Err() == nil {
		// The hook this run made (its uid), not whatever has its name.
		var uid types.UID
		r.mu.Lock()
		if u := r.live[o]; u != nil {
			uid = u.GetUID()
		}
		r.mu.Unlock()
		rm, derr := r.cl.removeUID(ctx, gvk, o.u.GetNamespace(), o.u.GetName(), uid)
		if apierrors.IsConflict(derr) {
			derr = errors.New("it was deleted and made again by someone else while it ran; left in place")
		}
		if derr != nil {
			return errors.Join(err, fmt.Errorf("delete hook %s: %s", name, apiMessage(derr)))
		}
		if rm == removing {
			if derr := r.cl.awaitGone(ctx, gvk, o.u.GetNamespace(), o.u.GetName(), r.timeoutOf(o)); derr != nil {
				return errors.Join(err, fmt.Errorf("delete hook %s: %w", name, derr))
			}
		}
		r.logf("%s deleted (%s)", name, deleteReason(err == nil, r.action))
		if r.action != plugin.ActionDelete {
			delete(r.inventory, resourceKey(resourceOf(o)))
			r.gone[o] = true
		}
	}
	return err
}

func deleteReason(ok bool, action string) string {
	switch {
	case ok && action == plugin.ActionDelete:
		return "the release is deleted"
	case ok:
		return policySucceeded
	}
	return policyFailed
}

// prune deletes what the instance created before and the manifests no
// longer have, after everything new is ready, and records what exists now,
// none of it pending any more.
func (r *release) prune(ctx context.Context) error {
	// Every stage before succeeded: what the deploy applied is there, and
	// the instance is installed (Upgrading).
	r.mu.Lock()
	for k, res := range r.inventory {
		res.Pending = false
		r.inventory[k] = res
	}
	r.mu.Unlock()
	want := map[string]bool{}
	for _, o := range r.objects {
		if !r.gone[o] {
			want[resourceKey(resourceOf(o))] = true
		}
	}
	var stale []state.Resource
	for k, res := range r.inventory {
		if !want[k] {
			stale = append(stale, res)
		}
	}
	if len(stale) == 0 {
		r.logf("nothing to prune")
		return r.record()
	}
	// Kept objects are only forgotten; the others are deleted as an
	// undeploy would delete them: the last created first, CRDs last.
	for _, res := range stale {
		if res.Keep {
			r.logf("%s/%s is no longer in the manifests; kept (helm.sh/resource-policy: keep)", strings.ToLower(res.Kind), res.Name)
			delete(r.inventory, resourceKey(res))
		}
	}
	// A Helm release's CRD that no revision shows a template made is
	// left: an older gantry recorded its chart's crds/ (leftCRDs).
	left := leftCRDs(nil, stale, r.id.helm)
	if err := r.forgetLeft(ctx, left); err != nil {
		return err
	}
	stale = slices.DeleteFunc(stale, func(res state.Resource) bool { return left[resourceKey(res)] != "" })
	var objs []*object
	for _, st := range deleteStages(nil, stale) {
		objs = append(objs, st.Objects...)
	}
	if err := r.deleteAll(ctx, objs); err != nil {
		return err
	}
	return r.record()
}

// deleteAll deletes objects, in the order given kind by kind, and waits
// until they are gone; the state forgets each once it is gone. Only
// objects that are the instance's to delete are (keepReason): gantry
// created them, their annotations name its stack, and no other component
// of the stack records them. The others — adopted (they existed before
// gantry applied them), another stack's or Helm release's now, or deployed
// by another component too — are forgotten and left in place, with a line
// saying why.
func (r *release) deleteAll(ctx context.Context, objs []*object) error {
	for _, kind := range byKind(objs) {
		live, err := r.cl.lookup(ctx, kind)
		if err == nil {
			err = r.each(ctx, kind, func(ctx context.Context, o *object) error {
				return r.deleteOwned(ctx, o, live[o])
			})
		}
		if rerr := r.record(); rerr != nil {
			return errors.Join(err, rerr)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// keepOrForget says why prune or undeploy leaves an object in place ("" to
// delete it: keepReason); live is its metadata (not nil). An object
// another component of the stack still records is forgotten by the
// instance — in the state, in one step with reading who records it
// (forgetIfHeld) — before this returns: of several components that give
// it up at once (--parallel), the last to forget it deletes it; none
// leaves it to another that leaves it too. The caller forgets every
// object it keeps (or deletes) in the inventory.
func (r *release) keepOrForget(o *object, res state.Resource, live metav1.Object) (string, error) {
	if why := r.id.keepReason(res.Adopted, live, nil); why != "" {
		return why, nil
	}
	key := resourceKey(resourceOf(o))
	var holders []string
	if r.forgetIfHeld != nil {
		var err error
		holders, err = r.forgetIfHeld(func(res state.Resource) bool { return resourceKey(res) == key })
		if err != nil {
			return "", err
		}
	} else {
		holders = r.holders()[key]
	}
	if why := r.id.keepReason(false, live, holders); why != "" {
		return why, nil
	}
	// A prune, or an orphan's teardown (a component renamed): an object
	// another component of this run is about to apply (moved from these
	// manifests to its) is left to it, not deleted and made again —
	// whichever of the two runs first. An undeploy plans no deploy.
	if by := plannedBy(r.planned, res, r.action == plugin.ActionDelete); len(by) > 0 {
		return "component " + strings.Join(by, ", ") + " of this stack applies it later in this run", nil
	}
	return "", nil
}

// deleteOwned deletes one object if it is the instance's to delete (live
// is its metadata, nil when it is gone: keepOrForget), and forgets it.
func (r *release) deleteOwned(ctx context.Context, o *object, live metav1.Object) error {
	gvk, ns, name := o.u.GroupVersionKind(), o.u.GetNamespace(), o.u.GetName()
	key := resourceKey(resourceOf(o))
	r.mu.Lock()
	res := r.inventory[key]
	r.mu.Unlock()
	forget := func() {
		r.mu.Lock()
		delete(r.inventory, key)
		r.mu.Unlock()
	}
	if live == nil {
		if res.Pending {
			// Recorded before a deploy that did not get to create it.
			r.logf("%s is not there: it was recorded before a deploy that did not finish", display(o.u))
		} else {
			r.logf("%s was already gone", display(o.u))
		}
		forget()
		return nil
	}
	why, err := r.keepOrForget(o, res, live)
	if err != nil {
		return err
	}
	if why != "" {
		r.logf("%s left in place: %s", display(o.u), why)
		forget()
		return nil
	}
	rm, err := r.cl.removeUID(ctx, gvk, ns, name, live.GetUID())
	if apierrors.IsConflict(err) {
		r.logf("%s left in place: it was deleted and made again while gantry looked at it", display(o.u))
		forget()
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete %s: %s", display(o.u), apiMessage(err))
	}
	if rm == removing {
		if err := r.cl.awaitGone(ctx, gvk, ns, name, r.timeoutOf(o)); err != nil {
			return fmt.Errorf("delete %s: %w", display(o.u), err)
		}
	}
	if rm == wasAbsent {
		r.logf("%s was already gone", display(o.u))
	} else {
		r.logf("%s deleted", display(o.u))
	}
	forget()
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
