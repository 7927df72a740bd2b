package kubernetes

import (
	"context"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	fakedynamic "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

// dryRunServer answers dry runs as a kube-apiserver does when the Jobs
// named in existing are in the cluster with another pod template: an
// apply (a change of one) is refused, as a Job's template is immutable; a
// creation is validated first (the Job "broken" is invalid) and only then
// refused with AlreadyExists when its name is taken. It records each
// request as "create Job/name" or "apply Job/name", and refuses a dry-run
// creation that would not refuse unknown fields, as an apply does.
func dryRunServer(t *testing.T, existing ...string) (*cluster, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var seen []string
	note := func(verb string, gvr schema.GroupVersionResource, name string) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, verb+" "+gvr.Resource+"/"+name)
	}
	jobs := schema.GroupResource{Group: "batch", Resource: "jobs"}
	immutable := func(name string) error {
		return apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, name,
			field.ErrorList{field.Invalid(field.NewPath("spec", "template"), nil, "field is immutable")})
	}
	dyn := fakedynamic.NewSimpleDynamicClient(runtime.NewScheme())
	dyn.PrependReactor("create", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		ca := a.(clienttesting.CreateActionImpl)
		u := ca.Object.(*unstructured.Unstructured)
		note("create", a.GetResource(), u.GetName())
		if !slices.Equal(ca.CreateOptions.DryRun, []string{metav1.DryRunAll}) {
			t.Errorf("create %s: not a dry run (%v)", u.GetName(), ca.CreateOptions.DryRun)
		}
		if ca.CreateOptions.FieldValidation != metav1.FieldValidationStrict {
			return true, nil, apierrors.NewBadRequest("unknown fields would be dropped (fieldValidation " + ca.CreateOptions.FieldValidation + "), not refused as an apply refuses them")
		}
		switch {
		case u.GetName() == "broken":
			return true, nil, apierrors.NewInvalid(schema.GroupKind{Group: "batch", Kind: "Job"}, "broken",
				field.ErrorList{field.Required(field.NewPath("spec", "template", "spec", "restartPolicy"), "")})
		case slices.Contains(existing, u.GetName()):
			return true, nil, apierrors.NewAlreadyExists(jobs, u.GetName())
		}
		return true, u, nil
	})
	dyn.PrependReactor("patch", "*", func(a clienttesting.Action) (bool, runtime.Object, error) {
		pa := a.(clienttesting.PatchActionImpl)
		note("apply", a.GetResource(), pa.GetName())
		if slices.Contains(existing, pa.GetName()) {
			return true, nil, immutable(pa.GetName())
		}
		u := &unstructured.Unstructured{}
		return true, u, u.UnmarshalJSON(pa.Patch)
	})
	c := fakeCluster(dyn, nil, &metav1.APIResourceList{GroupVersion: "batch/v1",
		APIResources: []metav1.APIResource{{Name: "jobs", Kind: "Job", Namespaced: true, Verbs: metav1.Verbs{"create", "patch"}}}})
	return c, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

// TestValidateHookAsCreation: prepare's dry run checks a hook as the
// creation its stage makes — the one an earlier run left (kept by
// before-hook-creation until the next is created, by hook-succeeded or
// hook-failed when it ended otherwise, or by a killed run) is deleted
// first, whatever the policy — and not as a change of the old one, which
// the API server refuses for a Job whose pod template changed ("field is
// immutable"). An invalid hook is still refused, and an object that is not
// a hook is still checked as the change its apply makes. Before, every
// object was dry-run as an apply: a deploy after a hook Job's template
// changed was refused until the old Job was deleted by hand.
func TestValidateHookAsCreation(t *testing.T) {
	for _, tc := range []struct {
		name    string
		obj     string
		ann     map[string]string
		want    string // the request the server sees
		wantErr string // "" for valid
	}{
		{"a hook the last run left (before-hook-creation)", "migrate",
			map[string]string{annHook: "post-upgrade"}, "create jobs/migrate", ""},
		{"a hook a killed run left (before-hook-creation, hook-succeeded)", "notify",
			map[string]string{annHook: "post-upgrade", annHookDeletePolicy: policyBeforeCreation + "," + policySucceeded}, "create jobs/notify", ""},
		{"a hook a killed run left (hook-succeeded)", "notify",
			map[string]string{annHook: "post-upgrade", annHookDeletePolicy: policySucceeded}, "create jobs/notify", ""},
		{"a hook that succeeded (hook-failed)", "notify",
			map[string]string{annHook: "pre-install,pre-upgrade", annHookDeletePolicy: policyFailed}, "create jobs/notify", ""},
		{"a new hook", "fresh",
			map[string]string{annHook: "pre-upgrade"}, "create jobs/fresh", ""},
		{"an invalid hook", "broken",
			map[string]string{annHook: "pre-upgrade"}, "create jobs/broken", "restartPolicy: Required value"},
		{"a Job that is not a hook", "migrate",
			nil, "apply jobs/migrate", "field is immutable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, requests := dryRunServer(t, "migrate", "notify")
			o := newObject("batch/v1", "Job", "apps", tc.obj, tc.ann)
			r := &release{cl: c, objects: []*object{o}, out: io.Discard}
			err := r.validate(context.Background(), nil)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("validate: %v, want it valid", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("validate: %v, want an error saying %q", err, tc.wantErr)
			}
			if got := requests(); !slices.Equal(got, []string{tc.want}) {
				t.Errorf("requests %q, want %q", got, tc.want)
			}
		})
	}
}
