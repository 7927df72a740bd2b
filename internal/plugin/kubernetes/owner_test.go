package kubernetes

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gantry-dev/gantry/internal/plugin"
	"github.com/gantry-dev/gantry/internal/state"
)

func metaWith(ann map[string]string) metav1.Object {
	return &metav1.ObjectMeta{Name: "x", Annotations: ann}
}

func gantryMarks(stack, component string) map[string]string {
	return map[string]string{annotationStack: stack, annotationComponent: component}
}

// TestClaimOf: a deploy creates what is missing, applies what is its own,
// takes over what another component of its stack applied, adopts what
// nobody owns, and refuses another stack's objects and another Helm
// release's — its own release's (one helm installed) are its own.
func TestClaimOf(t *testing.T) {
	id := identity{stack: "own", component: "b"}
	helmID := identity{stack: "own", component: "b", helm: &HelmRelease{Name: "web", Namespace: "apps"}}
	helmMarks := func(rel, ns string) map[string]string {
		return map[string]string{annHelmRelease: rel, annHelmReleaseNamespace: ns}
	}
	for _, tc := range []struct {
		name string
		id   identity
		live metav1.Object
		want claim
	}{
		{"absent", id, nil, claimCreate},
		{"own", id, metaWith(gantryMarks("own", "b")), claimOwn},
		{"same stack, other component", id, metaWith(gantryMarks("own", "a")), claimTakeOver},
		{"other stack", id, metaWith(gantryMarks("other", "b")), claimRefuse},
		{"nobody's", id, metaWith(nil), claimAdopt},
		{"unrelated annotations", id, metaWith(map[string]string{"note": "x"}), claimAdopt},
		{"other helm release", id, metaWith(helmMarks("other", "apps")), claimRefuse},
		{"helm release, kubernetes plugin", id, metaWith(helmMarks("web", "apps")), claimRefuse},
		{"own helm release", helmID, metaWith(helmMarks("web", "apps")), claimOwn},
		{"own release name, other namespace", helmID, metaWith(helmMarks("web", "db")), claimRefuse},
	} {
		if got, _ := tc.id.claimOf(tc.live); got != tc.want {
			t.Errorf("%s: claim %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestKeepReason: prune and undeploy delete an object only when gantry
// created it, it is its stack's, and no other component of the stack
// records it.
func TestKeepReason(t *testing.T) {
	id := identity{stack: "own", component: "a"}
	for _, tc := range []struct {
		name    string
		adopted bool
		live    metav1.Object
		holders []string
		want    string
	}{
		{"own", false, metaWith(gantryMarks("own", "a")), nil, ""},
		{"adopted", true, metaWith(gantryMarks("own", "a")), nil, "it existed before gantry applied it"},
		{"taken over, other records it", false, metaWith(gantryMarks("own", "b")), []string{"b"}, "it belongs to component b of stack own now"},
		{"own, another records it too", false, metaWith(gantryMarks("own", "a")), []string{"b"}, "component b of this stack deploys it too"},
		{"own, others record it too", false, metaWith(gantryMarks("own", "a")), []string{"b", "c"}, "components b, c of this stack deploy it too"},
		{"another component's, which forgot it", false, metaWith(gantryMarks("own", "b")), nil, ""},
		{"another stack's", false, metaWith(gantryMarks("other", "a")), nil, "it belongs to component a of stack other now"},
		{"a helm release's", false, metaWith(map[string]string{annHelmRelease: "r", annHelmReleaseNamespace: "n"}), nil, "it belongs to helm release r in namespace n now"},
		{"adopted mark, not recorded", false, metaWith(map[string]string{annotationStack: "own", annotationComponent: "a", annotationAdopted: "true"}), nil, "it existed before gantry applied it"},
		{"adopted mark, taken over", false, metaWith(map[string]string{annotationStack: "own", annotationComponent: "b", annotationAdopted: "true"}), nil, "it existed before gantry applied it"},
		{"unmarked", false, metaWith(nil), nil, "it no longer carries gantry's annotations (gantry.dev/stack, gantry.dev/component): someone else made it again or took it over"},
	} {
		if got := id.keepReason(tc.adopted, tc.live, tc.holders); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestRecordOf: what a deploy records of an object before applying it.
// An object adopted once stays adopted whatever record forgot it: an
// undeploy that left it, a component that took it over (gantry's adopted
// mark on the object), or a component that still records it so.
func TestRecordOf(t *testing.T) {
	res := state.Resource{APIVersion: "v1", Kind: "Namespace", Name: "pre"}
	adoptedMark := func(component string) metav1.Object {
		m := gantryMarks("own", component)
		m[annotationAdopted] = "true"
		return metaWith(m)
	}
	installed := &state.Resource{}
	pendingPrev := &state.Resource{Pending: true}
	adoptedPrev := &state.Resource{Adopted: true}
	for _, tc := range []struct {
		name                 string
		c                    claim
		live                 metav1.Object
		prev                 *state.Resource
		heldAdopted          bool
		wantAdopted, pending bool
	}{
		{"created", claimCreate, nil, nil, false, false, true},
		{"created, recorded pending", claimCreate, nil, pendingPrev, false, false, true},
		{"own, installed", claimOwn, metaWith(gantryMarks("own", "a")), installed, false, false, false},
		{"nobody's: adopted", claimAdopt, metaWith(nil), nil, false, true, true},
		{"adopted before, recorded", claimOwn, metaWith(gantryMarks("own", "a")), adoptedPrev, false, true, false},
		{"recorded adopted, gone since: created", claimCreate, nil, adoptedPrev, false, false, false},
		{"adopted, undeployed (forgotten), deployed again", claimOwn, adoptedMark("a"), nil, false, true, true},
		{"adopted, dropped from the manifests, added again", claimOwn, adoptedMark("a"), nil, false, true, true},
		{"taken over from the component that adopted it", claimTakeOver, adoptedMark("a"), nil, false, true, true},
		{"taken over, another records it adopted", claimTakeOver, metaWith(gantryMarks("own", "a")), nil, true, true, true},
		{"taken over from one that created it", claimTakeOver, metaWith(gantryMarks("own", "a")), nil, false, false, true},
		{"another records it adopted, but it is gone", claimCreate, nil, nil, true, false, true},
	} {
		got := recordOf(res, tc.c, tc.live, tc.prev, tc.heldAdopted)
		if got.Adopted != tc.wantAdopted || got.Pending != tc.pending {
			t.Errorf("%s: adopted %v pending %v, want %v %v", tc.name, got.Adopted, got.Pending, tc.wantAdopted, tc.pending)
		}
	}
}

// TestHookRefusal: a hook whose name an object has is run only when that
// object is the component's own, and not one gantry adopted: running it
// deletes the object.
func TestHookRefusal(t *testing.T) {
	id := identity{stack: "own", component: "a"}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace("ns")
	u.SetName("pre-hook")
	o := &object{u: u, source: "hooks.yaml:1:1"}
	adopted := gantryMarks("own", "a")
	adopted[annotationAdopted] = "true"
	for _, tc := range []struct {
		name string
		live metav1.Object
		want string
	}{
		{"absent", nil, ""},
		{"own", metaWith(gantryMarks("own", "a")), ""},
		{"nobody's", metaWith(nil), "no gantry component or helm release owns it"},
		{"another component's", metaWith(gantryMarks("own", "b")), "it belongs to component b of stack own"},
		{"another stack's", metaWith(gantryMarks("other", "a")), "it belongs to component a of stack other"},
		{"a helm release's", metaWith(map[string]string{annHelmRelease: "r", annHelmReleaseNamespace: "n"}), "it belongs to helm release r in namespace n"},
		{"adopted", metaWith(adopted), "it existed before gantry applied it"},
	} {
		err := id.hookRefusal(o, tc.live)
		// The helm plugin's release knows the hooks helm made: the
		// nobody's object with a hook's name of its history is its own.
		helmID := identity{stack: "own", component: "a", helm: &HelmRelease{Name: "web", Namespace: "apps", Hooks: map[string]bool{"ConfigMap/pre-hook": true}}}
		if herr := helmID.hookRefusal(o, tc.live); (herr == nil) != (err == nil || tc.name == "nobody's") {
			t.Errorf("%s, a helm release that made the hook: %v", tc.name, herr)
		}
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), "("+tc.want+")")):
			t.Errorf("%s: %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}

// TestReclaim: right before an apply, an object prepare found missing
// that someone made meanwhile is adopted (left by undeploy), one another
// stack or release took meanwhile is refused, and what prepare decided
// stands otherwise.
func TestReclaim(t *testing.T) {
	id := identity{stack: "own", component: "a"}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	u.SetNamespace("ns")
	u.SetName("late")
	o := &object{u: u, source: "late.yaml:1:1"}
	created := state.Resource{Kind: "ConfigMap", Name: "late", Pending: true}
	adopted := created
	adopted.Adopted = true
	marked := gantryMarks("own", "b")
	marked[annotationAdopted] = "true"
	for _, tc := range []struct {
		name        string
		res         state.Resource
		live        metav1.Object
		wantAdopted bool
		changed     bool
		refused     bool
	}{
		{"still missing", created, nil, false, false, false},
		{"made meanwhile by nobody gantry knows", created, metaWith(nil), true, true, false},
		{"made meanwhile by another stack", created, metaWith(gantryMarks("other", "a")), false, false, true},
		{"made meanwhile by a helm release", created, metaWith(map[string]string{annHelmRelease: "r", annHelmReleaseNamespace: "n"}), false, false, true},
		{"own", created, metaWith(gantryMarks("own", "a")), false, false, false},
		{"another component's, created by gantry", created, metaWith(gantryMarks("own", "b")), false, false, false},
		{"another component's, adopted", created, metaWith(marked), true, true, false},
		{"adopted in prepare, still nobody's", adopted, metaWith(nil), true, false, false},
	} {
		got, changed, err := id.reclaim(o, tc.res, tc.live)
		if (err != nil) != tc.refused || got.Adopted != tc.wantAdopted || changed != tc.changed {
			t.Errorf("%s: adopted %v changed %v err %v; want %v %v refused %v", tc.name, got.Adopted, changed, err, tc.wantAdopted, tc.changed, tc.refused)
		}
	}
}

// TestPlannedBy: prune leaves an object another component's planned apply
// stages have (moved there), their objects written before parameters are
// expanded; hooks, which are deleted again, and other kinds or names do
// not count. An orphan's teardown (exact) counts only names written
// without references.
func TestPlannedBy(t *testing.T) {
	planned := map[string][]plugin.Stage{
		"b": {{ID: "group:0", Objects: []string{"ConfigMap/moved", "Secret/apps/s"}}},
		"c": {{ID: "namespaces", Objects: []string{"Namespace/${namespace}-s4"}}, {ID: "hook:pre-install:Job/migrate", Objects: []string{"Job/migrate"}}},
		"d": {{ID: "group:5", Objects: []string{"ConfigMap/moved"}}},
	}
	for _, tc := range []struct {
		name  string
		res   state.Resource
		exact bool
		want  []string
	}{
		{"moved, any namespace", state.Resource{Kind: "ConfigMap", Namespace: "web", Name: "moved"}, false, []string{"b", "d"}},
		{"namespace named by a parameter", state.Resource{Kind: "Namespace", Name: "t-1-s4"}, false, []string{"c"}},
		{"another name of the pattern", state.Resource{Kind: "Namespace", Name: "t-1-s5"}, false, nil},
		{"namespace given, matches", state.Resource{Kind: "Secret", Namespace: "apps", Name: "s"}, false, []string{"b"}},
		{"namespace given, another", state.Resource{Kind: "Secret", Namespace: "web", Name: "s"}, false, nil},
		{"another kind", state.Resource{Kind: "Secret", Namespace: "web", Name: "moved"}, false, nil},
		{"a hook's", state.Resource{Kind: "Job", Namespace: "web", Name: "migrate"}, false, nil},
		{"exact: a literal name and namespace", state.Resource{Kind: "Secret", Namespace: "apps", Name: "s"}, true, []string{"b"}},
		{"exact: no namespace written, a namespaced object", state.Resource{Kind: "ConfigMap", Namespace: "web", Name: "moved"}, true, nil},
		{"exact: a cluster-scoped object", state.Resource{Kind: "ConfigMap", Name: "moved"}, true, []string{"b", "d"}},
		{"exact: a name by a parameter does not count", state.Resource{Kind: "Namespace", Name: "t-1-s4"}, true, nil},
	} {
		if got := plannedBy(planned, tc.res, tc.exact); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
