package kubernetes

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
)

// The annotations that steer a deploy. The helm.sh ones are Helm's and the
// werf.io ones werf's (seed 004), so that charts' manifests and werf
// projects deploy the same way under gantry; gantry.dev/timeout is ours.
const (
	annHook             = "helm.sh/hook"
	annHookWeight       = "helm.sh/hook-weight"
	annHookDeletePolicy = "helm.sh/hook-delete-policy"
	annResourcePolicy   = "helm.sh/resource-policy"
	annWeight           = "werf.io/weight"
	annTimeout          = "gantry.dev/timeout"

	// extDepDomain ends the keys of external dependencies:
	// <name>.external-dependency.werf.io/resource and .../namespace.
	extDepDomain = ".external-dependency.werf.io/"
)

// Hook events (helm.sh/hook). gantry has no rollback; the rollback events
// are accepted so that charts written for Helm load, and never run. Tests
// (helm test) are not part of a deploy either.
const (
	eventPreInstall   = "pre-install"
	eventPostInstall  = "post-install"
	eventPreUpgrade   = "pre-upgrade"
	eventPostUpgrade  = "post-upgrade"
	eventPreDelete    = "pre-delete"
	eventPostDelete   = "post-delete"
	eventPreRollback  = "pre-rollback"
	eventPostRollback = "post-rollback"
	eventTest         = "test"
	eventTestSuccess  = "test-success"
)

// knownHookEvents are the values helm.sh/hook may list.
var knownHookEvents = []string{
	eventPreInstall, eventPostInstall, eventPreUpgrade, eventPostUpgrade,
	eventPreDelete, eventPostDelete, eventPreRollback, eventPostRollback,
	eventTest, eventTestSuccess,
}

// Hook delete policies (helm.sh/hook-delete-policy): when a hook object is
// deleted.
const (
	// policyBeforeCreation deletes the previous run's hook right before
	// the hook is created again: the default, so that a hook runs on every
	// deploy and its last run stays visible until the next.
	policyBeforeCreation = "before-hook-creation"
	// policySucceeded deletes the hook right after it succeeded.
	policySucceeded = "hook-succeeded"
	// policyFailed deletes the hook right after it failed.
	policyFailed = "hook-failed"
)

// knownDeletePolicies are the values helm.sh/hook-delete-policy may list.
var knownDeletePolicies = []string{policyBeforeCreation, policySucceeded, policyFailed}

// object is one Kubernetes object of an instance's manifests, with where it
// was written so that every message about it can point there.
type object struct {
	u *unstructured.Unstructured
	// source is where the object's document starts: "deploy/app.yaml:12:1"
	// (relative to the component folder), "kustomize overlay (document 3)",
	// or "recorded in state" for what an undeploy deletes.
	source string
	// crd marks an object deployed in the CRDs stage: it came from the
	// CRDs folder or is a CustomResourceDefinition.
	crd bool
	// createOnly marks a chart's crds/ CRD, under helm's rule for them:
	// created when missing and otherwise left as it is, whoever made it;
	// never marked, claimed, recorded or deleted — deleting a CRD deletes
	// every object of its kind in the cluster, and another release may
	// use it. Only sources set it (Document.CRD); the kubernetes plugin's
	// CRDs are applied and owned as its other objects.
	createOnly bool
	// planned is the object's ref as the manifests write it, before
	// parameters are expanded (load sets it when it expands): stage ids
	// are made of it, so that the ids of a run are those the plan showed
	// although names may hold ${...} and the runner fills in namespaces.
	planned string
	// annotationAt are where the manifests write each annotation's value
	// ("deploy/app.yaml:14:24"), for its errors; nil when unknown.
	annotationAt map[string]string
}

