package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/watch"
)

// errNotReady is the cause of a wait that ran out of time.
var errNotReady = errors.New("not ready")

// await follows one object with a watch until done says it is where it
// should be: done sees the object after every change the API server tells
// of (nil while it does not exist). A watch the server ends is taken up
// again from a fresh list, so nothing is missed and nothing polls.
func (c *cluster) await(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, done func(u *unstructured.Unstructured) (bool, error)) error {
	ri, _, err := c.resource(gvk, namespace)
	if err != nil {
		return err
	}
	sel := fields.OneTermEqualSelector("metadata.name", name).String()
	retry := firstRetryWait
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var list *unstructured.UnstructuredList
		err := c.ask(ctx, func() (err error) {
			list, err = ri.List(ctx, metav1.ListOptions{FieldSelector: sel})
			return err
		})
		if err != nil {
			if err := backOff(ctx, err, &retry); err != nil {
				return err
			}
			continue
		}
		var u *unstructured.Unstructured
		if len(list.Items) > 0 {
			u = &list.Items[0]
		}
		if ok, err := done(u); ok || err != nil {
			return err
		}
		var w watch.Interface
		err = c.ask(ctx, func() (err error) {
			w, err = ri.Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: list.GetResourceVersion(), AllowWatchBookmarks: true})
			return err
		})
		if err != nil {
			if err := backOff(ctx, err, &retry); err != nil {
				return err
			}
			continue
		}
		opened := time.Now()
		ok, err := follow(w, done)
		w.Stop()
		if ok || err != nil {
			return err
		}
		// A watch the server (or a proxy before it) ends at once would
		// otherwise be listed and watched again in a tight loop: every
		// object not ready has one, and the client has no rate limit.
		if time.Since(opened) < watchMinLife {
			if err := sleep(ctx, jittered(retry)); err != nil {
				return err
			}
			retry = min(2*retry, maxRetryWait)
		} else {
			retry = firstRetryWait
		}
	}
}

// A watch that ends sooner than watchMinLife is taken up again only after
// a wait; waits go from firstRetryWait to maxRetryWait, doubling.
const (
	watchMinLife   = time.Second
	firstRetryWait = 50 * time.Millisecond
	maxRetryWait   = 2 * time.Second
)

// jittered is d give or take a quarter, at random: trackers that started
// together (every object of a group) and met the same failure do not all
// come back at the same instant.
func jittered(d time.Duration) time.Duration {
	return d - d/4 + rand.N(d/2+1)
}

// follow reads a watch until done says so, or the watch ends (false: list
// again).
func follow(w watch.Interface, done func(u *unstructured.Unstructured) (bool, error)) (bool, error) {
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Added, watch.Modified:
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				continue
			}
			if ok, err := done(u); ok || err != nil {
				return ok, err
			}
		case watch.Deleted:
			if ok, err := done(nil); ok || err != nil {
				return ok, err
			}
		case watch.Error:
			return false, nil
		}
	}
	return false, nil
}

// backOff waits before a request that failed is tried again, longer each
// time; an error that a second try would meet again, or the end of the
// wait, is returned instead.
func backOff(ctx context.Context, err error, wait *time.Duration) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !retryable(err) {
		return err
	}
	if err := sleep(ctx, jittered(*wait)); err != nil {
		return err
	}
	*wait = min(2**wait, maxRetryWait)
	return nil
}

