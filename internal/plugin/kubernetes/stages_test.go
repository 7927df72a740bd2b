package kubernetes

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-dev/gantry/internal/state"
)

// hook makes a hook Job of events with a hook weight.
func hook(name, events, weight string) *object {
	ann := map[string]string{"helm.sh/hook": events}
	if weight != "" {
		ann["helm.sh/hook-weight"] = weight
	}
	return newObject("batch/v1", "Job", "", name, ann)
}

// weighted makes an object of kind with a werf.io/weight.
func weighted(apiVersion, kind, name, weight string) *object {
	var ann map[string]string
	if weight != "" {
		ann = map[string]string{"werf.io/weight": weight}
	}
	return newObject(apiVersion, kind, "", name, ann)
}

// summary is a stage as tests compare it: id, label and object refs.
type summary struct {
	ID, Label string
	Objects   []string
}

func summarize(sts []stage) []summary {
	out := make([]summary, 0, len(sts))
	for _, st := range sts {
		s := summary{ID: st.ID, Label: st.Label}
		for _, o := range st.Objects {
			s.Objects = append(s.Objects, o.ref())
		}
		out = append(out, s)
	}
	return out
}

// chartCRD is a CRD of a chart's crds/ (Document.CRD).
func chartCRD(name string) *object {
	o := newObject("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", name, nil)
	o.crd, o.createOnly = true, true
	return o
}