// externalDep is a resource the release does not own that an object waits
// for (werf's external dependencies):
//
//	metadata:
//	  annotations:
//	    db.external-dependency.werf.io/resource: statefulset.apps/postgres
//	    db.external-dependency.werf.io/namespace: data
type externalDep struct {
	// Name is the dependency's name: the first part of its annotations.
	Name string
	// Kind is the kind or resource as written ("Deployment", "deployment",
	// "deployments"); the runner resolves it through discovery, ignoring
	// case. Group is "" unless written as kind.group ("deployment.apps").
	Kind, Group string
	// Resource is the name of the object depended on.
	Resource string
	// Namespace is its namespace; "" means the release namespace.
	Namespace string
}

// ref names the object in messages and stage ids: "Kind/name" when it names
// no namespace (cluster-scoped, or left to the release namespace),
// "Kind/namespace/name" otherwise.
func (o *object) ref() string {
	if ns := o.u.GetNamespace(); ns != "" {
		return o.u.GetKind() + "/" + ns + "/" + o.u.GetName()
	}
	return o.u.GetKind() + "/" + o.u.GetName()
}

// stageRef is the ref stage ids use: the ref as planned.
func (o *object) stageRef() string {
	if o.planned != "" {
		return o.planned
	}
	return o.ref()
}

// annotation returns one annotation's value, trimmed.
func (o *object) annotation(key string) (string, bool) {
	v, ok := o.u.GetAnnotations()[key]
	return strings.TrimSpace(v), ok
}

// splitList splits a comma-separated annotation, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// hookEvents returns the events the object is a hook of (helm.sh/hook);
// none for an object that is not a hook.
func (o *object) hookEvents() []string {
	v, _ := o.annotation(annHook)
	return splitList(v)
}

// isHook reports whether the object is a hook, which is never one of the
// main objects, whatever its events.
func (o *object) isHook() bool { return len(o.hookEvents()) > 0 }

// hookOf reports whether the object is a hook of event.
func (o *object) hookOf(event string) bool { return slices.Contains(o.hookEvents(), event) }

// intAnnotation reads an integer annotation, 0 when absent or malformed
// (validate reports the malformed ones).
func (o *object) intAnnotation(key string) int {
	v, _ := o.annotation(key)
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0
	}
	return n
}

// hookWeight orders hooks of one event: lower first (helm.sh/hook-weight).
func (o *object) hookWeight() int { return o.intAnnotation(annHookWeight) }

// weight is the object's deploy group (werf.io/weight): lower groups are
// deployed, and ready, before higher ones.
func (o *object) weight() int { return o.intAnnotation(annWeight) }

// deletePolicies says when a hook is deleted (helm.sh/hook-delete-policy),
// before-hook-creation when the annotation names none.
func (o *object) deletePolicies() []string {
	v, _ := o.annotation(annHookDeletePolicy)
	if p := splitList(v); len(p) > 0 {
		return p
	}
	return []string{policyBeforeCreation}
}

// keep reports whether the object stays in the cluster when it is pruned
// or undeployed (helm.sh/resource-policy: keep), as Helm keeps it.
func (o *object) keep() bool {
	v, _ := o.annotation(annResourcePolicy)
	return strings.EqualFold(v, "keep")
}

// timeout is how long the object may take to become ready when its
// gantry.dev/timeout annotation says (seconds or a Go duration); false
// means the config's timeout applies.
func (o *object) timeout() (time.Duration, bool) {
	v, ok := o.annotation(annTimeout)
	if !ok {
		return 0, false
	}
	d, err := parseDuration(v)
	if err != nil {
		return 0, false
	}
	return d, true
}

// externalDeps lists the object's external dependencies by name. Malformed
// ones are left out (validate reports them).
func (o *object) externalDeps() []externalDep {
	ann := o.u.GetAnnotations()
	var deps []externalDep
	for k, v := range ann {
		name, field, ok := externalDepKey(k)
		if !ok || field != "resource" || name == "" {
			continue
		}
		kind, group, res, err := parseExternalResource(v)
		if err != nil {
			continue
		}
		deps = append(deps, externalDep{
			Name: name, Kind: kind, Group: group, Resource: res,
			Namespace: strings.TrimSpace(ann[name+extDepDomain+"namespace"]),
		})
	}
	slices.SortFunc(deps, func(a, b externalDep) int { return strings.Compare(a.Name, b.Name) })
	return deps
}

