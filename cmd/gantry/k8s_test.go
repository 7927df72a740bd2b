package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gantry-dev/gantry/internal/state"
	"github.com/gantry-dev/gantry/internal/testenv"
)

// k8sStack writes a stack of one component, app, deploying the files
// (path → content) with the kubernetes plugin into a fresh namespace it
// creates; it returns the folder and the namespace.
func k8sStack(t *testing.T, files map[string]string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	ns := "t-" + strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	all := map[string]string{
		"hub.yaml": "version: 1\nkind: stack\nmeta: {name: k8s}\ncomponents:\n  - name: app\n    source: {dir: app}\n" +
			"parameters:\n  - name: namespace\n    value: " + ns + "\n",
		"app/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: app}\nparameters:\n  - name: namespace\n" +
			"plugins:\n  - kubernetes: {key: app, config: {manifests: [manifests]}}\n",
		"app/manifests/00-namespace.yaml": "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${namespace}\n  annotations: {helm.sh/resource-policy: keep}\n",
	}
	for k, v := range files {
		all[k] = v
	}
	writeFilesIn(t, dir, all)
	return dir, ns
}

func dynClient(t *testing.T, kubeconfig string) dynamic.Interface {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return dyn
}

func cleanupNamespace(t *testing.T, kubectl, kubeconfig, ns string) {
	t.Cleanup(func() {
		_ = exec.Command(kubectl, "--kubeconfig", kubeconfig, "delete", "namespace", ns, "--wait=false", "--ignore-not-found").Run()
	})
}

// created records, from watches, every object created in a namespace (and
// the CRDs), with the etcd revision that created it: revisions order
// creations across all resources exactly, where arrival times would not.
type created struct {
	mu     sync.Mutex
	events []createdObject
}

type createdObject struct {
	rev  int64
	name string
}

func (c *created) watch(ctx context.Context, t *testing.T, ri dynamic.ResourceInterface, ready *sync.WaitGroup) {
	w, err := ri.Watch(ctx, metav1.ListOptions{})
	ready.Done()
	if err != nil {
		t.Errorf("watch: %v", err)
		return
	}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || ev.Type != watch.Added {
				continue
			}
			rev, _ := strconv.ParseInt(u.GetResourceVersion(), 10, 64)
			c.mu.Lock()
			c.events = append(c.events, createdObject{rev, u.GetKind() + "/" + u.GetName()})
			c.mu.Unlock()
		}
	}()
}

func (c *created) order() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	ev := slices.Clone(c.events)
	sort.Slice(ev, func(i, j int) bool { return ev[i].rev < ev[j].rev })
	out := make([]string, len(ev))
	for i, e := range ev {
		out[i] = e.name
	}
	return out
}