// retryable reports API errors that a second try may not meet.
func retryable(err error) bool {
	return apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsInternalError(err) || apierrors.IsUnexpectedServerError(err) ||
		utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// awaitReady waits until an object is ready (a hook: complete), telling
// progress each time the object's progress changes. A failure says why,
// with the last events of the object (or of its failing pod).
func (c *cluster) awaitReady(ctx context.Context, u0 *unstructured.Unstructured, asHook bool, timeout time.Duration, progress func(string)) error {
	gvk, ns, name := u0.GroupVersionKind(), u0.GetNamespace(), u0.GetName()
	tctx, cancel := context.WithTimeoutCause(ctx, timeout, errNotReady)
	defer cancel()
	last, lastMsg := u0, ""
	var byConsumer string // a claim's class that binds it for its first consumer
	looked := false
	err := c.await(tctx, gvk, ns, name, func(u *unstructured.Unstructured) (bool, error) {
		if u == nil {
			msg := "does not exist"
			if msg != lastMsg {
				progress(msg)
				lastMsg = msg
			}
			return false, nil
		}
		last = u
		h, msg := assess(u, asHook)
		if h == healthProgressing && gvk.GroupKind() == gkPVC && !asHook {
			if !looked {
				byConsumer, looked = c.bindsForConsumer(tctx, u), true
			}
			if byConsumer != "" && u.GetAnnotations()[annSelectedNode] == "" {
				h, msg = healthReady, fmt.Sprintf("ready (waiting for its first consumer: storage class %s binds it when a pod that uses it is scheduled)", byConsumer)
			}
		}
		switch h {
		case healthReady:
			if saidAsIs(msg) {
				progress(msg)
			} else {
				progress("ready")
			}
			return true, nil
		case healthFailed:
			return false, fmt.Errorf("%s", msg)
		}
		if msg != lastMsg {
			progress(msg)
			lastMsg = msg
		}
		return false, nil
	})
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(context.Cause(tctx), errNotReady) {
		err = fmt.Errorf("not ready after %s: %s", timeout, orDefault(lastMsg, "no status yet"))
	}
	// Say why, from what the cluster knows: the events of the object and
	// of a pod of it that is not ready.
	dctx, dcancel := context.WithTimeout(ctx, 5*time.Second)
	defer dcancel()
	if why := c.diagnose(dctx, last); why != "" {
		err = fmt.Errorf("%w\n%s", err, why)
	}
	return err
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// awaitGone waits until an object no longer exists.
func (c *cluster) awaitGone(ctx context.Context, gvk schema.GroupVersionKind, namespace, name string, timeout time.Duration) error {
	// Watched at a version the cluster serves: the one recorded may be
	// gone (an operator's upgrade) while the object, held by a finalizer,
	// is not.
	m, err := c.anyVersionMapping(gvk)
	switch {
	case meta.IsNoMatchError(err):
		return nil // its kind is gone at every version: so is it
	case err != nil:
		return err
	}
	gvk = m.GroupVersionKind
	tctx, cancel := context.WithTimeoutCause(ctx, timeout, errNotReady)
	defer cancel()
	err = c.await(tctx, gvk, namespace, name, func(u *unstructured.Unstructured) (bool, error) { return u == nil, nil })
	if err != nil && ctx.Err() == nil && errors.Is(context.Cause(tctx), errNotReady) {
		return fmt.Errorf("still there after %s (finalizers or dependents that are not deleted)", timeout)
	}
	return err
}

var eventsGVK = schema.GroupVersionKind{Version: "v1", Kind: "Event"}
var podGVK = schema.GroupVersionKind{Version: "v1", Kind: "Pod"}

// diagnose says, in a few lines, why an object is not ready: the last
// events of a pod of it that is not ready (workloads), and its own last
// events.
func (c *cluster) diagnose(ctx context.Context, u *unstructured.Unstructured) string {
	if u == nil {
		return ""
	}
	var lines []string
	if pod := c.unreadyPod(ctx, u); pod != nil {
		_, msg := assess(pod, false)
		lines = append(lines, fmt.Sprintf("  pod %s: %s", pod.GetName(), msg))
		lines = append(lines, c.events(ctx, pod, "    ")...)
	}
	lines = append(lines, c.events(ctx, u, "  ")...)
	return strings.Join(lines, "\n")
}

// unreadyPod finds a pod of a workload (its selector's) that is not ready.
func (c *cluster) unreadyPod(ctx context.Context, u *unstructured.Unstructured) *unstructured.Unstructured {
	var sel map[string]string
	switch u.GetKind() {
	case "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job":
		sel, _, _ = unstructured.NestedStringMap(u.Object, "spec", "selector", "matchLabels")
	case "ReplicationController":
		sel, _, _ = unstructured.NestedStringMap(u.Object, "spec", "selector")
	}
	if len(sel) == 0 {
		return nil
	}
	ri, _, err := c.resource(podGVK, u.GetNamespace())
	if err != nil {
		return nil
	}
	var pods *unstructured.UnstructuredList
	if err := c.ask(ctx, func() (err error) {
		pods, err = ri.List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(sel).String(), Limit: 50})
		return err
	}); err != nil {
		return nil
	}
	for i := range pods.Items {
		if h, _ := assess(&pods.Items[i], false); h != healthReady {
			return &pods.Items[i]
		}
	}
	return nil
}

// events are the last few events of an object, oldest first.
func (c *cluster) events(ctx context.Context, u *unstructured.Unstructured, indent string) []string {
	ri, _, err := c.resource(eventsGVK, u.GetNamespace())
	if err != nil || u.GetNamespace() == "" {
		return nil
	}
	sel := fields.Set{"involvedObject.name": u.GetName(), "involvedObject.kind": u.GetKind()}.AsSelector().String()
	var list *unstructured.UnstructuredList
	if err := c.ask(ctx, func() (err error) {
		list, err = ri.List(ctx, metav1.ListOptions{FieldSelector: sel})
		return err
	}); err != nil {
		return nil
	}
	items := list.Items
	stamp := func(e *unstructured.Unstructured) string {
		for _, f := range []string{"lastTimestamp", "eventTime", "firstTimestamp"} {
			if s, _, _ := unstructured.NestedString(e.Object, f); s != "" {
				return s
			}
		}
		return e.GetCreationTimestamp().UTC().Format(time.RFC3339)
	}
	sort.SliceStable(items, func(i, j int) bool { return stamp(&items[i]) < stamp(&items[j]) })
	if len(items) > 5 {
		items = items[len(items)-5:]
	}
	var out []string
	for i := range items {
		typ, _, _ := unstructured.NestedString(items[i].Object, "type")
		reason, _, _ := unstructured.NestedString(items[i].Object, "reason")
		msg, _, _ := unstructured.NestedString(items[i].Object, "message")
		out = append(out, fmt.Sprintf("%sevent %s %s: %s", indent, typ, reason, strings.TrimSpace(msg)))
	}
	return out
}

// annSelectedNode is the annotation the scheduler puts on a claim whose
// class binds it for its first consumer, once that pod has a node: the
// binding is then under way.
const annSelectedNode = "volume.kubernetes.io/selected-node"

// bindsForConsumer is the storage class of a claim when that class binds
// its claims only once a pod that uses one is scheduled
// (volumeBindingMode WaitForFirstConsumer: kind's, k3s's and many clouds'
// default): such a claim applied before its consumer (a weight group of
// storage first) would otherwise be waited for until the timeout. ""
// when it has none, or the class cannot be read.
func (c *cluster) bindsForConsumer(ctx context.Context, pvc *unstructured.Unstructured) string {
	class, _, _ := unstructured.NestedString(pvc.Object, "spec", "storageClassName")
	if class == "" {
		return ""
	}
	sc, err := c.get(ctx, schema.GroupVersionKind{Group: "storage.k8s.io", Version: "v1", Kind: "StorageClass"}, "", class)
	if err != nil || sc == nil {
		return ""
	}
	if mode, _, _ := unstructured.NestedString(sc.Object, "volumeBindingMode"); mode != "WaitForFirstConsumer" {
		return ""
	}
	return class
}
