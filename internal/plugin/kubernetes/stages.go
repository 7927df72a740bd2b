package kubernetes

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gantry-dev/gantry/internal/state"
)

// stage is one step of an action: what the plan shows and the runner
// carries out as a whole.
type stage struct {
	// ID names the stage among the action's stages (see stageID); it is
	// part of the plan step's id, so it depends only on what the plan
	// knows: the manifests as written.
	ID string
	// Label says what the stage does, for plans and displays: "apply
	// CRDs", "pre-install hook Job/migrate", "apply weight group 10 (3
	// objects)", "prune vanished objects", "delete weight group 10"…
	Label string
	// Objects are the stage's objects in the order they are created (or
	// deleted). The prune stage has none: what it deletes is known only
	// when it runs, from the state.
	Objects []*object
}

// Kinds of stages, the first part of their ids.
const (
	stageCRDs       = "crds"
	stageHook       = "hook"
	stageGroup      = "group"
	stagePrune      = "prune"
	stageDelete     = "delete"
	stageDeleteCRDs = "delete-crds"
	// stageNamespaces applies the manifests' namespaces before the pre
	// hooks that run in them.
	stageNamespaces = "namespaces"
	// stageDeleteNamespaces deletes them after the post-delete hooks that
	// run in them.
	stageDeleteNamespaces = "delete-namespaces"
)

// stageID is a stage id read back: "crds", "namespaces",
// "hook:<phase>:<ref>", "group:<weight>", "prune", "delete:<weight>",
// "delete-crds", "delete-namespaces", "finish". The ref of a
// hook is its planned ref (Kind/name or Kind/namespace/name; names may
// hold colons, as RBAC's do, so the ref is everything after the phase).
type stageID struct {
	// Kind is one of the stage* constants.
	Kind string
	// Phase is a hook's event: pre-install, post-upgrade, pre-delete…
	Phase string
	// Weight is a group's werf.io/weight.
	Weight int
	// Ref is a hook's object.
	Ref string
}

// String formats the id as stages carry it.
func (id stageID) String() string {
	switch id.Kind {
	case stageHook:
		return stageHook + ":" + id.Phase + ":" + id.Ref
	case stageGroup, stageDelete:
		return id.Kind + ":" + strconv.Itoa(id.Weight)
	}
	return id.Kind
}

// stagePhases are the hook events that run as stages.
var stagePhases = []string{eventPreInstall, eventPostInstall, eventPreUpgrade, eventPostUpgrade, eventPreDelete, eventPostDelete}

// parseStageID reads a stage id; the runner learns from it what to do.
func parseStageID(s string) (stageID, error) {
	kind, rest, hasRest := strings.Cut(s, ":")
	switch kind {
	case stageCRDs, stagePrune, stageDeleteCRDs, stageNamespaces, stageDeleteNamespaces, stageFinish, stageAll:
		if hasRest {
			break
		}
		return stageID{Kind: kind}, nil
	case stageGroup, stageDelete:
		w, err := strconv.Atoi(rest)
		if err != nil || !hasRest {
			break
		}
		return stageID{Kind: kind, Weight: w}, nil
	case stageHook:
		phase, ref, ok := strings.Cut(rest, ":")
		if !ok || !slices.Contains(stagePhases, phase) || strings.Count(ref, "/") < 1 || strings.HasPrefix(ref, "/") || strings.HasSuffix(ref, "/") {
			break
		}
		return stageID{Kind: kind, Phase: phase, Ref: ref}, nil
	}
	return stageID{}, fmt.Errorf("%q is not a stage of the kubernetes plugin", s)
}

// kindOrder is the order in which the objects of one weight group are
// created (seed 004, Helm's install order): what others refer to first.
var kindOrder = []string{
	"Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy",
	"PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList", "ConfigMap",
	"StorageClass", "PersistentVolume", "PersistentVolumeClaim", "CustomResourceDefinition",
	"ClusterRole", "ClusterRoleList", "ClusterRoleBinding", "ClusterRoleBindingList",
	"Role", "RoleList", "RoleBinding", "RoleBindingList", "Service", "DaemonSet", "Pod",
	"ReplicationController", "ReplicaSet", "Deployment", "HorizontalPodAutoscaler",
	"StatefulSet", "Job", "CronJob", "Ingress", "APIService",
}

// kindRanks maps each kind of kindOrder to its place.
var kindRanks = func() map[string]int {
	m := make(map[string]int, len(kindOrder))
	for i, k := range kindOrder {
		m[k] = i
	}
	return m
}()

