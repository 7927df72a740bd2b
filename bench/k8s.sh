#!/usr/bin/env bash
# Benchmarks gantry's Kubernetes stage engine against the baseline, kubectl
# apply --server-side + kubectl wait, on a real API server:
# BenchmarkKubernetesWeightGroups (cmd/gantry/k8s_bench_test.go) deploys 200
# objects in 5 weight groups with each tool, and measures the gap between
# the last object of a group becoming ready and the first of the next being
# created; BenchmarkKubernetesManyObjects (k8s_many_bench_test.go) deploys
# one group of many objects (GANTRY_BENCH_OBJECTS, 1,000 by default), what
# a large chart is.
#
# It builds the control plane's binaries if needed (scripts/k8s/build.sh:
# instant once built; GANTRY_K8S_BIN uses others), starts a throwaway
# cluster (scripts/k8s/start.sh) and stops it on exit.
#
# Usage: bench/k8s.sh [BENCHTIME]     BENCHTIME defaults to 5x (iterations
# of each benchmark; about 10 minutes on 2 cores: go test runs one more,
# and each iteration deletes its namespaces and waits until they are gone)
# The go test output goes to bench/.work/k8s-bench.txt; the last lines
# printed are two tables: tool, total s (per deploy), for the weight groups
# gap p50 ms and gap p99 ms, API requests per deploy.
set -euo pipefail
cd "$(dirname "$0")/.."

benchtime=${1:-5x}
if [ -z "${GANTRY_K8S_BIN:-}" ]; then
  scripts/k8s/build.sh
  GANTRY_K8S_BIN=$(scripts/k8s/build.sh --print-bin)
fi
export GANTRY_K8S_BIN

state=$(mktemp -d "${TMPDIR:-/tmp}/gantry-bench-k8s.XXXXXX")
ok=0
stop_cluster() {
  scripts/k8s/stop.sh "$state" >/dev/null || true
  if [ "$ok" = 1 ]; then
    rm -rf "$state"
  else
    echo "k8s.sh: failed; the cluster's logs are in $state/logs" >&2
  fi
}
trap stop_cluster EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "== starting a throwaway cluster in $state"
scripts/k8s/start.sh "$state"
export GANTRY_TEST_KUBECONFIG=$state/kubeconfig GANTRY_TEST_KUBECTL=$GANTRY_K8S_BIN/kubectl

mkdir -p bench/.work
out=bench/.work/k8s-bench.txt
echo "== go test -bench 'BenchmarkKubernetes(WeightGroups|ManyObjects)' -benchtime $benchtime (output in $out)"
go test -run '^$' -bench '^BenchmarkKubernetes(WeightGroups|ManyObjects)$' -benchtime "$benchtime" -timeout 60m ./cmd/gantry | tee "$out"

# A benchmark's result line: name, iterations, then value-unit pairs
# (gantry-s/deploy, gantry-gap-p50-ms, …).
result() {
  local line
  line=$(grep -E "^$1(-[0-9]+)?[[:space:]]" "$out" | tail -n 1)
  if [ -z "$line" ]; then
    echo "k8s.sh: no result of $1 in $out (skipped? see above)" >&2
    exit 1
  fi
  echo "$line"
}
groups=$(result BenchmarkKubernetesWeightGroups)
many=$(result BenchmarkKubernetesManyObjects)
echo
echo "weight groups (200 objects in 5 groups):"
awk '{
  for (i = 3; i < NF; i += 2) v[$(i + 1)] = $i
  printf "%-8s %9s %11s %11s %13s\n", "tool", "total_s", "gap_p50_ms", "gap_p99_ms", "requests"
  n = split("gantry kubectl", tools, " ")
  for (t = 1; t <= n; t++) {
    k = tools[t]
    req = ((k "-req/deploy") in v) ? sprintf("%.0f", v[k "-req/deploy"]) : "-"
    printf "%-8s %9.2f %11.1f %11.1f %13s\n", k, v[k "-s/deploy"], v[k "-gap-p50-ms"], v[k "-gap-p99-ms"], req
  }
}' <<<"$groups"
echo
echo "many objects (${GANTRY_BENCH_OBJECTS:-1000} in one group):"
awk '{
  for (i = 3; i < NF; i += 2) v[$(i + 1)] = $i
  printf "%-8s %9s %13s\n", "tool", "total_s", "requests"
  n = split("gantry kubectl", tools, " ")
  for (t = 1; t <= n; t++) {
    k = tools[t]
    req = ((k "-req/deploy") in v) ? sprintf("%.0f", v[k "-req/deploy"]) : "-"
    printf "%-8s %9.2f %13s\n", k, v[k "-s/deploy"], req
  }
}' <<<"$many"
ok=1
