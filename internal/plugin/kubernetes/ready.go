package kubernetes

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fluxcd/cli-utils/pkg/kstatus/status"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// health is where an object stands on its way to being ready.
type health uint8

// The healths.
const (
	// healthProgressing: not ready yet; watching on may see it ready.
	healthProgressing health = iota
	// healthReady: the object does what it was applied for.
	healthReady
	// healthFailed: it will not become ready without a change (a crash
	// loop, a failed Job, an exceeded progress deadline), so the deploy
	// need not wait for its timeout.
	healthFailed
)

// String names the health for messages and tests.
func (h health) String() string {
	switch h {
	case healthReady:
		return "ready"
	case healthFailed:
		return "failed"
	}
	return "progressing"
}

// Group kinds with rules of their own; a kind of the same name in another
// group (a custom resource called Deployment) gets the generic rule.
var (
	gkDeployment  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	gkStatefulSet = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	gkDaemonSet   = schema.GroupKind{Group: "apps", Kind: "DaemonSet"}
	gkReplicaSet  = schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}
	gkJob         = schema.GroupKind{Group: "batch", Kind: "Job"}
	gkPod         = schema.GroupKind{Kind: "Pod"}
	gkPVC         = schema.GroupKind{Kind: "PersistentVolumeClaim"}
	gkService     = schema.GroupKind{Kind: "Service"}
	gkRC          = schema.GroupKind{Kind: "ReplicationController"}
	gkCRD         = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
)

// assess says whether an object, as the API server returned it, is ready,
// still progressing (with what it waits for: "2/3 ready", "waiting for a
// load balancer"), or failed (with the reason). asHook asks more of hooks,
// which run to completion: a Pod must have Succeeded, not only be Ready.
func assess(u *unstructured.Unstructured, asHook bool) (health, string) {
	if u.GetDeletionTimestamp() != nil {
		return healthProgressing, "being deleted"
	}
	switch u.GroupVersionKind().GroupKind() {
	case gkDeployment:
		return typed(u, deploymentHealth)
	case gkStatefulSet:
		return typed(u, statefulSetHealth)
	case gkDaemonSet:
		return typed(u, daemonSetHealth)
	case gkReplicaSet:
		return typed(u, replicaSetHealth)
	case gkRC:
		return typed(u, rcHealth)
	case gkJob:
		return typed(u, jobHealth)
	case gkPod:
		return typed(u, func(p *corev1.Pod) (health, string) { return podHealth(p, asHook) })
	case gkPVC:
		return typed(u, pvcHealth)
	case gkService:
		return typed(u, serviceHealth)
	case gkCRD:
		return crdHealth(u)
	}
	return genericHealth(u)
}

// typed converts u to its API type and assesses that, which reads better
// than paths into maps and gets the defaults of absent fields right.
func typed[T any](u *unstructured.Unstructured, rule func(*T) (health, string)) (health, string) {
	var v T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &v); err != nil {
		return healthProgressing, fmt.Sprintf("cannot read the object: %v", err)
	}
	return rule(&v)
}

// unobserved says the controller has not yet seen the object's latest
// spec: its status describes an older one.
func unobserved(generation, observed int64) (string, bool) {
	if observed < generation {
		return fmt.Sprintf("waiting for the controller to observe generation %d (at %d)", generation, observed), true
	}
	return "", false
}

// replicas is spec.replicas, which defaults to 1.
func replicas(r *int32) int32 {
	if r == nil {
		return 1
	}
	return *r
}

