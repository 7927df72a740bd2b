package kubernetes

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// newObject makes an object of apiVersion and kind named ns/name (ns may be
// empty) with annotations, as load would.
func newObject(apiVersion, kind, ns, name string, ann map[string]string) *object {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetName(name)
	if ns != "" {
		u.SetNamespace(ns)
	}
	if ann != nil {
		u.SetAnnotations(ann)
	}
	return &object{u: u, source: "app.yaml:3:1", crd: isCRD(u)}
}

func TestObjectRef(t *testing.T) {
	tests := []struct {
		o    *object
		want string
	}{
		{newObject("batch/v1", "Job", "", "migrate", nil), "Job/migrate"},
		{newObject("batch/v1", "Job", "web", "migrate", nil), "Job/web/migrate"},
		{newObject("rbac.authorization.k8s.io/v1", "ClusterRole", "", "system:reader", nil), "ClusterRole/system:reader"},
	}
	for _, tt := range tests {
		if got := tt.o.ref(); got != tt.want {
			t.Errorf("ref() = %q, want %q", got, tt.want)
		}
	}
	o := newObject("batch/v1", "Job", "", "migrate", nil)
	if got := o.stageRef(); got != "Job/migrate" {
		t.Errorf("stageRef() without planned = %q", got)
	}
	o.planned = "Job/${name}"
	o.u.SetNamespace("web")
	if got := o.stageRef(); got != "Job/${name}" {
		t.Errorf("stageRef() = %q, want the planned ref", got)
	}
}

func TestObjectAnnotations(t *testing.T) {
	type want struct {
		events     []string
		hookWeight int
		policies   []string
		weight     int
		keep       bool
		timeout    time.Duration
		hasTimeout bool
	}
	defaults := want{policies: []string{"before-hook-creation"}}
	tests := []struct {
		name string
		ann  map[string]string
		want want
	}{
		{name: "no annotations", want: defaults},
		{
			name: "hook with everything",
			ann: map[string]string{
				"helm.sh/hook": " pre-install, pre-upgrade ,", "helm.sh/hook-weight": " -5 ",
				"helm.sh/hook-delete-policy": "hook-succeeded,hook-failed", "werf.io/weight": "10",
				"helm.sh/resource-policy": "keep", "gantry.dev/timeout": "90s",
			},
			want: want{
				events: []string{"pre-install", "pre-upgrade"}, hookWeight: -5,
				policies: []string{"hook-succeeded", "hook-failed"}, weight: 10, keep: true,
				timeout: 90 * time.Second, hasTimeout: true,
			},
		},
		{name: "timeout in seconds", ann: map[string]string{"gantry.dev/timeout": "600"}, want: want{policies: defaults.policies, timeout: 10 * time.Minute, hasTimeout: true}},
		{name: "bad timeout ignored", ann: map[string]string{"gantry.dev/timeout": "later"}, want: defaults},
		{name: "bad weights read as 0", ann: map[string]string{"helm.sh/hook-weight": "x", "werf.io/weight": "1.5"}, want: defaults},
		{name: "empty delete policy is the default", ann: map[string]string{"helm.sh/hook-delete-policy": " , "}, want: defaults},
		{name: "keep ignores case", ann: map[string]string{"helm.sh/resource-policy": " Keep "}, want: want{policies: defaults.policies, keep: true}},
		{name: "other resource policy", ann: map[string]string{"helm.sh/resource-policy": "delete"}, want: defaults},
		{name: "empty hook annotation is no hook", ann: map[string]string{"helm.sh/hook": ""}, want: defaults},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newObject("batch/v1", "Job", "", "migrate", tt.ann)
			d, ok := o.timeout()
			got := want{
				events: o.hookEvents(), hookWeight: o.hookWeight(), policies: o.deletePolicies(),
				weight: o.weight(), keep: o.keep(), timeout: d, hasTimeout: ok,
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(want{})); diff != "" {
				t.Errorf("annotations (-want +got):\n%s", diff)
			}
			if o.isHook() != (len(tt.want.events) > 0) {
				t.Errorf("isHook() = %v", o.isHook())
			}
		})
	}
}

func TestHookOf(t *testing.T) {
	o := newObject("batch/v1", "Job", "", "migrate", map[string]string{"helm.sh/hook": "pre-install,post-upgrade"})
	for ev, want := range map[string]bool{"pre-install": true, "post-upgrade": true, "pre-upgrade": false, "pre-delete": false} {
		if got := o.hookOf(ev); got != want {
			t.Errorf("hookOf(%q) = %v, want %v", ev, got, want)
		}
	}
}

func TestExternalDeps(t *testing.T) {
	o := newObject("apps/v1", "Deployment", "", "app", map[string]string{
		"db.external-dependency.werf.io/resource":     "statefulset.apps/postgres",
		"db.external-dependency.werf.io/namespace":    "data",
		"cache.external-dependency.werf.io/resource":  "Deployment/redis",
		"queue.external-dependency.werf.io/resource":  " deployment/rabbit ",
		"broken.external-dependency.werf.io/resource": "nothing",
		"other.example.com/resource":                  "deployment/x",
	})
	want := []externalDep{
		{Name: "cache", Kind: "Deployment", Resource: "redis"},
		{Name: "db", Kind: "statefulset", Group: "apps", Resource: "postgres", Namespace: "data"},
		{Name: "queue", Kind: "deployment", Resource: "rabbit"},
	}
	if diff := cmp.Diff(want, o.externalDeps()); diff != "" {
		t.Errorf("externalDeps (-want +got):\n%s", diff)
	}
	if deps := newObject("v1", "Pod", "", "p", nil).externalDeps(); deps != nil {
		t.Errorf("externalDeps without annotations = %v", deps)
	}
}