func TestDeployStages(t *testing.T) {
	crdFromFolder := newObject("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "crontabs.example.org", nil)
	crdInManifests := newObject("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "backups.example.org", nil)
	crdHook := newObject("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "tmp.example.org", map[string]string{"helm.sh/hook": "pre-install"})
	prune := summary{ID: "prune", Label: "prune vanished objects"}
	tests := []struct {
		name    string
		objs    []*object
		upgrade bool
		either  bool // the plan cannot tell an install from an upgrade
		want    []summary
	}{
		{name: "nothing: prune only", want: []summary{prune}},
		{
			name:   "install or upgrade: the hooks of both, each saying when it runs",
			either: true,
			objs: []*object{
				newObject("batch/v1", "Job", "", "migrate", map[string]string{"helm.sh/hook": "pre-install,pre-upgrade"}),
				newObject("batch/v1", "Job", "", "seed", map[string]string{"helm.sh/hook": "post-install"}),
				newObject("batch/v1", "Job", "", "notify", map[string]string{"helm.sh/hook": "post-upgrade"}),
				weighted("v1", "Namespace", "web", ""),
			},
			want: []summary{
				{ID: "namespaces", Label: "apply namespaces (the hooks run in them)", Objects: []string{"Namespace/web"}},
				{ID: "hook:pre-install:Job/migrate", Label: "pre-install hook Job/migrate (if the release is new)", Objects: []string{"Job/migrate"}},
				{ID: "hook:pre-upgrade:Job/migrate", Label: "pre-upgrade hook Job/migrate (if the release exists)", Objects: []string{"Job/migrate"}},
				{ID: "hook:post-install:Job/seed", Label: "post-install hook Job/seed (if the release is new)", Objects: []string{"Job/seed"}},
				{ID: "hook:post-upgrade:Job/notify", Label: "post-upgrade hook Job/notify (if the release exists)", Objects: []string{"Job/notify"}},
				prune,
			},
		},
		{
			name: "kind order inside a group, unknown kinds last by kind then name",
			objs: []*object{
				weighted("apps/v1", "Deployment", "web", ""),
				weighted("example.org/v1", "CronTab", "b", ""),
				weighted("v1", "Service", "web", ""),
				weighted("example.org/v1", "Backup", "z", ""),
				weighted("v1", "ConfigMap", "b-config", ""),
				weighted("v1", "Namespace", "web", ""),
				weighted("v1", "ConfigMap", "a-config", ""),
				weighted("example.org/v1", "CronTab", "a", ""),
				weighted("networking.k8s.io/v1", "Ingress", "web", ""),
				weighted("v1", "ServiceAccount", "web", ""),
			},
			want: []summary{
				{ID: "group:0", Label: "apply weight group 0 (10 objects)", Objects: []string{
					"Namespace/web", "ServiceAccount/web", "ConfigMap/a-config", "ConfigMap/b-config", "Service/web",
					"Deployment/web", "Ingress/web", "Backup/z", "CronTab/a", "CronTab/b",
				}},
				prune,
			},
		},
		{
			name: "a chart's crds/: created when missing",
			objs: []*object{chartCRD("crontabs.example.org"), weighted("v1", "ConfigMap", "cfg", "")},
			want: []summary{
				{ID: "crds", Label: "create the missing CRDs of crds/", Objects: []string{"CustomResourceDefinition/crontabs.example.org"}},
				{ID: "group:0", Label: "apply weight group 0 (1 object)", Objects: []string{"ConfigMap/cfg"}},
				prune,
			},
		},
		{
			name: "a chart's crds/ and a CRD of its templates",
			objs: []*object{chartCRD("crontabs.example.org"), crdInManifests},
			want: []summary{
				{ID: "crds", Label: "apply CRDs (those of crds/ only when missing)", Objects: []string{"CustomResourceDefinition/crontabs.example.org", "CustomResourceDefinition/backups.example.org"}},
				prune,
			},
		},
		{
			name: "weight groups low to high, negative first",
			objs: []*object{
				weighted("apps/v1", "Deployment", "app", "10"),
				weighted("apps/v1", "StatefulSet", "db", "-5"),
				weighted("v1", "Service", "app", "10"),
				weighted("v1", "ConfigMap", "cfg", ""),
			},
			want: []summary{
				{ID: "group:-5", Label: "apply weight group -5 (1 object)", Objects: []string{"StatefulSet/db"}},
				{ID: "group:0", Label: "apply weight group 0 (1 object)", Objects: []string{"ConfigMap/cfg"}},
				{ID: "group:10", Label: "apply weight group 10 (2 objects)", Objects: []string{"Service/app", "Deployment/app"}},
				prune,
			},
		},
		{
			name: "install: CRDs, pre hooks by weight then name, groups, post hooks",
			objs: []*object{
				weighted("apps/v1", "Deployment", "app", ""),
				hook("notify", "post-install", ""),
				hook("seed", "pre-install", "5"),
				hook("migrate", "pre-install,pre-upgrade", "-1"),
				hook("b-check", "pre-install", "5"),
				hook("backup", "pre-delete", ""),
				hook("smoke", "test", ""),
				hook("upgrade-only", "pre-upgrade", ""),
				crdFromFolder, crdInManifests, crdHook,
			},
			want: []summary{
				{ID: "crds", Label: "apply CRDs", Objects: []string{"CustomResourceDefinition/crontabs.example.org", "CustomResourceDefinition/backups.example.org"}},
				{ID: "hook:pre-install:Job/migrate", Label: "pre-install hook Job/migrate", Objects: []string{"Job/migrate"}},
				{ID: "hook:pre-install:CustomResourceDefinition/tmp.example.org", Label: "pre-install hook CustomResourceDefinition/tmp.example.org", Objects: []string{"CustomResourceDefinition/tmp.example.org"}},
				{ID: "hook:pre-install:Job/b-check", Label: "pre-install hook Job/b-check", Objects: []string{"Job/b-check"}},
				{ID: "hook:pre-install:Job/seed", Label: "pre-install hook Job/seed", Objects: []string{"Job/seed"}},
				{ID: "group:0", Label: "apply weight group 0 (1 object)", Objects: []string{"Deployment/app"}},
				{ID: "hook:post-install:Job/notify", Label: "post-install hook Job/notify", Objects: []string{"Job/notify"}},
				prune,
			},
		},
		{
			name:    "upgrade takes the upgrade hooks",
			upgrade: true,
			objs: []*object{
				weighted("apps/v1", "Deployment", "app", ""),
				hook("migrate", "pre-install,pre-upgrade", ""),
				hook("first-time", "pre-install", ""),
				hook("notify", "post-install,post-upgrade", ""),
			},
			want: []summary{
				{ID: "hook:pre-upgrade:Job/migrate", Label: "pre-upgrade hook Job/migrate", Objects: []string{"Job/migrate"}},
				{ID: "group:0", Label: "apply weight group 0 (1 object)", Objects: []string{"Deployment/app"}},
				{ID: "hook:post-upgrade:Job/notify", Label: "post-upgrade hook Job/notify", Objects: []string{"Job/notify"}},
				prune,
			},
		},
		{
			name: "a hook of pre and post runs in both",
			objs: []*object{hook("both", "pre-install,post-install", "")},
			want: []summary{
				{ID: "hook:pre-install:Job/both", Label: "pre-install hook Job/both", Objects: []string{"Job/both"}},
				{ID: "hook:post-install:Job/both", Label: "post-install hook Job/both", Objects: []string{"Job/both"}},
				prune,
			},
		},
		{
			name: "a hook of no deploy phase is no main object either",
			objs: []*object{hook("backup", "pre-delete", ""), hook("smoke", "test", "")},
			want: []summary{prune},
		},
		{
			name: "namespaces before the pre hooks that run in them",
			objs: []*object{
				weighted("v1", "Namespace", "web", "5"),
				weighted("example.org/v1", "Namespace", "not-core", ""),
				weighted("v1", "ConfigMap", "cfg", ""),
				hook("migrate", "pre-install", ""),
			},
			want: []summary{
				{ID: "namespaces", Label: "apply namespaces (the hooks run in them)", Objects: []string{"Namespace/web"}},
				{ID: "hook:pre-install:Job/migrate", Label: "pre-install hook Job/migrate", Objects: []string{"Job/migrate"}},
				{ID: "group:0", Label: "apply weight group 0 (2 objects)", Objects: []string{"Namespace/not-core", "ConfigMap/cfg"}},
				prune,
			},
		},
		{
			name: "without pre hooks namespaces stay in their groups",
			objs: []*object{weighted("v1", "Namespace", "web", ""), hook("notify", "post-install", "")},
			want: []summary{
				{ID: "group:0", Label: "apply weight group 0 (1 object)", Objects: []string{"Namespace/web"}},
				{ID: "hook:post-install:Job/notify", Label: "post-install hook Job/notify", Objects: []string{"Job/notify"}},
				prune,
			},
		},
		{
			name: "namespaces before an earlier weight group that may go into them",
			objs: []*object{
				weighted("v1", "Namespace", "web", ""),
				weighted("v1", "ConfigMap", "early", "-5"),
				weighted("v1", "Service", "svc", ""),
			},
			want: []summary{
				{ID: "namespaces", Label: "apply namespaces (objects of earlier weight groups go into them)", Objects: []string{"Namespace/web"}},
				{ID: "group:-5", Label: "apply weight group -5 (1 object)", Objects: []string{"ConfigMap/early"}},
				{ID: "group:0", Label: "apply weight group 0 (1 object)", Objects: []string{"Service/svc"}},
				prune,
			},
		},
		{
			name: "a namespace in the first weight group stays there",
			objs: []*object{
				weighted("v1", "Namespace", "web", "-10"),
				weighted("v1", "ConfigMap", "early", "-5"),
			},
			want: []summary{
				{ID: "group:-10", Label: "apply weight group -10 (1 object)", Objects: []string{"Namespace/web"}},
				{ID: "group:-5", Label: "apply weight group -5 (1 object)", Objects: []string{"ConfigMap/early"}},
				prune,
			},
		},
		{
			name: "namespaced hook ref",
			objs: []*object{newObject("batch/v1", "Job", "web", "migrate", map[string]string{"helm.sh/hook": "pre-install"})},
			want: []summary{
				{ID: "hook:pre-install:Job/web/migrate", Label: "pre-install hook Job/web/migrate", Objects: []string{"Job/web/migrate"}},
				prune,
			},
		},
		{
			name: "hooks with one ref in two groups get distinct ids",
			objs: []*object{
				newObject("batch/v1", "Job", "", "x", map[string]string{"helm.sh/hook": "pre-install"}),
				newObject("example.org/v1", "Job", "", "x", map[string]string{"helm.sh/hook": "pre-install"}),
			},
			want: []summary{
				{ID: "hook:pre-install:Job/x", Label: "pre-install hook Job/x", Objects: []string{"Job/x"}},
				{ID: "hook:pre-install:Job.example.org/x", Label: "pre-install hook Job/x", Objects: []string{"Job/x"}},
				prune,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summarize(deployStages(tt.objs, tt.upgrade, tt.either))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("stages (-want +got):\n%s", diff)
			}
		})
	}
}

// The stage ids are those of the plan although, at run time, names are
// expanded and namespaces filled in: they come from the planned refs.
func TestDeployStagesUsePlannedRefs(t *testing.T) {
	o := newObject("batch/v1", "Job", "prod", "migrate-7", map[string]string{"helm.sh/hook": "pre-install"})
	o.planned = "Job/migrate-${version}"
	sts := deployStages([]*object{o}, false, false)
	if sts[0].ID != "hook:pre-install:Job/migrate-${version}" {
		t.Errorf("id = %q, want the planned ref", sts[0].ID)
	}
	if sts[0].Label != "pre-install hook Job/prod/migrate-7" {
		t.Errorf("label = %q, want the object as it is", sts[0].Label)
	}
}

func TestDeleteStages(t *testing.T) {
	res := func(apiVersion, kind, ns, name string, weight int) state.Resource {
		return state.Resource{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name, Weight: weight}
	}
	crd := state.Resource{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "crontabs.example.org", CRD: true}
	crd2 := state.Resource{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "backups.example.org", CRD: true}
	kept := res("v1", "PersistentVolumeClaim", "web", "data", 0)
	kept.Keep = true
	keptCRD := crd
	keptCRD.Name, keptCRD.Keep = "kept.example.org", true
	tests := []struct {
		name     string
		objs     []*object
		recorded []state.Resource
		want     []summary
	}{
		{name: "nothing recorded, no hooks", want: []summary{}},
		{
			name: "hooks around groups high to low in reverse kind order, CRDs, namespaces after the post-delete hooks, kept left out",
			objs: []*object{
				hook("backup", "pre-delete", "2"),
				hook("drain", "pre-delete", "-1"),
				hook("goodbye", "post-delete", ""),
				hook("migrate", "pre-install", ""),
				weighted("apps/v1", "Deployment", "app", ""),
			},
			recorded: []state.Resource{
				res("v1", "ConfigMap", "web", "cfg", 0),
				crd,
				res("apps/v1", "Deployment", "web", "app", 0),
				res("example.org/v1", "CronTab", "web", "tab", 0),
				kept,
				res("v1", "Namespace", "", "web", -10),
				res("apps/v1", "StatefulSet", "web", "db", 5),
				res("v1", "Service", "web", "app", 0),
				crd2,
				keptCRD,
			},
			want: []summary{
				{ID: "hook:pre-delete:Job/drain", Label: "pre-delete hook Job/drain", Objects: []string{"Job/drain"}},
				{ID: "hook:pre-delete:Job/backup", Label: "pre-delete hook Job/backup", Objects: []string{"Job/backup"}},
				{ID: "delete:5", Label: "delete weight group 5", Objects: []string{"StatefulSet/web/db"}},
				{ID: "delete:0", Label: "delete weight group 0", Objects: []string{"CronTab/web/tab", "Deployment/web/app", "Service/web/app", "ConfigMap/web/cfg"}},
				{ID: "delete-crds", Label: "delete CRDs", Objects: []string{"CustomResourceDefinition/crontabs.example.org", "CustomResourceDefinition/backups.example.org"}},
				{ID: "hook:post-delete:Job/goodbye", Label: "post-delete hook Job/goodbye", Objects: []string{"Job/goodbye"}},
				{ID: "delete-namespaces", Label: "delete namespaces (the post-delete hooks ran in them)", Objects: []string{"Namespace/web"}},
			},
		},
		{
			// The chart cannot be rendered: the plan, which does not read
			// Helm's storage, plans the recorded CRD's deletion; the run
			// leaves it unless a revision shows a template made it
			// (leftCRDs, TestLeftCRDs).
			name:     "unrenderable chart: the plan deletes the recorded CRDs",
			recorded: []state.Resource{crd, res("v1", "ConfigMap", "web", "cfg", 0)},
			want: []summary{
				{ID: "delete:0", Label: "delete weight group 0", Objects: []string{"ConfigMap/web/cfg"}},
				{ID: "delete-crds", Label: "delete CRDs", Objects: []string{"CustomResourceDefinition/crontabs.example.org"}},
			},
		},
		{
			name:     "only kept resources: nothing to delete",
			recorded: []state.Resource{kept, keptCRD},
			want:     []summary{},
		},
		{
			// A gantry before helm's rule for crds/ recorded them: a
			// chart's crds/ CRD is never deleted, its templates' CRD is.
			name:     "a chart's crds/ CRDs recorded are left out",
			objs:     []*object{chartCRD("crontabs.example.org"), chartCRD("other.example.org")},
			recorded: []state.Resource{crd, crd2, res("v1", "ConfigMap", "web", "cfg", 0)},
			want: []summary{
				{ID: "delete:0", Label: "delete weight group 0", Objects: []string{"ConfigMap/web/cfg"}},
				{ID: "delete-crds", Label: "delete CRDs", Objects: []string{"CustomResourceDefinition/backups.example.org"}},
			},
		},
		{
			// Nothing left to undeploy (an undeploy ran already): the
			// release is gone, its delete hooks do not run again.
			name: "delete hooks without recorded resources",
			objs: []*object{hook("cleanup", "pre-delete", ""), hook("goodbye", "post-delete", "")},
			want: []summary{},
		},
		{
			name: "namespaces after the post-delete hooks that run in them",
			objs: []*object{hook("cleanup", "pre-delete", ""), hook("goodbye", "post-delete", "")},
			recorded: []state.Resource{
				res("v1", "Namespace", "", "k1", 0),
				res("v1", "ConfigMap", "k1", "cfg", 0),
				res("v1", "Namespace", "", "k0", 5),
				res("example.org/v1", "Namespace", "k1", "not-core", 0),
			},
			want: []summary{
				{ID: "hook:pre-delete:Job/cleanup", Label: "pre-delete hook Job/cleanup", Objects: []string{"Job/cleanup"}},
				{ID: "delete:0", Label: "delete weight group 0", Objects: []string{"ConfigMap/k1/cfg", "Namespace/k1/not-core"}},
				{ID: "hook:post-delete:Job/goodbye", Label: "post-delete hook Job/goodbye", Objects: []string{"Job/goodbye"}},
				{ID: "delete-namespaces", Label: "delete namespaces (the post-delete hooks ran in them)", Objects: []string{"Namespace/k0", "Namespace/k1"}},
			},
		},
		{
			name:     "without post-delete hooks namespaces stay in their groups",
			objs:     []*object{hook("cleanup", "pre-delete", "")},
			recorded: []state.Resource{res("v1", "Namespace", "", "k1", 0), res("v1", "ConfigMap", "k1", "cfg", 0)},
			want: []summary{
				{ID: "hook:pre-delete:Job/cleanup", Label: "pre-delete hook Job/cleanup", Objects: []string{"Job/cleanup"}},
				{ID: "delete:0", Label: "delete weight group 0", Objects: []string{"ConfigMap/k1/cfg", "Namespace/k1"}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := summarize(deleteStages(tt.objs, tt.recorded))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("stages (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLeftCRDs(t *testing.T) {
	crd := state.Resource{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "crontabs.example.org", CRD: true}
	templateCRD := newObject("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "crontabs.example.org", nil)
	templateCRD.crd = true
	cm := state.Resource{APIVersion: "v1", Kind: "ConfigMap", Namespace: "web", Name: "cfg"}
	release := func(crds ...string) *HelmRelease {
		return &HelmRelease{Name: "web", Namespace: "web", TemplateCRD: func(name string) bool { return slices.Contains(crds, name) }}
	}
	tests := []struct {
		name string
		objs []*object
		helm *HelmRelease
		// want is the reason's start for the CRD; "" when it is deleted.
		want string
	}{
		{"the kubernetes plugin's CRD, gone from the manifests", nil, nil, ""},
		{"the kubernetes plugin's CRD, in the manifests", []*object{templateCRD}, nil, ""},
		{"a chart's crds/ CRD, kubernetes or helm", []*object{chartCRD(crd.Name)}, nil, "it comes from the chart's crds/"},
		{"a chart's crds/ CRD of a release", []*object{chartCRD(crd.Name)}, release(crd.Name), "it comes from the chart's crds/"},
		// The chart cannot be rendered (an orphan whose folder is gone,
		// a chart not on this machine, broken values): objs is nil.
		{"unrenderable chart, no revision has it", nil, release(), "neither the chart as rendered now nor a revision of helm release web"},
		{"unrenderable chart, a revision's templates have it", nil, release(crd.Name), ""},
		{"the chart's templates render it now", []*object{templateCRD}, release(), ""},
		// A prune after the chart moved it out of crds/ (to a chart of
		// its own): no object has it, no revision's manifest either.
		{"moved out of the chart's crds/", []*object{newObject("v1", "ConfigMap", "web", "cfg", nil)}, release("other.example.org"), "neither"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := leftCRDs(tt.objs, []state.Resource{crd, cm}, tt.helm)
			why := got[resourceKey(crd)]
			if tt.want == "" && why != "" || !strings.HasPrefix(why, tt.want) {
				t.Errorf("the CRD's reason = %q, want one starting %q", why, tt.want)
			}
			if got[resourceKey(cm)] != "" {
				t.Errorf("a ConfigMap is left: %q", got[resourceKey(cm)])
			}
		})
	}
}

func TestRecordedObject(t *testing.T) {
	o := recordedObject(state.Resource{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "web", Name: "app", Weight: 3})
	if o.ref() != "Deployment/web/app" || o.weight() != 3 || o.crd || o.u.GetAPIVersion() != "apps/v1" {
		t.Errorf("recordedObject = %s weight %d crd %v apiVersion %s", o.ref(), o.weight(), o.crd, o.u.GetAPIVersion())
	}
	c := recordedObject(state.Resource{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "a.b", CRD: true})
	if !c.crd || c.ref() != "CustomResourceDefinition/a.b" || c.u.GroupVersionKind().Group != "apiextensions.k8s.io" {
		t.Errorf("recorded CRD = %s crd %v", c.ref(), c.crd)
	}
}

func TestKindRank(t *testing.T) {
	if kindRank("Namespace") != 0 || kindRank("APIService") != len(kindOrder)-1 {
		t.Errorf("ends of the order: %d, %d", kindRank("Namespace"), kindRank("APIService"))
	}
	if kindRank("CronTab") != len(kindOrder) || kindRank("deployment") != len(kindOrder) {
		t.Error("unknown kinds (and kinds in another case) must come after the known ones")
	}
	for i := 1; i < len(kindOrder); i++ {
		if kindRank(kindOrder[i-1]) >= kindRank(kindOrder[i]) {
			t.Errorf("%s is not before %s", kindOrder[i-1], kindOrder[i])
		}
	}
	if len(kindRanks) != len(kindOrder) {
		t.Error("a kind is listed twice")
	}
}

func TestStageIDRoundTrip(t *testing.T) {
	ids := []stageID{
		{Kind: stageCRDs},
		{Kind: stageNamespaces},
		{Kind: stageDeleteNamespaces},
		{Kind: stageHook, Phase: "pre-install", Ref: "Job/migrate"},
		{Kind: stageHook, Phase: "post-upgrade", Ref: "Job/web/notify"},
		{Kind: stageHook, Phase: "pre-delete", Ref: "ClusterRole/system:backup"},
		{Kind: stageHook, Phase: "post-delete", Ref: "Job.example.org/web/x"},
		{Kind: stageGroup, Weight: 0},
		{Kind: stageGroup, Weight: -5},
		{Kind: stageGroup, Weight: 10},
		{Kind: stagePrune},
		{Kind: stageDelete, Weight: 10},
		{Kind: stageDelete, Weight: -1},
		{Kind: stageDeleteCRDs},
	}
	for _, id := range ids {
		s := id.String()
		got, err := parseStageID(s)
		if err != nil {
			t.Errorf("parseStageID(%q): %v", s, err)
			continue
		}
		if got != id {
			t.Errorf("parseStageID(%q) = %+v, want %+v", s, got, id)
		}
	}
	// Every id deployStages and deleteStages make reads back.
	objs := []*object{
		hook("a", "pre-install,post-install,pre-delete,post-delete", "1"),
		weighted("v1", "Namespace", "n", ""),
		weighted("v1", "ConfigMap", "c", "3"),
		newObject("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "x.y", nil),
	}
	sts := append(deployStages(objs, false, false), deleteStages(objs, []state.Resource{
		{APIVersion: "v1", Kind: "ConfigMap", Name: "c", Weight: 3},
		{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition", Name: "x.y", CRD: true},
	})...)
	for _, st := range sts {
		id, err := parseStageID(st.ID)
		if err != nil || id.String() != st.ID {
			t.Errorf("stage id %q reads back as %+v, %v", st.ID, id, err)
		}
	}
}

func TestParseStageIDErrors(t *testing.T) {
	for _, s := range []string{
		"", "prepare", "crds:1", "prune:x", "group", "group:", "group:x", "group:1.5", "delete:",
		"hook", "hook:pre-install", "hook:pre-install:", "hook:pre-install:Job", "hook:pre-install:/x",
		"hook:pre-install:Job/", "hook:test:Job/x", "hook:pre-rollback:Job/x", "delete-crds:1", "namespaces:x", "unknown",
	} {
		if id, err := parseStageID(s); err == nil {
			t.Errorf("parseStageID(%q) = %+v, want an error", s, id)
		}
	}
}

// TestUpgrading: a deploy upgrades an instance once a deploy of it
// succeeded (some recorded object not pending); a first install that
// failed recorded only pending objects and installs again. States written
// before the mark existed (nothing pending) upgrade, as they did.
func TestUpgrading(t *testing.T) {
	cm := state.Resource{APIVersion: "v1", Kind: "ConfigMap", Namespace: "web", Name: "a"}
	pending := cm
	pending.Pending = true
	for _, tc := range []struct {
		name string
		rec  *state.PluginInstance
		want bool
	}{
		{"never ran", nil, false},
		{"nothing recorded", &state.PluginInstance{}, false},
		{"first install failed", &state.PluginInstance{Resources: []state.Resource{pending, pending}}, false},
		{"installed", &state.PluginInstance{Resources: []state.Resource{cm}}, true},
		{"upgrade failed", &state.PluginInstance{Resources: []state.Resource{cm, pending}}, true},
	} {
		if got := Upgrading(tc.rec); got != tc.want {
			t.Errorf("%s: Upgrading = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestVanished: the plan lists as pruned only the recorded resources no
// object of the manifests can be; a reference in a name or namespace, or
// no namespace (the release's), may be any.
func TestVanished(t *testing.T) {
	rec := func(apiVersion, kind, ns, name string) state.Resource {
		return state.Resource{APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name}
	}
	kept := rec("v1", "Secret", "web", "kept")
	kept.Keep = true
	adopted := rec("v1", "ConfigMap", "web", "theirs")
	adopted.Adopted = true
	recorded := []state.Resource{
		adopted,
		rec("v1", "ConfigMap", "web", "cfg"),
		rec("v1", "ConfigMap", "web", "old"),
		rec("apps/v1", "Deployment", "web", "app"),
		rec("v1", "Service", "web", "app"),
		rec("v1", "Namespace", "", "web"),
		rec("example.org/v1", "ConfigMap", "web", "cfg"),
		kept,
	}
	objs := []*object{
		newObject("v1", "ConfigMap", "", "cfg", nil),
		newObject("apps/v2", "Deployment", "web", "app", nil),
		newObject("v1", "Service", "${namespace}", "app", nil),
		newObject("v1", "Namespace", "", "${namespace}", nil),
	}
	var got []string
	for _, res := range vanished(objs, recorded, "") {
		got = append(got, resourceText(res))
	}
	want := []string{"ConfigMap/web/old", "ConfigMap/web/cfg"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("vanished (-want +got):\n%s", diff)
	}
	label, refs := pruneLabel(vanished(objs, recorded, ""))
	if label != "prune vanished objects: delete ConfigMap/web/cfg, ConfigMap/web/old" || len(refs) != 2 {
		t.Errorf("label %q, objects %v", label, refs)
	}
	if label, refs := pruneLabel(nil); label != "prune vanished objects" || refs != nil {
		t.Errorf("nothing to prune: label %q, objects %v", label, refs)
	}
	// The config's literal namespace moves the objects written without
	// one: those recorded in the old namespace vanish, a cluster-scoped
	// one does not.
	moved := []state.Resource{rec("v1", "ConfigMap", "web", "cfg"), rec("v1", "ConfigMap", "shop", "cfg"),
		rec("rbac.authorization.k8s.io/v1", "ClusterRole", "", "reader")}
	objs = []*object{newObject("v1", "ConfigMap", "", "cfg", nil),
		newObject("rbac.authorization.k8s.io/v1", "ClusterRole", "", "reader", nil)}
	got = nil
	for _, res := range vanished(objs, moved, "shop") {
		got = append(got, resourceText(res))
	}
	if diff := cmp.Diff([]string{"ConfigMap/web/cfg"}, got); diff != "" {
		t.Errorf("vanished with the release namespace shop (-want +got):\n%s", diff)
	}
	if got := vanished(objs, moved, ""); len(got) != 0 {
		t.Errorf("vanished with the release namespace unknown = %v, want none", got)
	}
}

func TestChartFileAndServedVersions(t *testing.T) {
	for in, want := range map[string]string{
		"web/crds/widgets.yaml:1:1":          "crds/widgets.yaml",
		"web/charts/db/crds/x.yaml:3:1":      "charts/db/crds/x.yaml",
		"crds.yaml (document 2)":             "crds.yaml (document 2)",
		"web/crds/widgets.yaml:1:1 (item 2)": "crds/widgets.yaml",
	} {
		if got := chartFile(in); got != want {
			t.Errorf("chartFile(%q) = %q, want %q", in, got, want)
		}
	}
	crd := newObject("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.org", nil)
	crd.u.Object["spec"] = map[string]any{"versions": []any{
		map[string]any{"name": "v1", "served": true}, map[string]any{"name": "v2", "served": false}, map[string]any{"name": "v3", "served": true}}}
	if got := servedVersions(crd.u); strings.Join(got, ",") != "v1,v3" {
		t.Errorf("servedVersions = %v", got)
	}
}

// TestCRDNames: an external dependency whose kind a CRD of the manifests
// defines is not refused in prepare: by its kind, plural or singular name,
// with or without its group.
func TestCRDNames(t *testing.T) {
	crd := newObject("apiextensions.k8s.io/v1", "CustomResourceDefinition", "", "widgets.example.org", nil)
	crd.u.Object["spec"] = map[string]any{"group": "example.org",
		"names": map[string]any{"kind": "Widget", "plural": "widgets", "singular": "widget"}}
	r := &release{objects: []*object{crd, newObject("v1", "ConfigMap", "", "c", nil)}}
	defined := r.crdNames()
	for _, tt := range []struct {
		kind, group string
		want        bool
	}{
		{"Widget", "", true}, {"widget", "", true}, {"widgets", "example.org", true},
		{"Widget", "other.org", false}, {"Gadget", "", false}, {"configmap", "", false},
	} {
		if got := defined(tt.kind, tt.group); got != tt.want {
			t.Errorf("defined(%q, %q) = %v, want %v", tt.kind, tt.group, got, tt.want)
		}
	}
}

// TestPlacedTwice: the plan refuses an object written without a namespace
// and again in the literal release namespace, and nothing else.
func TestPlacedTwice(t *testing.T) {
	bare := newObject("v1", "ConfigMap", "", "dup", nil)
	inNS := newObject("v1", "ConfigMap", "web", "dup", nil)
	other := newObject("v1", "ConfigMap", "shop", "dup", nil)
	secret := newObject("v1", "Secret", "web", "dup", nil)
	if err := placedTwice([]*object{bare, other, secret, newObject("v1", "ConfigMap", "", "x", nil)}, "web"); err != nil {
		t.Errorf("distinct objects refused: %v", err)
	}
	err := placedTwice([]*object{bare, inNS, other}, "web")
	if err == nil || !strings.Contains(err.Error(), "ConfigMap/web/dup is the object of app.yaml:3:1 too (in namespace web, the release namespace)") {
		t.Errorf("placedTwice = %v, want the second ConfigMap refused", err)
	}
}