// deploymentHealth: the controller saw the latest spec, every wanted
// replica is updated, ready and available, no old one is left, and the
// rollout did not exceed its progress deadline.
func deploymentHealth(d *appsv1.Deployment) (health, string) {
	if d.Spec.Paused {
		// Its controller rolls nothing out until it is resumed: waiting
		// would last the whole timeout (helm takes it as ready too).
		return healthReady, readyPaused
	}
	if msg, ok := unobserved(d.Generation, d.Status.ObservedGeneration); ok {
		return healthProgressing, msg
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentProgressing && c.Reason == "ProgressDeadlineExceeded" {
			return healthFailed, "progress deadline exceeded: " + c.Message
		}
	}
	want, st := replicas(d.Spec.Replicas), d.Status
	switch {
	case st.UpdatedReplicas != want:
		return healthProgressing, fmt.Sprintf("%d/%d updated", st.UpdatedReplicas, want)
	case st.Replicas != want:
		return healthProgressing, fmt.Sprintf("%d replicas, %d wanted: old ones terminating", st.Replicas, want)
	case st.ReadyReplicas != want:
		return healthProgressing, fmt.Sprintf("%d/%d ready", st.ReadyReplicas, want)
	case st.AvailableReplicas != want:
		return healthProgressing, fmt.Sprintf("%d/%d available", st.AvailableReplicas, want)
	}
	return healthReady, fmt.Sprintf("%d/%d ready", st.ReadyReplicas, want)
}

// statefulSetHealth: the controller saw the latest spec, every wanted
// replica is ready, and the rollout finished: the current revision is the
// update revision, or with a partition the replicas from the partition up
// are updated (those below it are left on the old revision on purpose).
// With OnDelete updates, pods change only when deleted, so ready replicas
// are all there is to wait for.
func statefulSetHealth(s *appsv1.StatefulSet) (health, string) {
	if msg, ok := unobserved(s.Generation, s.Status.ObservedGeneration); ok {
		return healthProgressing, msg
	}
	want, st := replicas(s.Spec.Replicas), s.Status
	if st.ReadyReplicas != want {
		return healthProgressing, fmt.Sprintf("%d/%d ready", st.ReadyReplicas, want)
	}
	if want == 0 || s.Spec.UpdateStrategy.Type == appsv1.OnDeleteStatefulSetStrategyType {
		if st.Replicas != want {
			return healthProgressing, fmt.Sprintf("%d replicas, %d wanted", st.Replicas, want)
		}
		return healthReady, fmt.Sprintf("%d/%d ready", st.ReadyReplicas, want)
	}
	var partition int32
	if ru := s.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.Partition != nil {
		partition = *ru.Partition
	}
	if partition > 0 {
		if st.UpdatedReplicas < want-partition {
			return healthProgressing, fmt.Sprintf("%d/%d updated (partition %d)", st.UpdatedReplicas, max(want-partition, 0), partition)
		}
	} else if st.CurrentRevision != st.UpdateRevision {
		return healthProgressing, fmt.Sprintf("%d/%d updated", st.UpdatedReplicas, want)
	}
	return healthReady, fmt.Sprintf("%d/%d ready", st.ReadyReplicas, want)
}

// daemonSetHealth: the controller saw the latest spec and the pod of every
// node it should run on is updated and available. With OnDelete updates,
// only availability counts.
func daemonSetHealth(d *appsv1.DaemonSet) (health, string) {
	if msg, ok := unobserved(d.Generation, d.Status.ObservedGeneration); ok {
		return healthProgressing, msg
	}
	st := d.Status
	want := st.DesiredNumberScheduled
	if d.Spec.UpdateStrategy.Type != appsv1.OnDeleteDaemonSetStrategyType && st.UpdatedNumberScheduled != want {
		return healthProgressing, fmt.Sprintf("%d/%d updated", st.UpdatedNumberScheduled, want)
	}
	if st.NumberAvailable != want {
		return healthProgressing, fmt.Sprintf("%d/%d available", st.NumberAvailable, want)
	}
	return healthReady, fmt.Sprintf("%d/%d available", st.NumberAvailable, want)
}

// replicaSetHealth: every wanted replica is ready.
func replicaSetHealth(r *appsv1.ReplicaSet) (health, string) {
	if msg, ok := unobserved(r.Generation, r.Status.ObservedGeneration); ok {
		return healthProgressing, msg
	}
	return readyReplicas(r.Status.ReadyReplicas, replicas(r.Spec.Replicas))
}

// rcHealth: every wanted replica is ready.
func rcHealth(r *corev1.ReplicationController) (health, string) {
	if msg, ok := unobserved(r.Generation, r.Status.ObservedGeneration); ok {
		return healthProgressing, msg
	}
	return readyReplicas(r.Status.ReadyReplicas, replicas(r.Spec.Replicas))
}