// TestKubernetesStageOrder deploys a chart-like set — a CRD, three hooks of
// different weights, three weight groups of mixed kinds and a post hook —
// and checks, from the API server's own record of when each object was
// created, that the order is seed 004's: CRDs, pre-install hooks by
// weight, groups from low to high in the seed's kind order, post hooks.
func TestKubernetesStageOrder(t *testing.T) {
	kubeconfig, kubectl := testCluster(t)
	dir, ns := k8sStack(t, map[string]string{
		"app/crds/gadgets.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.order.gantry.dev}
spec:
  group: order.gantry.dev
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]
`,
		"app/manifests/hooks.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: hook-late, annotations: {helm.sh/hook: pre-install, helm.sh/hook-weight: "7"}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: hook-early, annotations: {helm.sh/hook: pre-install, helm.sh/hook-weight: "-3"}}
spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}
---
apiVersion: v1
kind: Secret
metadata: {name: hook-middle, annotations: {helm.sh/hook: pre-install}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: hook-post, annotations: {helm.sh/hook: post-install}}
`,
		"app/manifests/main.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, annotations: {werf.io/weight: "10"}}
spec:
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: nginx}]}}
---
apiVersion: v1
kind: Service
metadata: {name: web, annotations: {werf.io/weight: "10"}}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: order.gantry.dev/v1
kind: Gadget
metadata: {name: g1, annotations: {werf.io/weight: "-1"}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: config}
---
apiVersion: v1
kind: Secret
metadata: {name: secret}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: runner}
---
apiVersion: batch/v1
kind: Job
metadata: {name: job, annotations: {werf.io/weight: "10"}}
spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}
`,
	})
	cleanupNamespace(t, kubectl, kubeconfig, ns)
	t.Cleanup(func() {
		_ = exec.Command(kubectl, "--kubeconfig", kubeconfig, "delete", "crd", "gadgets.order.gantry.dev", "--ignore-not-found").Run()
	})
	dyn := dynClient(t, kubeconfig)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rec := &created{}
	var ready sync.WaitGroup
	crds := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"})
	ready.Add(6)
	rec.watch(ctx, t, crds, &ready)
	for _, gvr := range []schema.GroupVersionResource{{Version: "v1", Resource: "configmaps"}, {Version: "v1", Resource: "secrets"},
		{Version: "v1", Resource: "services"}, {Group: "apps", Version: "v1", Resource: "deployments"}, {Group: "batch", Version: "v1", Resource: "jobs"}} {
		rec.watch(ctx, t, dyn.Resource(gvr).Namespace(ns), &ready)
	}
	ready.Wait()
	cmd := exec.Command("gantry", "deploy", "hub.yaml")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("deploy: %v\n%s", err, out)
	}
	// The Gadget's kind is served only once its CRD is: read it now.
	g, err := dyn.Resource(schema.GroupVersionResource{Group: "order.gantry.dev", Version: "v1", Resource: "gadgets"}).Namespace(ns).Get(ctx, "g1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	gadgetRev, _ := strconv.ParseInt(g.GetResourceVersion(), 10, 64)
	rec.mu.Lock()
	rec.events = append(rec.events, createdObject{gadgetRev, "Gadget/g1"})
	rec.mu.Unlock()
	// Every watched creation has arrived once the last one has.
	deadline := time.Now().Add(30 * time.Second)
	for !slices.Contains(rec.order(), "ConfigMap/hook-post") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	var got []string
	for _, n := range rec.order() {
		// CRDs are cluster-wide: those other tests make meanwhile (in
		// parallel, on the same cluster) are not this deploy's.
		if n != "ConfigMap/kube-root-ca.crt" && (!strings.HasPrefix(n, "CustomResourceDefinition/") || n == "CustomResourceDefinition/gadgets.order.gantry.dev") {
			got = append(got, n)
		}
	}
	want := []string{
		"CustomResourceDefinition/gadgets.order.gantry.dev",
		"Job/hook-early", "Secret/hook-middle", "ConfigMap/hook-late", // pre-install hooks by weight
		"Gadget/g1",                                                  // weight -1
		"ServiceAccount/runner", "Secret/secret", "ConfigMap/config", // weight 0 in kind order (no watch on ServiceAccounts)
		"Service/web", "Deployment/web", "Job/job", // weight 10 in kind order
		"ConfigMap/hook-post",
	}
	want = slices.DeleteFunc(want, func(s string) bool { return s == "ServiceAccount/runner" })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("creation order (-want +got):\n%s", diff)
	}
}

// TestKubernetesKilledDeployConverges kills gantry with SIGKILL while it
// waits for a Deployment that cannot become ready, then deploys fixed
// manifests: the state read back holds the component incomplete and every
// object the killed run may have created, and the next deploy converges —
// the fixed Deployment ready, the object dropped from the manifests
// deleted.
func TestKubernetesKilledDeployConverges(t *testing.T) {
	kubeconfig, kubectl := testCluster(t)
	stuck := `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, annotations: {werf.io/weight: "5"}}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {NODESELECTOR containers: [{name: c, image: nginx}]}