// kindRank is a kind's place in kindOrder; kinds it does not list (custom
// resources, mostly) come after all it lists. Only the kind's name counts,
// not its group, as in Helm.
func kindRank(kind string) int {
	if r, ok := kindRanks[kind]; ok {
		return r
	}
	return len(kindOrder)
}

// compareCreation orders the objects of one group for creation: by kind
// order, unknown kinds by their names, then by name and namespace.
func compareCreation(a, b *object) int {
	ka, kb := a.u.GetKind(), b.u.GetKind()
	return cmp.Or(
		cmp.Compare(kindRank(ka), kindRank(kb)),
		strings.Compare(ka, kb),
		strings.Compare(a.u.GetName(), b.u.GetName()),
		strings.Compare(a.u.GetNamespace(), b.u.GetNamespace()),
		strings.Compare(a.u.GetAPIVersion(), b.u.GetAPIVersion()),
	)
}

// compareHooks orders the hooks of one event: by hook weight, then by name
// (Helm's order), then by planned ref.
func compareHooks(a, b *object) int {
	return cmp.Or(
		cmp.Compare(a.hookWeight(), b.hookWeight()),
		strings.Compare(a.u.GetName(), b.u.GetName()),
		strings.Compare(a.stageRef(), b.stageRef()),
	)
}

// deployStages plans a deploy (seed 004): the CRDs, the manifests'
// namespaces when there are pre hooks (which run in them), the pre hooks
// one at a time, the main objects in weight groups from low to high, the
// post hooks one at a time, and the pruning of objects that vanished,
// always last.
// upgrade chooses the upgrade hooks over the install ones; either plans
// both, each labelled with when it runs, for a plan that cannot tell
// whether the deploy installs or upgrades (the run's stages are then one
// of the two: checkPlanned). A hook is never
// a main object; one whose events do not include the phase (pre-delete
// only, test) is not part of the deploy.
func deployStages(objs []*object, upgrade, either bool) []stage {
	pres, posts := []string{eventPreInstall}, []string{eventPostInstall}
	switch {
	case either:
		pres, posts = []string{eventPreInstall, eventPreUpgrade}, []string{eventPostInstall, eventPostUpgrade}
	case upgrade:
		pres, posts = []string{eventPreUpgrade}, []string{eventPostUpgrade}
	}
	var crds, main []*object
	preHooks, postHooks := make([][]*object, len(pres)), make([][]*object, len(posts))
	anyPre := false
	for _, o := range objs {
		switch {
		case o.isHook():
			for i, ev := range pres {
				if o.hookOf(ev) {
					preHooks[i] = append(preHooks[i], o)
					anyPre = true
				}
			}
			for i, ev := range posts {
				if o.hookOf(ev) {
					postHooks[i] = append(postHooks[i], o)
				}
			}
		case o.crd:
			crds = append(crds, o)
		default:
			main = append(main, o)
		}
	}
	var out []stage
	if len(crds) > 0 {
		out = append(out, stage{ID: stageID{Kind: stageCRDs}.String(), Label: crdsLabel(crds), Objects: crds})
	}
	// Pre hooks need the namespace they run in, and so does an object of
	// a weight group before a namespace's: the manifests' namespaces
	// come first then (Helm needs --create-namespace for the same).
	var namespaces, rest []*object
	for _, o := range main {
		if isNamespace(o) {
			namespaces = append(namespaces, o)
		} else {
			rest = append(rest, o)
		}
	}
	if len(namespaces) > 0 && (anyPre || weighsBefore(rest, namespaces)) {
		label := "apply namespaces (the hooks run in them)"
		if !anyPre {
			label = "apply namespaces (objects of earlier weight groups go into them)"
		}
		out = append(out, stage{ID: stageID{Kind: stageNamespaces}.String(), Label: label, Objects: namespaces})
		main = rest
	}
	ids := map[string]bool{}
	for i, ev := range pres {
		out = append(out, hookStages(preHooks[i], ev, ids, either)...)
	}
	for _, g := range weightGroups(main, false) {
		out = append(out, stage{
			ID:      stageID{Kind: stageGroup, Weight: g.weight}.String(),
			Label:   fmt.Sprintf("apply weight group %d (%s)", g.weight, objectCount(len(g.objs))),
			Objects: g.objs,
		})
	}
	for i, ev := range posts {
		out = append(out, hookStages(postHooks[i], ev, ids, either)...)
	}
	return append(out, stage{ID: stageID{Kind: stagePrune}.String(), Label: "prune vanished objects"})
}

// isNamespace reports whether o is a Namespace.
func isNamespace(o *object) bool {
	return o.u.GetKind() == "Namespace" && o.u.GroupVersionKind().Group == ""
}