// readyReplicas: ready once every wanted replica is ready.
func readyReplicas(ready, want int32) (health, string) {
	msg := fmt.Sprintf("%d/%d ready", ready, want)
	if ready != want {
		return healthProgressing, msg
	}
	return healthReady, msg
}

// jobHealth: a Job is ready when it completed, hook or not: what follows
// it may need its work done (a migration before the app).
func jobHealth(j *batchv1.Job) (health, string) {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobFailed:
			return healthFailed, "failed: " + reasonMessage(c.Reason, c.Message)
		case batchv1.JobComplete:
			return healthReady, "complete"
		}
	}
	if j.Spec.Suspend != nil && *j.Spec.Suspend {
		return healthProgressing, "suspended"
	}
	msg := fmt.Sprintf("running: %d active", j.Status.Active)
	if j.Status.Succeeded > 0 {
		msg += fmt.Sprintf(", %d succeeded", j.Status.Succeeded)
	}
	if j.Status.Failed > 0 {
		msg += fmt.Sprintf(", %d failed", j.Status.Failed)
	}
	return healthProgressing, msg
}

// failedWaiting are the reasons of a waiting container that will not
// start without a change to the object (or take minutes of back-off to
// retry what failed): the deploy fails at once rather than at its timeout.
var failedWaiting = []string{"CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError", "InvalidImageName"}

// podHealth: a Pod is ready when its Ready condition is true or it
// succeeded; a hook Pod must have succeeded. A failed Pod, or a container
// stuck in one of failedWaiting, is failed.
func podHealth(p *corev1.Pod, asHook bool) (health, string) {
	st := p.Status
	if st.Phase == corev1.PodFailed {
		return healthFailed, "failed: " + reasonMessage(st.Reason, st.Message)
	}
	for _, cs := range slices.Concat(st.InitContainerStatuses, st.ContainerStatuses) {
		if w := cs.State.Waiting; w != nil && slices.Contains(failedWaiting, w.Reason) {
			return healthFailed, fmt.Sprintf("container %s: %s", cs.Name, reasonMessage(w.Reason, w.Message))
		}
	}
	if st.Phase == corev1.PodSucceeded {
		return healthReady, "succeeded"
	}
	if asHook {
		return healthProgressing, podProgress(p, string(st.Phase))
	}
	for _, c := range st.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return healthReady, "ready"
		}
	}
	return healthProgressing, podProgress(p, string(st.Phase))
}

// podProgress says what a pod that is not ready waits for.
func podProgress(p *corev1.Pod, phase string) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return "not scheduled: " + reasonMessage(c.Reason, c.Message)
		}
	}
	ready := 0
	for _, cs := range p.Status.ContainerStatuses {
		if cs.Ready {
			ready++
		}
	}
	if phase == "" {
		phase = "Pending"
	}
	return fmt.Sprintf("%s: %d/%d containers ready", strings.ToLower(phase), ready, len(p.Spec.Containers))
}

// pvcHealth: a claim is ready once bound to a volume; a lost volume is
// failed.
func pvcHealth(c *corev1.PersistentVolumeClaim) (health, string) {
	switch c.Status.Phase {
	case corev1.ClaimBound:
		return healthReady, "bound"
	case corev1.ClaimLost:
		return healthFailed, "lost: its volume is gone"
	}
	return healthProgressing, "waiting to be bound"
}

// serviceHealth: a LoadBalancer service waits for its load balancer; the
// others work as soon as they exist.
func serviceHealth(s *corev1.Service) (health, string) {
	if s.Spec.Type != corev1.ServiceTypeLoadBalancer {
		return healthReady, "ready"
	}
	ing := s.Status.LoadBalancer.Ingress
	if len(ing) == 0 {
		return healthProgressing, "waiting for a load balancer"
	}
	addr := ing[0].IP
	if addr == "" {
		addr = ing[0].Hostname
	}
	if addr == "" {
		return healthReady, "load balancer ready"
	}
	return healthReady, "load balancer at " + addr
}