func TestParseExternalResource(t *testing.T) {
	tests := []struct {
		in                string
		kind, group, name string
		ok                bool
	}{
		{"deployment/api", "deployment", "", "api", true},
		{"Deployment/api", "Deployment", "", "api", true},
		{"deployment.apps/api", "deployment", "apps", "api", true},
		{"certificates.cert-manager.io/tls", "certificates", "cert-manager.io", "tls", true},
		{"clusterrole/system:reader", "clusterrole", "", "system:reader", true},
		{"api", "", "", "", false},
		{"/api", "", "", "", false},
		{"deployment/", "", "", "", false},
		{"deployment/a/b", "", "", "", false},
		{".apps/api", "", "", "", false},
		{"deployment./api", "", "", "", false},
		{"my kind/api", "", "", "", false},
		{"deployment/my api", "", "", "", false},
	}
	for _, tt := range tests {
		kind, group, name, err := parseExternalResource(tt.in)
		if (err == nil) != tt.ok || kind != tt.kind || group != tt.group || name != tt.name {
			t.Errorf("parseExternalResource(%q) = %q, %q, %q, %v", tt.in, kind, group, name, err)
		}
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		ann  map[string]string
		// want are the errors, in order; each is checked as a substring.
		want []string
	}{
		{name: "nothing to check"},
		{
			name: "all valid",
			ann: map[string]string{
				"helm.sh/hook": "pre-install,post-install,test", "helm.sh/hook-weight": "-3",
				"helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded", "werf.io/weight": "+2",
				"gantry.dev/timeout": "2m", "db.external-dependency.werf.io/resource": "statefulset.apps/pg",
				"db.external-dependency.werf.io/namespace": "data", "unrelated": "anything",
			},
		},
		{
			name: "hook weight",
			ann:  map[string]string{"helm.sh/hook-weight": "x"},
			want: []string{`app.yaml:3:1: Job/migrate: annotation helm.sh/hook-weight: "x" is not an integer`},
		},
		{
			name: "werf weight",
			ann:  map[string]string{"werf.io/weight": "1.5"},
			want: []string{`app.yaml:3:1: Job/migrate: annotation werf.io/weight: "1.5" is not an integer`},
		},
		{
			name: "unknown hook event",
			ann:  map[string]string{"helm.sh/hook": "pre-install,pre-instal"},
			want: []string{`annotation helm.sh/hook: unknown hook event "pre-instal"; expected pre-install, post-install`},
		},
		{
			name: "hook without events",
			ann:  map[string]string{"helm.sh/hook": " , "},
			want: []string{`annotation helm.sh/hook: " , " names no event`},
		},
		{
			name: "unknown delete policy",
			ann:  map[string]string{"helm.sh/hook-delete-policy": "hook-succeeded,always"},
			want: []string{`annotation helm.sh/hook-delete-policy: unknown delete policy "always"; expected before-hook-creation, hook-succeeded, hook-failed`},
		},
		{
			name: "bad timeout",
			ann:  map[string]string{"gantry.dev/timeout": "soon"},
			want: []string{`annotation gantry.dev/timeout: "soon" is neither seconds nor a duration`},
		},
		{
			name: "zero timeout",
			ann:  map[string]string{"gantry.dev/timeout": "0"},
			want: []string{`annotation gantry.dev/timeout: 0 is not a positive number of seconds`},
		},
		{
			name: "malformed external dependency",
			ann:  map[string]string{"db.external-dependency.werf.io/resource": "postgres"},
			want: []string{`annotation db.external-dependency.werf.io/resource: "postgres" is not <kind>/<name>`},
		},
		{
			name: "external dependency namespace alone",
			ann:  map[string]string{"db.external-dependency.werf.io/namespace": "data"},
			want: []string{`dependency "db" has a namespace but no db.external-dependency.werf.io/resource`},
		},
		{
			name: "external dependency bad namespace",
			ann: map[string]string{
				"db.external-dependency.werf.io/resource":  "deployment/pg",
				"db.external-dependency.werf.io/namespace": "Data!",
			},
			want: []string{`annotation db.external-dependency.werf.io/namespace: "Data!" is not a namespace name`},
		},
		{
			name: "external dependency without name",
			ann:  map[string]string{".external-dependency.werf.io/resource": "deployment/pg"},
			want: []string{"the dependency has no name"},
		},
		{
			name: "external dependency unknown field",
			ann:  map[string]string{"db.external-dependency.werf.io/resources": "deployment/pg"},
			want: []string{`unknown external dependency field "resources"; expected db.external-dependency.werf.io/resource`},
		},
		{
			name: "several, in key order",
			ann:  map[string]string{"werf.io/weight": "a", "helm.sh/hook-weight": "b", "helm.sh/hook": "later"},
			want: []string{"helm.sh/hook: unknown hook event", "helm.sh/hook-weight:", "werf.io/weight:"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := newObject("batch/v1", "Job", "", "migrate", tt.ann).validate()
			if len(errs) != len(tt.want) {
				t.Fatalf("validate() = %v, want %d errors", errs, len(tt.want))
			}
			for i, err := range errs {
				if !strings.Contains(err.Error(), tt.want[i]) {
					t.Errorf("error %d = %q, want it to contain %q", i, err, tt.want[i])
				}
				if !strings.HasPrefix(err.Error(), "app.yaml:3:1: Job/migrate: annotation ") {
					t.Errorf("error %q does not start with the source and ref", err)
				}
			}
		})
	}
}
