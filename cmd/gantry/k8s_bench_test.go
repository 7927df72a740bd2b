package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// The benchmark's manifests: benchGroups weight groups (werf.io/weight 1 to
// benchGroups, label group=N), each with the objects of benchKinds.
const benchGroups = 5

// benchKinds are the objects of one weight group: 40 in all.
var benchKinds = []struct {
	kind  string
	count int
}{{"ConfigMap", 16}, {"Secret", 8}, {"Service", 8}, {"Deployment", 8}}

// benchResources are the resources the recorder watches, and whose requests
// are counted: those of benchKinds.
var benchResources = []schema.GroupVersionResource{
	{Version: "v1", Resource: "configmaps"},
	{Version: "v1", Resource: "secrets"},
	{Version: "v1", Resource: "services"},
	{Group: "apps", Version: "v1", Resource: "deployments"},
}

// benchTimeout bounds every wait of one deploy (kubectl wait's --timeout,
// the recorder's wait for the last ready object, a namespace's deletion).
const benchTimeout = 120 * time.Second

// BenchmarkKubernetesWeightGroups deploys 200 objects in 5 weight groups
// into a fresh namespace with gantry (the kubernetes plugin: each group
// applied server-side, then tracked to readiness, before the next) and
// with the baseline, kubectl (per group: kubectl apply --server-side, then
// kubectl wait for its Deployments to be Available), on the test cluster.
//
// A recorder watches the namespace from before each deploy and stamps
// every event as it arrives. At each boundary between two groups, the gap
// is from the event in which the last object of the first group became
// ready (a Deployment: every replica updated and ready for its latest
// generation; other kinds: once added) to the ADDED event of the first
// object of the next: the time a tool takes to see that a group is done
// and start the next one, including the API server's time to create that
// first object. The events come on one watch per resource, and streams
// deliver with a few milliseconds of skew: a gap can even come out
// slightly negative.
//
// Metrics, per tool: the wall time of a deploy (s/deploy), the gap's
// median and 99th percentile over every boundary of every iteration
// (gap-p50-ms, gap-p99-ms; 4 boundaries an iteration, nearest rank), and
// the API requests the deploy made to the four resources (req/deploy, from
// the API server's apiserver_request_total: GET, LIST, WATCH, APPLY and
// PATCH — controllers only POST and PUT them — less the recorder's
// watches). ns/op is the time of both deploys together.
func BenchmarkKubernetesWeightGroups(b *testing.B) {
	kubeconfig, kubectl := testCluster(b)
	kb := newK8sBench(b, kubeconfig, kubectl)
	manifests := b.TempDir()
	files := writeBenchManifests(b, manifests)
	tools := []benchTool{
		{name: "gantry", deploy: func(ns string) error { return kb.deployGantry(b, manifests, ns) }},
		{name: "kubectl", deploy: func(ns string) error { return kb.deployKubectl(files, ns) }},
	}
	results := compareTools(b, tools, "", func(t benchTool) benchRun { return kb.measure(b, t, true) })
	for _, t := range tools {
		tot := results[t.name]
		b.ReportMetric(ms(percentile(tot.gaps, 0.50)), t.name+"-gap-p50-ms")
		b.ReportMetric(ms(percentile(tot.gaps, 0.99)), t.name+"-gap-p99-ms")
	}
}

// compareTools runs b.N iterations of every tool's deploy, measured by
// measure, each tool going first every other iteration (neither gets a
// cluster the other one warmed up or loaded every time), and reports each
// tool's time per deploy and requests per deploy. Each iteration is one
// log line (go test keeps only the first lines of a benchmark's log), its
// number followed by label.
func compareTools(b *testing.B, tools []benchTool, label string, measure func(benchTool) benchRun) map[string]*benchTotals {
	totals := map[string]*benchTotals{}
	for _, t := range tools {
		totals[t.name] = &benchTotals{}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		order := tools
		if i%2 == 1 {
			order = []benchTool{tools[1], tools[0]}
		}
		var line []string
		for _, t := range order {
			m := measure(t)
			tot := totals[t.name]
			tot.runs++
			tot.total += m.total
			if m.requests < 0 {
				tot.uncounted = true
			}
			tot.requests += m.requests
			tot.gaps = append(tot.gaps, m.gaps...)
			text := fmt.Sprintf("%s %.2fs, %s requests", t.name, m.total.Seconds(), requestText(m.requests))
			if m.gaps != nil {
				text += ", gaps " + msText(m.gaps)
			}
			line = append(line, text)
		}
		b.Logf("iteration %d%s: %s", i+1, label, strings.Join(line, "; "))
	}
	b.StopTimer()
	for _, t := range tools {
		tot := totals[t.name]
		b.ReportMetric(tot.total.Seconds()/float64(tot.runs), t.name+"-s/deploy")
		if !tot.uncounted {
			b.ReportMetric(float64(tot.requests)/float64(tot.runs), t.name+"-req/deploy")
		}
	}
	return totals
}