// externalDepKey splits an external dependency annotation's key into the
// dependency's name and the field (resource or namespace).
func externalDepKey(k string) (name, field string, ok bool) {
	i := strings.Index(k, extDepDomain)
	if i < 0 {
		return "", "", false
	}
	return k[:i], k[i+len(extDepDomain):], true
}

// parseExternalResource reads an external dependency's "<kind>/<name>",
// where kind may be "kind.group".
func parseExternalResource(v string) (kind, group, name string, err error) {
	v = strings.TrimSpace(v)
	k, name, ok := strings.Cut(v, "/")
	if !ok || k == "" || name == "" || strings.Contains(name, "/") {
		return "", "", "", fmt.Errorf("%q is not <kind>/<name> (like deployment/api or deployment.apps/api)", v)
	}
	kind, group, _ = strings.Cut(k, ".")
	if kind == "" || strings.HasSuffix(k, ".") || strings.ContainsAny(k, " \t") {
		return "", "", "", fmt.Errorf("%q is not <kind>/<name>: %q is not a kind or kind.group", v, k)
	}
	if strings.ContainsAny(name, " \t") {
		return "", "", "", fmt.Errorf("%q is not <kind>/<name>: %q is not an object name", v, name)
	}
	return kind, group, name, nil
}

// validate checks the annotations that steer the deploy, so that a typo
// is an error at plan time rather than a hook that silently never runs. Each
// error starts with the object's source and ref and says what was expected.
func (o *object) validate() []error {
	var errs []error
	bad := func(key, format string, args ...any) {
		at := o.source
		if a, ok := o.annotationAt[key]; ok {
			at = a
		}
		errs = append(errs, fmt.Errorf("%s: %s: annotation %s: %s", at, o.ref(), key, fmt.Sprintf(format, args...)))
	}
	ann := o.u.GetAnnotations()
	keys := make([]string, 0, len(ann))
	for k := range ann {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		raw := ann[k]
		v := strings.TrimSpace(raw)
		switch k {
		case annHook:
			events := splitList(v)
			if len(events) == 0 {
				bad(k, "%q names no event; expected a comma-separated list of %s", raw, strings.Join(knownHookEvents, ", "))
			}
			for _, e := range events {
				if !slices.Contains(knownHookEvents, e) {
					bad(k, "unknown hook event %q; expected %s", e, strings.Join(knownHookEvents, ", "))
				}
			}
		case annHookWeight, annWeight:
			if _, err := strconv.Atoi(v); err != nil {
				bad(k, "%q is not an integer", raw)
			}
		case annHookDeletePolicy:
			for _, p := range splitList(v) {
				if !slices.Contains(knownDeletePolicies, p) {
					bad(k, "unknown delete policy %q; expected %s", p, strings.Join(knownDeletePolicies, ", "))
				}
			}
		case annTimeout:
			if _, err := parseDuration(v); err != nil {
				bad(k, "%v", err)
			}
		default:
			name, field, ok := externalDepKey(k)
			if !ok {
				continue
			}
			switch {
			case name == "":
				bad(k, "the dependency has no name; expected <name>%sresource", extDepDomain)
			case field == "resource":
				if _, _, _, err := parseExternalResource(v); err != nil {
					bad(k, "%v", err)
				}
			case field == "namespace":
				if _, ok := ann[name+extDepDomain+"resource"]; !ok {
					bad(k, "dependency %q has a namespace but no %s%sresource", name, name, extDepDomain)
				} else if msgs := validation.IsDNS1123Label(v); len(msgs) > 0 {
					bad(k, "%q is not a namespace name", raw)
				}
			default:
				bad(k, "unknown external dependency field %q; expected %s%sresource (<kind>/<name>) and optionally %s%snamespace", field, name, extDepDomain, name, extDepDomain)
			}
		}
	}
	return errs
}