`
	dir, ns := k8sStack(t, map[string]string{
		"app/manifests/web.yaml": strings.Replace(stuck, "NODESELECTOR", "nodeSelector: {nowhere: \"true\"},", 1),
		"app/manifests/old.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: old}\n",
	})
	cleanupNamespace(t, kubectl, kubeconfig, ns)
	cmd := exec.Command("gantry", "deploy", "hub.yaml")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	out := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	deadline := time.After(60 * time.Second)
wait:
	for !strings.Contains(out.String(), "deployment/web 0/1") {
		select {
		case <-exited:
			break wait
		case <-deadline:
			break wait
		case <-time.After(10 * time.Millisecond):
		}
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
	if !strings.Contains(out.String(), "deployment/web 0/1") {
		t.Fatalf("gantry never waited for the Deployment:\n%s", out.String())
	}
	st := readState(t, dir)
	if got := statusOf(st, "app"); got != state.StatusIncomplete {
		t.Fatalf("app after SIGKILL: %s, want incomplete", got)
	}
	var recorded []string
	for _, p := range st.Components["app"].Plugins {
		for _, r := range p.Resources {
			recorded = append(recorded, r.Kind+"/"+r.Name)
		}
	}
	for _, want := range []string{"ConfigMap/old", "Deployment/web"} {
		if !slices.Contains(recorded, want) {
			t.Errorf("the state should record %s after the kill, has %v", want, recorded)
		}
	}

	if err := os.Remove(filepath.Join(dir, "app/manifests/old.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "app/manifests/web.yaml"), []byte(strings.Replace(stuck, "NODESELECTOR", "", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	again := exec.Command("gantry", "deploy", "hub.yaml")
	again.Dir = dir
	again.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	if b, err := again.CombinedOutput(); err != nil {
		t.Fatalf("deploy after the kill: %v\n%s", err, b)
	} else if !strings.Contains(string(b), "configmap/old deleted") {
		t.Errorf("the object the manifests lost should be pruned:\n%s", b)
	}
	if got := statusOf(readState(t, dir), "app"); got != state.StatusDeployed {
		t.Errorf("app after the second deploy: %s", got)
	}
	ready, err := exec.Command(kubectl, "--kubeconfig", kubeconfig, "get", "deployment", "web", "-n", ns, "-o", "jsonpath={.status.readyReplicas}").Output()
	if err != nil || string(ready) != "1" {
		t.Errorf("deployment web: ready %q, %v", ready, err)
	}
}

// TestKubernetesAnswersNotAskedAgain deploys and undeploys 300 ConfigMaps
// and counts, with the API server's metrics, the requests on ConfigMaps.
// The deploy applies each once (validated before by a dry-run creation: its
// namespace is created by the same deploy) and lists none to see whether it
// is ready: the apply answered with the object as stored, ready. The
// undeploy deletes each once and lists none to see whether it is gone: the
// DELETE answered that it was.
func TestKubernetesAnswersNotAskedAgain(t *testing.T) {
	kubeconfig, kubectl := testCluster(t)
	const n = 300
	var docs []string
	for i := range n {
		docs = append(docs, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c"+strconv.Itoa(i)+"}\ndata: {a: b}\n")
	}
	dir, ns := k8sStack(t, map[string]string{"app/manifests/many.yaml": strings.Join(docs, "---\n")})
	cleanupNamespace(t, kubectl, kubeconfig, ns)
	kb := newK8sBench(t, kubeconfig, kubectl)
	ctx := context.Background()
	count := func(verbs ...string) map[string]int {
		t.Helper()
		got := map[string]int{}
		for _, verb := range verbs {
			n, err := kb.requests(ctx, verb, "configmaps")
			if err != nil {
				t.Fatal(err)
			}
			got[verb] = n
		}
		return got
	}
	gantry := func(verb string) string {
		t.Helper()
		cmd := exec.Command("gantry", verb, "hub.yaml")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", verb, err, out)
		}
		return string(out)
	}
	// The counts are the whole cluster's: other clients may add a few (the
	// namespace controller lists what is left in namespaces that earlier
	// tests deleted; a request refused with 429 is counted, and tried
	// again). The first cuts listed every ConfigMap: 300.
	within := func(what string, got, want int) {
		t.Helper()
		if got < want || got > want+want/10 {
			t.Errorf("%s requests on ConfigMaps: %d, want %d", what, got, want)
		}
	}
	before := count("LIST", "APPLY")
	out := gantry("deploy")
	if got := strings.Count(out, " ready\n"); got < n {
		t.Errorf("the deploy says %d objects are ready, want %d:\n%s", got, n, out)
	}
	after := count("LIST", "APPLY")
	within("APPLY", after["APPLY"]-before["APPLY"], n)
	if got := after["LIST"] - before["LIST"]; got > n/4 {
		t.Errorf("LIST requests on ConfigMaps during the deploy: %d, want none: the apply's answer says each is ready", got)
	}

	before = count("LIST", "DELETE")
	out = gantry("undeploy")
	if got := strings.Count(out, " deleted\n"); got < n {
		t.Errorf("the undeploy says %d objects are deleted, want %d:\n%s", got, n, out)
	}
	after = count("LIST", "DELETE")
	within("DELETE", after["DELETE"]-before["DELETE"], n)
	if got := after["LIST"] - before["LIST"]; got > n/4 {
		t.Errorf("LIST requests on ConfigMaps during the undeploy: %d, want none: the DELETE's answer says each is gone", got)
	}
	left, err := exec.Command(kubectl, "--kubeconfig", kubeconfig, "get", "configmaps", "-n", ns, "-o", "name").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get configmaps: %v\n%s", err, left)
	}
	if got := strings.Count(string(left), "configmap/c"); got != 0 {
		t.Errorf("%d of the ConfigMaps are still there after the undeploy:\n%s", got, left)
	}
}

// TestKubernetesFailureSeenBehindSlowObjects deploys, in one weight group,
// more Deployments that cannot become ready (no node matches them, and
// each may take a minute) than a release works on at once, then one whose
// progress deadline of a second runs out. The failure is told as soon as
// it happens, naming that Deployment and why, not a minute later as a
// time-out of the slow ones: every object of a group is watched from the
// start.
func TestKubernetesFailureSeenBehindSlowObjects(t *testing.T) {
	kubeconfig, kubectl := testCluster(t)
	deployment := func(name, extra string) string {
		return `apiVersion: apps/v1