// crdHealth: a CRD is ready once established (its kind is served); names
// that clash with another CRD's are failed. Read from the map: the CRD
// types live in a module of their own that gantry does not need.
func crdHealth(u *unstructured.Unstructured) (health, string) {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	established := false
	for _, x := range conds {
		c, _ := x.(map[string]any)
		typ, _ := c["type"].(string)
		st, _ := c["status"].(string)
		reason, _ := c["reason"].(string)
		msg, _ := c["message"].(string)
		switch {
		case typ == "NamesAccepted" && st == "False":
			return healthFailed, "names not accepted: " + reasonMessage(reason, msg)
		case typ == "Established" && st == "True":
			established = true
		}
	}
	if established {
		return healthReady, "established"
	}
	return healthProgressing, "waiting to be established"
}

// Ready, but not as the kind's rule means it: said as they are, not as
// "ready", so nobody takes them for a rollout that finished.
const (
	// readyWithoutStatus is what an object without a status is said to be.
	readyWithoutStatus = "ready (no status yet: nothing to wait for)"
	// readyPaused is what a paused Deployment is said to be.
	readyPaused = "ready (paused: it rolls out nothing until kubectl rollout resume)"
)

// saidAsIs reports whether a ready object's message is told as it is.
func saidAsIs(msg string) bool {
	return strings.HasPrefix(msg, "ready (")
}

// genericHealth assesses other kinds with kstatus, which reads the
// conventions most controllers follow (observedGeneration, Ready and
// Reconciling conditions). An object without a status has no controller
// to wait for: ready.
func genericHealth(u *unstructured.Unstructured) (health, string) {
	if _, ok := u.Object["status"]; !ok {
		// Said, as it is not a controller's word: a slow operator's
		// resource is not waited for.
		return healthReady, readyWithoutStatus
	}
	res, err := status.Compute(u)
	if err != nil {
		return healthProgressing, fmt.Sprintf("cannot read the status: %v", err)
	}
	switch res.Status {
	case status.CurrentStatus:
		return healthReady, orText(res.Message, "ready")
	case status.FailedStatus:
		return healthFailed, orText(res.Message, "failed")
	}
	return healthProgressing, orText(res.Message, strings.ToLower(res.Status.String()))
}

// reasonMessage joins a reason and a message, either possibly empty.
func reasonMessage(reason, message string) string {
	switch {
	case reason == "":
		return orText(message, "no reason given")
	case message == "":
		return reason
	}
	return reason + ": " + message
}

// orText is s, or def when s is empty.
func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// readyOnApply reports whether the object an apply answered with is ready,
// so that it need not be tracked, and how to say so. A custom resource is created without a
// status (its status subresource is not applied), which reads as ready:
// it is tracked, as a list after the whole group's apply may find what its
// controller said meanwhile. Built-in kinds that never have a status are
// ready as they are.
func readyOnApply(u *unstructured.Unstructured, asHook bool) (ready bool, said string) {
	if _, ok := u.Object["status"]; !ok && !statusless[u.GroupVersionKind().GroupKind()] {
		return false, ""
	}
	h, msg := assess(u, asHook)
	if h != healthReady {
		return false, ""
	}
	if saidAsIs(msg) && !statusless[u.GroupVersionKind().GroupKind()] {
		return true, msg
	}
	return true, "ready" // a ConfigMap has no status to wait for: nothing to say
}

// statusless are the built-in kinds a chart holds that have no status:
// their objects are ready once they exist.
var statusless = map[schema.GroupKind]bool{
	{Kind: "ConfigMap"}: true, {Kind: "Secret"}: true, {Kind: "ServiceAccount"}: true,
	{Kind: "Endpoints"}: true, {Kind: "LimitRange"}: true, {Kind: "PodTemplate"}: true,
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}: true, {Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}: true,
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}: true, {Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: true,
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}: true, {Group: "networking.k8s.io", Kind: "IngressClass"}: true,
	{Group: "discovery.k8s.io", Kind: "EndpointSlice"}:  true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}: true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:     true, {Group: "storage.k8s.io", Kind: "CSIDriver"}: true,
	{Group: "node.k8s.io", Kind: "RuntimeClass"}:                                    true,
	{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}: true,
	{Group: "admissionregistration.k8s.io", Kind: "MutatingWebhookConfiguration"}:   true,
}
