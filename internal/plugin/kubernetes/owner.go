package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gantry-dev/gantry/internal/plugin"
	"github.com/gantry-dev/gantry/internal/state"
)

// Who owns an object in the cluster is read from its annotations: gantry's
// (gantry.dev/stack, gantry.dev/component, which every object gantry
// applies carries) and Helm's (meta.helm.sh/release-name and
// release-namespace, which helm install puts on a release's objects).
//
// The rule (docs/kubernetes.md, "Who owns an object"):
//   - a deploy applies an object that does not exist (it creates it), that
//     is already its own, or that nobody owns (it adopts it: the object
//     existed before gantry, and an undeploy leaves it in place);
//   - it takes over an object of another component of the same stack: the
//     component that applied an object last owns it, so that an object
//     moved from one component's manifests to another's changes hands in
//     one deploy, whichever component deploys first;
//   - it refuses, before anything is applied, an object of another stack
//     or of a Helm release other than its own;
//   - prune and undeploy delete only objects whose annotations name the
//     instance's stack and component, and that gantry created: others are
//     forgotten, with a line that says why.
const (
	annHelmRelease          = "meta.helm.sh/release-name"
	annHelmReleaseNamespace = "meta.helm.sh/release-namespace"
)

// HelmRelease names the Helm release an instance deploys (the helm
// plugin): the objects of that release, which helm installed, are the
// instance's own.
type HelmRelease struct {
	Name, Namespace string
	// Hooks are the hooks the release's revisions in Helm's storage
	// record, as "Kind/name": helm made them, with no annotation that says
	// so; a hook of the release's that finds one in the cluster (left by
	// before-hook-creation) deletes it, as helm would.
	Hooks map[string]bool
	// TemplateCRD reports whether a revision of the release in Helm's
	// storage holds the CRD of the name in its manifest: the chart's
	// templates/ made it (a revision's manifest never holds its crds/).
	// Prune and undeploy delete a recorded CRD of the release only when
	// this, or the chart as rendered now, shows it is a template's
	// (leftCRDs), and ask only then: reading the revisions is costly. nil
	// for none.
	TemplateCRD func(name string) bool
}

// identity is who an instance is, as the annotations of its objects say.
type identity struct {
	stack, component string
	// helm is the instance's Helm release; nil for none.
	helm *HelmRelease
}

// owner is who an object in the cluster belongs to, from its annotations.
type owner struct {
	// gantry marks an object that carries gantry's annotations; stack and
	// component are their values.
	gantry           bool
	stack, component string
	// helmRelease and helmNamespace are Helm's annotations.
	helmRelease, helmNamespace string
	// adopted marks an object a gantry deploy adopted once (it existed
	// before gantry): annotationAdopted.
	adopted bool
}

func ownerOf(m metav1.Object) owner {
	a := m.GetAnnotations()
	o := owner{stack: a[annotationStack], component: a[annotationComponent],
		helmRelease: a[annHelmRelease], helmNamespace: a[annHelmReleaseNamespace],
		adopted: a[annotationAdopted] == "true"}
	_, s := a[annotationStack]
	_, c := a[annotationComponent]
	o.gantry = s || c
	return o
}

// String says who the owner is, for messages.
func (o owner) String() string {
	switch {
	case o.gantry && o.stack == "":
		return "component " + o.component
	case o.gantry:
		return "component " + o.component + " of stack " + o.stack
	case o.helmRelease != "":
		return "helm release " + o.helmRelease + " in namespace " + o.helmNamespace
	}
	return "nobody gantry or helm knows"
}

// owns reports whether the object's annotations name the instance: gantry's
// naming its stack and component, or, without them, Helm's naming its
// release.
func (id identity) owns(o owner) bool {
	if o.gantry {
		return o.stack == id.stack && o.component == id.component
	}
	return id.helm != nil && o.helmRelease == id.helm.Name && o.helmNamespace == id.helm.Namespace
}

// claim is what a deploy does with an object of its manifests, given the
// object in the cluster.
type claim int

const (
	// claimCreate: the object does not exist; the deploy creates it.
	claimCreate claim = iota
	// claimOwn: the object is the instance's already.
	claimOwn
	// claimTakeOver: the object is another component's of the same stack;
	// the deploy takes it over (the last to apply it owns it).
	claimTakeOver
	// claimAdopt: the object existed before gantry and nobody owns it; the
	// deploy applies it, and an undeploy leaves it in place.
	claimAdopt
	// claimRefuse: the object is another stack's, or another Helm
	// release's; the deploy must not touch it.
	claimRefuse
)