kind: Deployment
metadata: {name: ` + name + `}
spec:
  ` + extra + `selector: {matchLabels: {app: ` + name + `}}
  template:
    metadata: {labels: {app: ` + name + `}}
    spec: {nodeSelector: {nowhere: "true"}, containers: [{name: c, image: nginx}]}
`
	}
	var docs []string
	for i := range 20 {
		docs = append(docs, deployment(fmt.Sprintf("slow-%02d", i), ""))
	}
	docs = append(docs, deployment("zz-stalled", "progressDeadlineSeconds: 1\n  "))
	dir, ns := k8sStack(t, map[string]string{"app/manifests/slow.yaml": strings.Join(docs, "---\n")})
	writeFilesIn(t, dir, map[string]string{"app/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: app}\nparameters:\n  - name: namespace\n" +
		"plugins:\n  - kubernetes: {key: app, config: {manifests: [manifests], timeout: 60}}\n"})
	cleanupNamespace(t, kubectl, kubeconfig, ns)
	cmd := exec.Command("gantry", "deploy", "hub.yaml")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the deploy should fail:\n%s", out)
	}
	text := string(out)
	if !strings.Contains(text, "deployment/zz-stalled: progress deadline exceeded") {
		t.Errorf("the failure should name the stalled Deployment and why:\n%s", text)
	}
	if strings.Contains(text, "not ready after") {
		t.Errorf("the failure should not wait for the slow Deployments' time-out:\n%s", text)
	}
}

// TestKubernetesDeletionNotHeldBack undeploys more ConfigMaps that a
// finalizer holds than a release has requests in flight, and one more,
// deleted last, that nothing holds: that one is gone while the others
// still wait for their finalizer (deleted a few at a time, it waited
// behind them until they were gone or timed out), and the undeploy ends
// once the finalizers are taken off.
func TestKubernetesDeletionNotHeldBack(t *testing.T) {
	kubeconfig, kubectl := testCluster(t)
	// Deleted in the reverse of the apply's order: the free one last.
	docs := []string{"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: free}\n"}
	for i := range 20 {
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: held-%02d, finalizers: [gantry.dev/test-hold]}\n", i))
	}
	dir, ns := k8sStack(t, map[string]string{"app/manifests/held.yaml": strings.Join(docs, "---\n")})
	writeFilesIn(t, dir, map[string]string{"app/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: app}\nparameters:\n  - name: namespace\n" +
		"plugins:\n  - kubernetes: {key: app, config: {manifests: [manifests], timeout: 120}}\n"})
	release := func() {
		for i := range 20 {
			_ = exec.Command(kubectl, "--kubeconfig", kubeconfig, "-n", ns, "patch", "configmap", fmt.Sprintf("held-%02d", i),
				"--type=json", "-p", `[{"op":"remove","path":"/metadata/finalizers"}]`).Run()
		}
	}
	t.Cleanup(release)
	cleanupNamespace(t, kubectl, kubeconfig, ns)
	gantry := func(verb string) *exec.Cmd {
		cmd := exec.Command("gantry", verb, "hub.yaml")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig, "NO_COLOR=1")
		return cmd
	}
	if out, err := gantry("deploy").CombinedOutput(); err != nil {
		t.Fatalf("deploy: %v\n%s", err, out)
	}
	// The watch starts before the undeploy, from the list's version: the
	// deletion cannot come before it.
	dyn := dynClient(t, kubeconfig)
	cms := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace(ns)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sel := "metadata.name=free"
	list, err := cms.List(ctx, metav1.ListOptions{FieldSelector: sel})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("free after the deploy: %v, %v", list, err)
	}
	w, err := cms.Watch(ctx, metav1.ListOptions{FieldSelector: sel, ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	undeploy := gantry("undeploy")
	var out strings.Builder
	undeploy.Stdout, undeploy.Stderr = &out, &out
	if err := undeploy.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- undeploy.Wait() }()
	gone := false
	for ev := range w.ResultChan() {
		if ev.Type == watch.Deleted {
			gone = true
			break
		}
	}
	w.Stop()
	ended := false
	select {
	case err := <-done:
		ended = true
		t.Errorf("the undeploy ended while finalizers held ConfigMaps (%v)", err)
	default:
	}
	release()
	// The output is read once the process has ended and written it all.
	if !ended {
		if err := <-done; err != nil {
			t.Errorf("undeploy: %v", err)
		}
	}
	if !gone {
		t.Errorf("free was not deleted while the held ConfigMaps waited for their finalizer")
	}
	if t.Failed() {
		t.Logf("undeploy's output:\n%s", out.String())
	}
}
