package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// manyMix is the mix of kinds of BenchmarkKubernetesManyObjects, per
// hundred objects: mostly configuration, as in a large chart. Few are
// Deployments: the test cluster's controller manager makes their pods at
// 20 requests a second, and with one in ten the rollout took 30 s for
// either tool, whatever the tool did.
var manyMix = []struct {
	kind string
	per  int
}{{"ConfigMap", 64}, {"Secret", 25}, {"Service", 10}, {"Deployment", 1}}

// BenchmarkKubernetesManyObjects deploys one component of many objects in
// one weight group (GANTRY_BENCH_OBJECTS, 1,000 by default: 60 %
// ConfigMaps, 20 % Secrets, 10 % Services, 10 % Deployments of one
// replica) into a fresh namespace, with gantry and with the baseline,
// kubectl apply --server-side of the same file, then kubectl wait until
// every Deployment is Available. It measures what a large chart or
// manifest folder costs: the requests per object and how many go at once.
//
// Metrics, per tool: the wall time of a deploy (s/deploy) and the API
// requests it made to the four resources (req/deploy, counted as
// BenchmarkKubernetesWeightGroups counts them). ns/op is the time of both
// deploys together.
func BenchmarkKubernetesManyObjects(b *testing.B) {
	kubeconfig, kubectl := testCluster(b)
	kb := newK8sBench(b, kubeconfig, kubectl)
	n := 1000
	if v := os.Getenv("GANTRY_BENCH_OBJECTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 100 {
			b.Fatalf("GANTRY_BENCH_OBJECTS=%s: expected a number of objects, 100 or more", v)
		}
	}
	manifests := b.TempDir()
	file := writeManyObjects(b, manifests, n)
	tools := []benchTool{
		{name: "gantry", deploy: func(ns string) error { return kb.deployGantry(b, manifests, ns) }},
		{name: "kubectl", deploy: func(ns string) error {
			if err := kb.run("apply", "--server-side", "-n", ns, "-f", file); err != nil {
				return err
			}
			return kb.run("wait", "--for=condition=Available", "deployment", "--all", "-n", ns, "--timeout="+benchTimeout.String())
		}},
	}
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
			m := kb.measureMany(b, t)
			tot := totals[t.name]
			tot.runs++
			tot.total += m.total
			if m.requests < 0 {
				tot.uncounted = true
			}
			tot.requests += m.requests
			line = append(line, fmt.Sprintf("%s %.2fs, %s requests", t.name, m.total.Seconds(), requestText(m.requests)))
		}
		b.Logf("iteration %d (%d objects): %s", i+1, n, strings.Join(line, "; "))
	}
	b.StopTimer()
	for _, t := range tools {
		tot := totals[t.name]
		b.ReportMetric(tot.total.Seconds()/float64(tot.runs), t.name+"-s/deploy")
		if !tot.uncounted {
			b.ReportMetric(float64(tot.requests)/float64(tot.runs), t.name+"-req/deploy")
		}
	}
}

// writeManyObjects writes n objects of manyMix into dir/objects.yaml and
// returns its path.
func writeManyObjects(tb testing.TB, dir string, n int) string {
	tb.Helper()
	var docs []string
	for _, k := range manyMix {
		for i := range n * k.per / 100 {
			docs = append(docs, benchObject(k.kind, 1, i))
		}
	}
	p := filepath.Join(dir, "objects.yaml")
	if err := os.WriteFile(p, []byte(strings.Join(docs, "---\n")), 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

// measureMany deploys with one tool into a fresh namespace and deletes the
// namespace after; only the deploy runs with the benchmark's timer on.
// Both tools wait for readiness themselves.
func (kb *k8sBench) measureMany(b *testing.B, t benchTool) benchRun {
	b.StopTimer()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ns := kb.createNamespace(b, t.name)
	base, baseErr := kb.counters(ctx)
	if baseErr != nil {
		b.Logf("API requests not counted: %v", baseErr)
	}
	b.StartTimer()
	start := time.Now()
	if err := t.deploy(ns); err != nil {
		b.Fatalf("%s deploy into %s: %v", t.name, ns, err)
	}
	total := time.Since(start)
	b.StopTimer()
	requests := -1
	if baseErr == nil {
		if end, err := kb.settledCounters(ctx, base.watching); err != nil {
			b.Logf("API requests not counted: %v", err)
		} else {
			requests = end.requests - base.requests
		}
	}
	kb.deleteNamespace(b, ns)
	b.StartTimer()
	return benchRun{total: total, requests: requests}
}
