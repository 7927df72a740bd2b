package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
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
	compareTools(b, tools, fmt.Sprintf(" (%d objects)", n), func(t benchTool) benchRun { return kb.measure(b, t, false) })
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