// benchTool is a way to deploy the benchmark's manifests into a namespace.
type benchTool struct {
	name   string
	deploy func(ns string) error
}

// benchTotals add up a tool's deploys.
type benchTotals struct {
	runs     int
	total    time.Duration
	requests int
	// uncounted: the requests of a deploy could not be counted.
	uncounted bool
	gaps      []time.Duration
}

// benchRun is what one deploy measured.
type benchRun struct {
	total    time.Duration
	requests int // -1: not counted
	gaps     []time.Duration
}

// writeBenchManifests writes group1.yaml … group5.yaml into dir, and
// returns their paths in group order. The objects name no namespace: each
// tool puts them into its own.
func writeBenchManifests(tb testing.TB, dir string) []string {
	tb.Helper()
	var paths []string
	for g := 1; g <= benchGroups; g++ {
		var docs []string
		for _, k := range benchKinds {
			for i := range k.count {
				docs = append(docs, benchObject(k.kind, g, i))
			}
		}
		p := filepath.Join(dir, fmt.Sprintf("group%d.yaml", g))
		if err := os.WriteFile(p, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
			tb.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// benchObject is the YAML of the i-th object of a kind in group g.
func benchObject(kind string, g, i int) string {
	name := fmt.Sprintf("g%d-%s-%02d", g, strings.ToLower(kind), i)
	meta := fmt.Sprintf("metadata:\n  name: %s\n  labels: {group: \"%d\"}\n  annotations: {werf.io/weight: \"%d\"}\n", name, g, g)
	switch kind {
	case "ConfigMap":
		return "apiVersion: v1\nkind: ConfigMap\n" + meta + fmt.Sprintf("data: {index: \"%d\"}\n", i)
	case "Secret":
		return "apiVersion: v1\nkind: Secret\n" + meta + fmt.Sprintf("stringData: {token: not-a-secret-%d}\n", i)
	case "Service":
		return "apiVersion: v1\nkind: Service\n" + meta + fmt.Sprintf("spec: {selector: {app: g%d-deployment-%02d}, ports: [{port: 80}]}\n", g, i)
	case "Deployment":
		return "apiVersion: apps/v1\nkind: Deployment\n" + meta + fmt.Sprintf(`spec:
  replicas: 1
  selector: {matchLabels: {app: %[1]s}}
  template:
    metadata: {labels: {app: %[1]s}}
    spec: {containers: [{name: c, image: nginx}]}
`, name)
	}
	panic("benchObject: no template for " + kind)
}

// k8sBench is the benchmark's connection to the test cluster.
type k8sBench struct {
	kubeconfig, kubectl string
	dyn                 dynamic.Interface
	// metricsURL and client read the API server's metrics.
	metricsURL string
	client     *http.Client
}

func newK8sBench(tb testing.TB, kubeconfig, kubectl string) *k8sBench {
	tb.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		tb.Fatal(err)
	}
	// The recorder's watches and the namespaces are a handful of
	// requests; the default rate limit never holds them back.
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		tb.Fatal(err)
	}
	client, err := rest.HTTPClientFor(rc)
	if err != nil {
		tb.Fatal(err)
	}
	return &k8sBench{kubeconfig: kubeconfig, kubectl: kubectl, dyn: dyn, client: client,
		metricsURL: strings.TrimSuffix(rc.Host, "/") + "/metrics"}
}

// measure deploys with one tool into a fresh namespace and deletes the
// namespace after; only the deploy itself runs with the benchmark's timer
// on. With gaps, a recorder watches the namespace during the deploy, and
// the gaps at the weight groups' boundaries are measured; without, the
// tools' own waits are the deploy's end.
func (kb *k8sBench) measure(b *testing.B, t benchTool, gaps bool) benchRun {
	b.StopTimer()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := kb.createNamespace(b, t.name)
	base, baseErr := kb.counters(ctx)
	if baseErr != nil {
		b.Logf("API requests not counted: %v", baseErr)
	}
	var rec *recorder
	if gaps {
		rec = startRecorder(ctx, b, kb.dyn, ns)
	}
	b.StartTimer()
	start := time.Now()
	if err := t.deploy(ns); err != nil {
		b.Fatalf("%s deploy into %s: %v", t.name, ns, err)
	}
	run := benchRun{total: time.Since(start), requests: -1}
	b.StopTimer()
	watches := 0
	if rec != nil {
		if err := rec.awaitReady(benchTimeout); err != nil {
			b.Fatalf("%s deploy into %s: %v", t.name, ns, err)
		}
		rec.stop()
		watches = len(benchResources)
	}
	if baseErr == nil {
		// A watch is counted once it ends: wait until the deploy's and the
		// recorder's have.
		if end, cerr := kb.settledCounters(ctx, base.watching); cerr != nil {
			b.Logf("API requests not counted: %v", cerr)
		} else {
			run.requests = end.requests - base.requests - watches
		}
	}
	if rec != nil {
		var err error
		if run.gaps, err = rec.gaps(); err != nil {
			b.Fatalf("%s deploy into %s: %v", t.name, ns, err)
		}
	}
	kb.deleteNamespace(b, ns)
	b.StartTimer()
	return run
}

// deployGantry writes a stack of one component deploying the manifests into
// ns with the kubernetes plugin, and runs gantry deploy on it.
func (kb *k8sBench) deployGantry(tb testing.TB, manifests, ns string) error {
	dir := tb.TempDir()
	files := map[string]string{
		"hub.yaml": "version: 1\nkind: stack\nmeta: {name: k8s-bench}\ncomponents:\n  - name: app\n    source: {dir: app}\n" +
			"parameters:\n  - name: namespace\n    value: " + ns + "\n",
		"app/hub-component.yaml": "version: 1\nkind: component\nmeta: {name: app}\nparameters:\n  - name: namespace\n" +
			"plugins:\n  - kubernetes: {key: app, config: {manifests: [manifests]}}\n",
	}
	entries, err := os.ReadDir(manifests)
	if err != nil {
		return err
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(manifests, e.Name()))
		if err != nil {
			return err
		}
		files["app/manifests/"+e.Name()] = string(data)
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	cmd := exec.Command("gantry", "deploy", "hub.yaml")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kb.kubeconfig, "NO_COLOR=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("gantry deploy: %v\n%s", err, out)
	}
	return nil
}