// weighsBefore reports whether an object of objs is in a weight group
// before that of one of namespaces: it may go into that namespace, which
// its own group would not have created yet. Which namespace an object goes
// into may be known only once parameters are expanded, and the stages are
// planned before: any earlier weight counts.
func weighsBefore(objs, namespaces []*object) bool {
	latest := math.MinInt
	for _, ns := range namespaces {
		latest = max(latest, ns.weight())
	}
	for _, o := range objs {
		if o.weight() < latest {
			return true
		}
	}
	return false
}

// crdsLabel says what the CRDs stage does: a chart's crds/ are only
// created when missing (object.createOnly).
func crdsLabel(crds []*object) string {
	n := 0
	for _, o := range crds {
		if o.createOnly {
			n++
		}
	}
	switch n {
	case 0:
		return "apply CRDs"
	case len(crds):
		return "create the missing CRDs of crds/"
	}
	return "apply CRDs (those of crds/ only when missing)"
}

// deleteStages plans an undeploy: the pre-delete hooks of the manifests
// one at a time, then what the last deploy recorded in weight groups from
// high to low, each deleted in reverse kind order, then the CRDs (which
// would take their custom resources along), then the post-delete hooks,
// and when there are some, the recorded namespaces last: the hooks run in
// them (the mirror of a deploy, which creates them before its pre hooks).
// Resources to keep (helm.sh/resource-policy: keep) are left out, and so
// are a chart's crds/ CRDs among objs (object.createOnly), which a gantry
// before helm's rule for them recorded. With
// nothing recorded there is nothing to undeploy, and no hook runs: the
// release is gone (a later undeploy, or one of an instance that never
// deployed).
func deleteStages(objs []*object, recorded []state.Resource) []stage {
	if len(recorded) == 0 {
		return nil
	}
	var preHooks, postHooks []*object
	for _, o := range objs {
		if o.hookOf(eventPreDelete) {
			preHooks = append(preHooks, o)
		}
		if o.hookOf(eventPostDelete) {
			postHooks = append(postHooks, o)
		}
	}
	left := createOnlyKeys(objs)
	var crds, namespaces, rest []*object
	for _, r := range recorded {
		switch {
		case r.Keep, r.CRD && left[resourceKey(r)]:
		case r.CRD:
			crds = append(crds, recordedObject(r))
		case len(postHooks) > 0 && r.Kind == "Namespace" && gvkOf(r).Group == "":
			namespaces = append(namespaces, recordedObject(r))
		default:
			rest = append(rest, recordedObject(r))
		}
	}
	ids := map[string]bool{}
	out := hookStages(preHooks, eventPreDelete, ids, false)
	for _, g := range weightGroups(rest, true) {
		out = append(out, stage{
			ID:      stageID{Kind: stageDelete, Weight: g.weight}.String(),
			Label:   fmt.Sprintf("delete weight group %d", g.weight),
			Objects: g.objs,
		})
	}
	if len(crds) > 0 {
		slices.SortStableFunc(crds, compareCreation)
		slices.Reverse(crds)
		out = append(out, stage{ID: stageID{Kind: stageDeleteCRDs}.String(), Label: "delete CRDs", Objects: crds})
	}
	out = append(out, hookStages(postHooks, eventPostDelete, ids, false)...)
	if len(namespaces) > 0 {
		slices.SortStableFunc(namespaces, compareCreation)
		out = append(out, stage{ID: stageID{Kind: stageDeleteNamespaces}.String(), Label: "delete namespaces (the post-delete hooks ran in them)", Objects: namespaces})
	}
	return out
}

// createOnlyKeys are the resource keys of a chart's crds/ CRDs among objs.
func createOnlyKeys(objs []*object) map[string]bool {
	return crdKeys(objs, true)
}

// crdKeys are the resource keys of the CRDs among objs that come from a
// chart's crds/ (createOnly), or those that do not (cluster-scoped: a
// namespace written in one is ignored, as when placed).
func crdKeys(objs []*object, createOnly bool) map[string]bool {
	out := map[string]bool{}
	for _, o := range objs {
		if o.crd && o.createOnly == createOnly {
			res := resourceOf(o)
			res.Namespace = ""
			out[resourceKey(res)] = true
		}
	}
	return out
}