// claimOf decides what a deploy does with an object; live is its metadata
// in the cluster, nil when it does not exist.
func (id identity) claimOf(live metav1.Object) (claim, owner) {
	if live == nil {
		return claimCreate, owner{}
	}
	o := ownerOf(live)
	switch {
	case id.owns(o):
		return claimOwn, o
	case o.gantry && o.stack == id.stack:
		return claimTakeOver, o
	case o.gantry, o.helmRelease != "":
		return claimRefuse, o
	}
	return claimAdopt, o
}

// refusal explains why a deploy does not apply an object another owns.
func (id identity) refusal(o *object, own owner) error {
	if !own.gantry {
		return fmt.Errorf("%s (%s): invalid ownership metadata: it belongs to %s (annotations %s, %s); gantry does not take over another release's objects: uninstall that release, or remove the object from here", o.ref(), o.source, own, annHelmRelease, annHelmReleaseNamespace)
	}
	return fmt.Errorf("%s (%s): it belongs to %s (annotations %s, %s); gantry does not take over another stack's objects: undeploy it from that stack, or remove it from here", o.ref(), o.source, own, annotationStack, annotationComponent)
}

// keepReason says why prune or undeploy leaves an object in the cluster
// rather than deleting it ("" to delete it). live is its metadata (not
// nil); adopted marks an object the state records as one that existed
// before gantry applied it — as does the object's own mark
// (annotationAdopted), which outlives the record;
// holders are the stack's other components that record it (they deploy
// it too, or took it over). An object is deleted when gantry created it,
// its annotations name the instance's stack (or, without gantry's, its
// Helm release), and no other component of the stack records it: then
// nobody else of the stack wants it, whichever component applied it last.
func (id identity) keepReason(adopted bool, live metav1.Object, holders []string) string {
	o := ownerOf(live)
	switch {
	case adopted, o.adopted:
		return "it existed before gantry applied it"
	case o.gantry && o.stack != id.stack, !o.gantry && o.helmRelease != "" && !id.owns(o):
		return "it belongs to " + o.String() + " now"
	case !o.gantry && !id.owns(o):
		return "it no longer carries gantry's annotations (gantry.dev/stack, gantry.dev/component): someone else made it again or took it over"
	case len(holders) > 0:
		why := "component " + holders[0] + " of this stack deploys it too"
		if len(holders) > 1 {
			why = "components " + strings.Join(holders, ", ") + " of this stack deploy it too"
		}
		if o.gantry && o.component != id.component {
			why = "it belongs to " + o.String() + " now"
		}
		return why
	}
	return ""
}