// deployKubectl is the baseline: for each group in order, kubectl apply
// --server-side, then kubectl wait until the group's Deployments are
// Available.
func (kb *k8sBench) deployKubectl(files []string, ns string) error {
	for i, f := range files {
		g := strconv.Itoa(i + 1)
		if err := kb.run("apply", "--server-side", "-n", ns, "-f", f); err != nil {
			return err
		}
		if err := kb.run("wait", "--for=condition=Available", "deployment", "-l", "group="+g, "-n", ns,
			"--timeout="+benchTimeout.String()); err != nil {
			return err
		}
	}
	return nil
}

// run runs kubectl against the test cluster.
func (kb *k8sBench) run(args ...string) error {
	cmd := exec.Command(kb.kubectl, append([]string{"--kubeconfig", kb.kubeconfig}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// createNamespace creates a namespace named after the tool; it is deleted
// at the end of the benchmark if measure could not.
func (kb *k8sBench) createNamespace(tb testing.TB, tool string) string {
	tb.Helper()
	var rnd [3]byte
	_, _ = rand.Read(rnd[:])
	ns := "bench-" + tool + "-" + hex.EncodeToString(rnd[:])
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("v1")
	u.SetKind("Namespace")
	u.SetName(ns)
	if _, err := kb.dyn.Resource(namespacesGVR).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
		tb.Fatalf("create namespace %s: %v", ns, err)
	}
	tb.Cleanup(func() {
		_ = exec.Command(kb.kubectl, "--kubeconfig", kb.kubeconfig, "delete", "namespace", ns, "--wait=false", "--ignore-not-found").Run()
	})
	return ns
}

// deleteNamespace deletes a namespace and waits until it is gone, so that
// its deletion does not load the cluster during the next deploy.
func (kb *k8sBench) deleteNamespace(tb testing.TB, ns string) {
	tb.Helper()
	if err := kb.run("delete", "namespace", ns, "--wait=true", "--timeout="+benchTimeout.String()); err != nil {
		tb.Fatal(err)
	}
}

// counters are the API server's counts for benchResources.
type counters struct {
	// requests are the requests that ended, of the verbs the tools use.
	requests int
	// watching are the watches open now.
	watching int
}

// counted are the verbs of the tools' requests; controllers POST and PUT
// the benchmark's resources (kube-root-ca.crt, a Deployment's revision),
// and the namespace's deletion happens after the count.
var countedVerbs = []string{"GET", "LIST", "WATCH", "APPLY", "PATCH"}

var metricLabel = regexp.MustCompile(`(\w+)="([^"]*)"`)

// counters reads the API server's metrics: apiserver_request_total and
// apiserver_longrunning_requests of benchResources.
func (kb *k8sBench) counters(ctx context.Context) (counters, error) {
	samples, err := kb.scrape(ctx)
	if err != nil {
		return counters{}, err
	}
	resources := map[string]bool{}
	for _, r := range benchResources {
		resources[r.Group+"/"+r.Resource] = true
	}
	var c counters
	for _, m := range samples {
		l := m.labels
		if !resources[l["group"]+"/"+l["resource"]] || l["subresource"] != "" {
			continue
		}
		switch {
		case m.name == "apiserver_request_total" && slices.Contains(countedVerbs, l["verb"]):
			c.requests += int(m.value)
		case m.name == "apiserver_longrunning_requests" && l["verb"] == "WATCH":
			c.watching += int(m.value)
		}
	}
	return c, nil
}

// requests is how many requests of a verb on a resource (of the core
// group, no subresource) the API server has answered since it started.
func (kb *k8sBench) requests(ctx context.Context, verb, resource string) (int, error) {
	samples, err := kb.scrape(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range samples {
		l := m.labels
		if m.name == "apiserver_request_total" && l["verb"] == verb && l["group"] == "" && l["resource"] == resource && l["subresource"] == "" {
			n += int(m.value)
		}
	}
	return n, nil
}

// sample is one line of the API server's metrics.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// scrape reads the API server's metrics apiserver_request_total and
// apiserver_longrunning_requests.
func (kb *k8sBench) scrape(ctx context.Context) ([]sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, kb.metricsURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := kb.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("GET /metrics: %s: %s", resp.Status, body)
	}
	var out []sample
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		name, rest, ok := strings.Cut(line, "{")
		if !ok || name != "apiserver_request_total" && name != "apiserver_longrunning_requests" {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		l := map[string]string{}
		for _, m := range metricLabel.FindAllStringSubmatch(labels, -1) {
			l[m[1]] = m[2]
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, fmt.Errorf("metric %s: %w", line, err)
		}
		out = append(out, sample{name: name, labels: l, value: v})
	}
	return out, sc.Err()
}

// settledCounters reads the counters once no more watches are open than
// before the deploy: the API server counts a watch when it ends, a moment
// after its client went away.
func (kb *k8sBench) settledCounters(ctx context.Context, watching int) (counters, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := kb.counters(ctx)
		if err != nil || c.watching <= watching {
			return c, err
		}
		if time.Now().After(deadline) {
			return c, fmt.Errorf("%d watches still open, %d before the deploy", c.watching, watching)
		}
		select {
		case <-ctx.Done():
			return c, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// recorder stamps, as they arrive, the watch events of the benchmark's
// objects in one namespace: when each was added, and when each became
// ready.
type recorder struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	want   int

	mu    sync.Mutex
	group map[string]int
	added map[string]time.Time
	ready map[string]time.Time
	errs  []error
	// done is closed once every object is ready, or a watch failed.
	done   chan struct{}
	closed bool
}

// startRecorder starts a watch on each of benchResources in ns, and
// returns once the API server has started them all.
func startRecorder(ctx context.Context, tb testing.TB, dyn dynamic.Interface, ns string) *recorder {
	tb.Helper()
	ctx, cancel := context.WithCancel(ctx)
	r := &recorder{cancel: cancel, want: benchGroups * benchPerGroup(), group: map[string]int{},
		added: map[string]time.Time{}, ready: map[string]time.Time{}, done: make(chan struct{})}
	for _, gvr := range benchResources {
		w, err := dyn.Resource(gvr).Namespace(ns).Watch(ctx, metav1.ListOptions{LabelSelector: "group"})
		if err != nil {
			cancel()
			r.wg.Wait()
			tb.Fatalf("watch %s in %s: %v", gvr.Resource, ns, err)
		}
		r.wg.Add(1)
		go r.follow(ctx, gvr.Resource, w)
	}
	return r
}

// benchPerGroup is the number of objects in a weight group.
func benchPerGroup() int {
	n := 0
	for _, k := range benchKinds {
		n += k.count
	}
	return n
}

// follow reads one watch until the recorder stops.
func (r *recorder) follow(ctx context.Context, resource string, w watch.Interface) {
	defer r.wg.Done()
	defer w.Stop()
	for ev := range w.ResultChan() {
		at := time.Now()
		switch ev.Type {
		case watch.Added, watch.Modified:
			if u, ok := ev.Object.(*unstructured.Unstructured); ok {
				r.note(at, ev.Type, u)
			}
		case watch.Error:
			if ctx.Err() == nil { // not the end of a watch the recorder stopped
				r.fail(fmt.Errorf("watch %s: %v", resource, ev.Object))
			}
			return
		}
	}
	if ctx.Err() == nil {
		r.fail(fmt.Errorf("watch %s: the API server ended it", resource))
	}
}

// note records an event that arrived at a time.
func (r *recorder) note(at time.Time, typ watch.EventType, u *unstructured.Unstructured) {
	key := u.GetKind() + "/" + u.GetName()
	g, err := strconv.Atoi(u.GetLabels()["group"])
	if err != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.group[key] = g
	if _, ok := r.added[key]; !ok {
		if typ != watch.Added {
			r.errs = append(r.errs, fmt.Errorf("%s: first seen %s, not ADDED", key, typ))
		}
		r.added[key] = at
	}
	if _, ok := r.ready[key]; !ok && benchReady(u) {
		r.ready[key] = at
		if len(r.ready) == r.want {
			r.closeDone()
		}
	}
}

func (r *recorder) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, err)
	r.closeDone()
}

func (r *recorder) closeDone() {
	if !r.closed {
		r.closed = true
		close(r.done)
	}
}

// benchReady says whether an object is ready: a Deployment once its
// controller saw its latest generation and every replica is updated and
// ready; the other kinds once they exist.
func benchReady(u *unstructured.Unstructured) bool {
	if u.GetKind() != "Deployment" {
		return true
	}
	want, found, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	if !found {
		want = 1
	}
	observed, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	ready, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
	updated, _, _ := unstructured.NestedInt64(u.Object, "status", "updatedReplicas")
	return observed >= u.GetGeneration() && ready == want && updated == want
}

// awaitReady waits until every object was seen ready.
func (r *recorder) awaitReady(timeout time.Duration) error {
	select {
	case <-r.done:
	case <-time.After(timeout):
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) > 0 {
		return r.errs[0]
	}
	if len(r.ready) < r.want {
		return fmt.Errorf("the recorder saw %d of %d objects ready after %s", len(r.ready), r.want, timeout)
	}
	return nil
}

// stop ends the watches and waits for their readers.
func (r *recorder) stop() {
	r.cancel()
	r.wg.Wait()
}

// gaps are the gaps at each boundary between consecutive groups: from the
// last object of a group seen ready to the first of the next seen added.
func (r *recorder) gaps() ([]time.Duration, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) > 0 {
		return nil, r.errs[0]
	}
	lastReady := map[int]time.Time{}
	firstAdded := map[int]time.Time{}
	count := map[int]int{}
	for key, g := range r.group {
		count[g]++
		if t := r.ready[key]; t.After(lastReady[g]) {
			lastReady[g] = t
		}
		if t, ok := firstAdded[g]; !ok || r.added[key].Before(t) {
			firstAdded[g] = r.added[key]
		}
	}
	var out []time.Duration
	for g := 1; g <= benchGroups; g++ {
		if count[g] != benchPerGroup() {
			return nil, fmt.Errorf("group %d: the recorder saw %d objects, want %d", g, count[g], benchPerGroup())
		}
		if g > 1 {
			out = append(out, firstAdded[g].Sub(lastReady[g-1]))
		}
	}
	return out, nil
}

// percentile is the nearest-rank percentile p (0 to 1) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// msText is a list of durations in milliseconds, for the log.
func msText(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = strconv.FormatFloat(ms(d), 'f', 1, 64) + "ms"
	}
	return strings.Join(parts, " ")
}

func requestText(n int) string {
	if n < 0 {
		return "uncounted"
	}
	return strconv.Itoa(n)
}