// leftCRDs are the recorded CRDs that an undeploy or a prune leaves in
// place and forgets, by resourceKey, with why. They are a chart's crds/
// CRDs among objs, which a gantry before helm's rule for them recorded;
// and, for a Helm release (helm not nil), every recorded CRD that neither
// the chart as rendered now (objs; none when it cannot be rendered) nor a
// revision of the release in Helm's storage (HelmRelease.TemplateCRD)
// shows to come from the chart's templates/: an older gantry recorded the
// crds/ ones too, and a chart may since have moved one out of crds/ (to a
// chart of its own). Deleting a CRD deletes every object of its kind in
// the cluster, so without that proof it is never deleted. The plan, which
// does not read Helm's storage, plans their deletion; the run does not.
func leftCRDs(objs []*object, recorded []state.Resource, helm *HelmRelease) map[string]string {
	out := map[string]string{}
	crdsDir, templates := crdKeys(objs, true), crdKeys(objs, false)
	for _, res := range recorded {
		if !res.CRD {
			continue
		}
		switch k := resourceKey(res); {
		case crdsDir[k]:
			out[k] = crdsDirReason
		case helm != nil && !templates[k] && (helm.TemplateCRD == nil || !helm.TemplateCRD(res.Name)):
			out[k] = fmt.Sprintf("neither the chart as rendered now nor a revision of helm release %s shows it comes from the chart's templates/, and one of its crds/ is never deleted (deleting a CRD deletes every object of its kind, in every namespace); gantry forgets it (if nothing uses it any more: kubectl delete crd %s)", helm.Name, res.Name)
		}
	}
	return out
}

// crdsDirReason says why a chart's crds/ CRD stays in the cluster.
const crdsDirReason = "it comes from the chart's crds/, which helm never deletes (deleting a CRD deletes every object of its kind, in every namespace)"

// hookStages makes one stage per hook of phase, in hook order. ids holds
// the ids already made: two hooks with the same ref (a Job of batch and a
// Job of another group) are told apart by their groups.
func hookStages(hooks []*object, phase string, ids map[string]bool, either bool) []stage {
	hooks = slices.Clone(hooks)
	slices.SortStableFunc(hooks, compareHooks)
	out := make([]stage, 0, len(hooks))
	for _, o := range hooks {
		id := stageID{Kind: stageHook, Phase: phase, Ref: o.stageRef()}.String()
		if ids[id] {
			kind := o.u.GetKind()
			if g := o.u.GroupVersionKind().Group; g != "" {
				kind += "." + g
			}
			id = stageID{Kind: stageHook, Phase: phase, Ref: kind + strings.TrimPrefix(o.stageRef(), o.u.GetKind())}.String()
		}
		ids[id] = true
		label := phase + " hook " + o.ref()
		if either {
			label += eitherNote[phase]
		}
		out = append(out, stage{ID: id, Label: label, Objects: []*object{o}})
	}
	return out
}

// eitherNote says, in a plan that cannot tell an install from an upgrade,
// when a hook stage runs.
var eitherNote = map[string]string{
	eventPreInstall: " (if the release is new)", eventPostInstall: " (if the release is new)",
	eventPreUpgrade: " (if the release exists)", eventPostUpgrade: " (if the release exists)",
}

// weightGroup is the objects of one werf.io/weight.
type weightGroup struct {
	weight int
	objs   []*object
}

// weightGroups groups objects by weight, from low to high weight and in
// creation order inside a group, or the reverse of both for deletion.
func weightGroups(objs []*object, reverse bool) []weightGroup {
	byWeight := map[int][]*object{}
	for _, o := range objs {
		byWeight[o.weight()] = append(byWeight[o.weight()], o)
	}
	weights := make([]int, 0, len(byWeight))
	for w := range byWeight {
		weights = append(weights, w)
	}
	slices.Sort(weights)
	if reverse {
		slices.Reverse(weights)
	}
	out := make([]weightGroup, 0, len(weights))
	for _, w := range weights {
		g := byWeight[w]
		slices.SortStableFunc(g, compareCreation)
		if reverse {
			slices.Reverse(g)
		}
		out = append(out, weightGroup{weight: w, objs: g})
	}
	return out
}

// recordedObject is a resource the state recorded, as an object to delete:
// its identity, its weight and whether it is a CRD.
func recordedObject(r state.Resource) *object {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(gvkOf(r))
	u.SetName(r.Name)
	if r.Namespace != "" {
		u.SetNamespace(r.Namespace)
	}
	if r.Weight != 0 {
		u.SetAnnotations(map[string]string{annWeight: strconv.Itoa(r.Weight)})
	}
	return &object{u: u, source: "recorded in state", crd: r.CRD}
}

// objectCount says "1 object" or "3 objects".
func objectCount(n int) string {
	if n == 1 {
		return "1 object"
	}
	return strconv.Itoa(n) + " objects"
}