// lookup reads the metadata of objects in the cluster: nil for those that
// do not exist (or whose kind the cluster does not serve yet: its CRD comes
// with the deploy). Objects of one kind in one namespace are listed
// together when there are several, each read alone otherwise; a list the
// API server does not allow falls back to reading them one by one.
func (c *cluster) lookup(ctx context.Context, objs []*object) (map[*object]metav1.Object, error) {
	type groupKey struct {
		gvr schema.GroupVersionResource
		ns  string
	}
	groups := map[groupKey][]*object{}
	var order []groupKey
	for _, o := range objs {
		m, err := c.anyVersionMapping(o.u.GroupVersionKind())
		if err != nil {
			if meta.IsNoMatchError(err) {
				continue
			}
			return nil, err
		}
		ns := o.u.GetNamespace()
		if m.Scope.Name() != meta.RESTScopeNameNamespace {
			ns = ""
		}
		k := groupKey{m.Resource, ns}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], o)
	}
	out := map[*object]metav1.Object{}
	var mu sync.Mutex
	set := func(o *object, m metav1.Object) {
		mu.Lock()
		out[o] = m
		mu.Unlock()
	}
	get := func(ctx context.Context, gvr schema.GroupVersionResource, ns string, o *object) error {
		var m *metav1.PartialObjectMetadata
		err := c.ask(ctx, func() (err error) {
			m, err = c.metaClient(gvr, ns).Get(ctx, o.u.GetName(), metav1.GetOptions{})
			return err
		})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return fmt.Errorf("read %s to see who owns it: %s", display(o.u), apiMessage(err))
		}
		set(o, m)
		return nil
	}
	list := func(ctx context.Context, k groupKey, objs []*object) error {
		want := map[string]*object{}
		for _, o := range objs {
			want[o.u.GetName()] = o
		}
		opts := metav1.ListOptions{Limit: 500}
		for {
			var l *metav1.PartialObjectMetadataList
			err := c.ask(ctx, func() (err error) {
				l, err = c.metaClient(k.gvr, k.ns).List(ctx, opts)
				return err
			})
			if apierrors.IsForbidden(err) || apierrors.IsMethodNotSupported(err) {
				for _, o := range objs {
					if err := get(ctx, k.gvr, k.ns, o); err != nil {
						return err
					}
				}
				return nil
			}
			if err != nil {
				return fmt.Errorf("list %s to see who owns them: %s", k.gvr.Resource, apiMessage(err))
			}
			for i := range l.Items {
				if o, ok := want[l.Items[i].Name]; ok {
					set(o, &l.Items[i])
				}
			}
			if l.Continue == "" {
				return nil
			}
			opts.Continue = l.Continue
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	fail := func(err error) {
		if err != nil {
			once.Do(func() { first = err; cancel() })
		}
	}
	for _, k := range order {
		objs := groups[k]
		if len(objs) > 1 {
			wg.Go(func() { fail(list(ctx, k, objs)) })
			continue
		}
		wg.Go(func() { fail(get(ctx, k.gvr, k.ns, objs[0])) })
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return out, ctx.Err()
}

// metaClient is the metadata client of a resource in a namespace ("" for
// cluster-scoped ones).
func (c *cluster) metaClient(gvr schema.GroupVersionResource, ns string) interface {
	Get(context.Context, string, metav1.GetOptions, ...string) (*metav1.PartialObjectMetadata, error)
	List(context.Context, metav1.ListOptions) (*metav1.PartialObjectMetadataList, error)
} {
	if ns == "" {
		return c.meta.Resource(gvr)
	}
	return c.meta.Resource(gvr).Namespace(ns)
}

// claimAll reads who owns each object of a deploy and decides what the
// deploy does with it: it refuses, before anything is applied, objects of
// another stack or Helm release (all of them, in one error), and says
// which objects it takes over or adopts. A chart's crds/ CRDs are nobody's
// (object.createOnly): never refused. It returns each object's claim, and
// the metadata of those that exist.
func (r *release) claimAll(ctx context.Context) (claims map[*object]claim, live map[*object]metav1.Object, err error) {
	// The objects the deploy applies: its stages' (not the delete hooks).
	var objs []*object
	for _, id := range r.order {
		objs = append(objs, r.stages[id].Objects...)
	}
	live, err = r.cl.lookup(ctx, objs)
	if err != nil {
		return nil, nil, err
	}
	claims = map[*object]claim{}
	var errs []error
	r.mu.Lock()
	for _, o := range objs {
		r.before[o] = ""
		if m := live[o]; m != nil {
			r.before[o] = m.GetResourceVersion()
		}
	}
	r.mu.Unlock()
	for _, o := range objs {
		c, own := r.id.claimOf(live[o])
		claims[o] = c
		if o.createOnly {
			continue // nobody's: created when missing, else left as it is
		}
		if o.isHook() {
			if err := r.id.hookRefusal(o, live[o]); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		switch c {
		case claimRefuse:
			errs = append(errs, r.id.refusal(o, own))
		case claimTakeOver:
			r.logf("%s: taking it over from %s (the component that applies an object last owns it)", display(o.u), own)
		case claimAdopt:
			r.logf("%s exists and no gantry component or helm release owns it: applying it; an undeploy leaves it in place", display(o.u))
		}
	}
	if len(errs) > 0 {
		return nil, nil, fmt.Errorf("%d of %s belong to others, so nothing was applied:\n%w", len(errs), objectCount(len(objs)), errors.Join(errs...))
	}
	return claims, live, nil
}

// reclaim decides again, right before an apply, what the apply does with
// an object prepare claimed (prepare and the apply may be minutes apart:
// CRDs, hooks, earlier weight groups): res is what prepare recorded of it,
// live its metadata now (nil when it does not exist). An object another
// stack or Helm release made or took meanwhile is refused; one that
// appeared meanwhile and nobody owns (or that carries gantry's adopted
// mark) is adopted — recorded so, it is left in place by prune and
// undeploy. It returns what to record and whether that changed.
func (id identity) reclaim(o *object, res state.Resource, live metav1.Object) (state.Resource, bool, error) {
	c, own := id.claimOf(live)
	switch {
	case c == claimRefuse:
		return res, false, fmt.Errorf("%w (it changed hands after the deploy began, so it was not applied)", id.refusal(o, own))
	case c == claimCreate, res.Adopted:
		return res, false, nil
	case c == claimAdopt, own.adopted:
		res.Adopted = true
		return res, true, nil
	}
	return res, false, nil
}

// reclaimAll is reclaim of objects about to be applied: those that became
// adopted are recorded so, and marked so, before the apply. It returns the
// objects' metadata as it read it.
func (r *release) reclaimAll(ctx context.Context, objs []*object) (map[*object]metav1.Object, error) {
	live, err := r.cl.lookup(ctx, objs)
	if err != nil {
		return nil, err
	}
	var errs []error
	changed := false
	for _, o := range objs {
		k := resourceKey(resourceOf(o))
		r.mu.Lock()
		res, recorded := r.inventory[k]
		r.mu.Unlock()
		if !recorded {
			continue // a delete's hook: not recorded
		}
		res, adopted, err := r.id.reclaim(o, res, live[o])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !adopted {
			continue
		}
		r.logf("%s: someone made it after the deploy began, and no gantry component or helm release owns it: applying it; an undeploy leaves it in place", display(o.u))
		a := o.u.GetAnnotations()
		a[annotationAdopted] = "true"
		o.u.SetAnnotations(a)
		r.mu.Lock()
		r.inventory[k] = res
		r.before[o] = live[o].GetResourceVersion()
		r.mu.Unlock()
		changed = true
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%d of %s belong to others now:\n%w", len(errs), objectCount(len(objs)), errors.Join(errs...))
	}
	if changed {
		return live, r.record()
	}
	return live, nil
}

// hookRefusal refuses a hook whose name an object in the cluster has that
// is not the instance's own (live is its metadata, nil when there is
// none): a hook is deleted and made again (before-hook-creation, the
// default policy), or deleted once it ran, and gantry deletes only what it
// created — an object nobody owns, another component's or another
// owner's, or one gantry adopted, is not a hook's to delete.
func (id identity) hookRefusal(o *object, live metav1.Object) error {
	if live == nil {
		return nil
	}
	own := ownerOf(live)
	if id.owns(own) && !own.adopted {
		return nil
	}
	if !own.gantry && own.helmRelease == "" && id.helm != nil && id.helm.Hooks[o.u.GetKind()+"/"+o.u.GetName()] {
		return nil // the release's hook, left by helm
	}
	who := "it belongs to " + own.String()
	switch {
	case !own.gantry && own.helmRelease == "":
		who = "no gantry component or helm release owns it"
	case own.adopted:
		who = "it existed before gantry applied it"
	}
	return fmt.Errorf("hook %s (%s): an object with its name exists and is not this component's (%s); a hook is deleted and made again, and gantry deletes only what it created: delete that object, or rename the hook", o.ref(), o.source, who)
}

// claimHooks refuses, before anything runs, the hooks of an undeploy
// whose names objects in the cluster have that are not the instance's
// own (hookRefusal).
func (r *release) claimHooks(ctx context.Context) error {
	var hooks []*object
	for _, id := range r.order {
		if strings.HasPrefix(id, "hook:") {
			hooks = append(hooks, r.stages[id].Objects...)
		}
	}
	if len(hooks) == 0 {
		return nil
	}
	live, err := r.cl.lookup(ctx, hooks)
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range hooks {
		if err := r.id.hookRefusal(o, live[o]); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d of %s belong to others, so nothing was run:\n%w", len(errs), plural(len(hooks), "hook", "hooks"), errors.Join(errs...))
	}
	return nil
}

// recordOf is what a deploy records of an object of its manifests before
// applying it: res is the object's resource, c its claim, live its
// metadata in the cluster (nil when it does not exist), prev what the
// instance recorded of it before (nil for nothing), heldAdopted whether
// another component of the stack records it as adopted.
//
// The object is adopted — prune and undeploy leave it in place — when it
// exists and nobody owns it (claimAdopt), or it exists and was adopted
// before: the object carries gantry's adopted mark (annotationAdopted,
// which outlives every record: an undeploy that forgot the object, a
// component that took it over), the instance recorded it as adopted, or
// another component of the stack does. An object that does not exist is
// never adopted: this deploy creates it. It is pending until this deploy
// succeeds (prune), unless a deploy that succeeded recorded it already.
func recordOf(res state.Resource, c claim, live metav1.Object, prev *state.Resource, heldAdopted bool) state.Resource {
	res.Adopted = live != nil && (c == claimAdopt || ownerOf(live).adopted || prev != nil && prev.Adopted || heldAdopted)
	res.Pending = prev == nil || prev.Pending
	return res
}

// adoptedByOthers are the resource keys the stack's other components
// record as adopted.
func (r *release) adoptedByOthers() map[string]bool {
	if r.others == nil {
		return nil
	}
	out := map[string]bool{}
	for _, list := range r.others() {
		for _, res := range list {
			if res.Adopted {
				out[resourceKey(res)] = true
			}
		}
	}
	return out
}

// holders are, by resource key, the stack's other components whose
// recorded resources include the object (see keepReason).
func (r *release) holders() map[string][]string {
	if r.others == nil {
		return nil
	}
	out := map[string][]string{}
	for name, list := range r.others() {
		for _, res := range list {
			k := resourceKey(res)
			if !slices.Contains(out[k], name) {
				out[k] = append(out[k], name)
			}
		}
	}
	for _, names := range out {
		slices.Sort(names)
	}
	return out
}

// plannedBy are the components (sorted) whose planned apply stages (their
// CRDs, namespaces and weight groups: hooks are deleted again) have an
// object that can be res. The plan's objects are written "Kind/name" or
// "Kind/namespace/name" before parameters are expanded: a reference
// (${...}, #{...}) matches anything, and an object without a namespace
// (the release namespace is known when its deploy runs) any namespace —
// prune errs on the side of leaving an object in place.
//
// With exact (an orphan's teardown), only an object named for certain
// counts (exactRef): a teardown that leaves an object forgets it, and a
// pattern that matches anything (name: "#{params.x}"), or an object whose
// namespace is its component's, would leave objects recorded nowhere.
func plannedBy(planned map[string][]plugin.Stage, res state.Resource, exact bool) []string {
	var out []string
	for component, stages := range planned {
	stages:
		for _, st := range stages {
			if st.ID != stageCRDs && st.ID != stageNamespaces && !strings.HasPrefix(st.ID, stageGroup+":") {
				continue
			}
			for _, ref := range st.Objects {
				if exact && !exactRef(ref, res) {
					continue
				}
				if refMatches(ref, res) {
					out = append(out, component)
					break stages
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// exactRef reports whether a plan's object names res for certain: its name
// written without references, and its namespace too — written, or none for
// a cluster-scoped res. An object written without a namespace goes into
// its component's release namespace, which the plan does not know: it may
// be res in another namespace (review 57c: an orphan's ConfigMap was left
// unrecorded for another component's of the same name elsewhere).
func exactRef(ref string, res state.Resource) bool {
	if HasRef(ref) {
		return false
	}
	return strings.Count(ref, "/") == 2 || res.Namespace == ""
}

// refMatches reports whether an object of a plan (plannedBy) can be res.
func refMatches(ref string, res state.Resource) bool {
	parts := strings.Split(ref, "/")
	var kind, ns, name string
	switch len(parts) {
	case 2:
		kind, name = parts[0], parts[1]
	case 3:
		kind, ns, name = parts[0], parts[1], parts[2]
	default:
		return false
	}
	if kind != res.Kind || !patternMatches(name, res.Name) {
		return false
	}
	return len(parts) == 2 || patternMatches(ns, res.Namespace)
}

// refPattern finds the parameter references of a plan's object names.
var refPattern = regexp.MustCompile(`[$#]\{[^}]*\}`)

// patternMatches reports whether s can be p once p's references are
// expanded.
func patternMatches(p, s string) bool {
	if !HasRef(p) {
		return p == s
	}
	var b strings.Builder
	b.WriteString("^")
	last := 0
	for _, loc := range refPattern.FindAllStringIndex(p, -1) {
		b.WriteString(regexp.QuoteMeta(p[last:loc[0]]))
		b.WriteString(".*")
		last = loc[1]
	}
	b.WriteString(regexp.QuoteMeta(p[last:]))
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	return err != nil || re.MatchString(s)
}
