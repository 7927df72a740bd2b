#!/usr/bin/env bash
# Runs gantry's whole test suite: vet, the unit and end-to-end (testscript)
# tests with the race detector. Anything a test needs is installed or started
# here, from the package registries this machine reaches.
set -euo pipefail
cd "$(dirname "$0")/.."

# The display test runs gantry in a real terminal under tmux.
if ! command -v tmux >/dev/null 2>&1; then
  echo "== installing tmux (for the terminal display test)"
  if command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq >/dev/null && $SUDO apt-get install -y -qq tmux >/dev/null
  else
    echo "tmux is missing and apt-get is not available: the terminal display test will be skipped"
  fi
fi

# The report's browser tests (internal/report/browsertest) drive headless
# Chromium, Debian's chromium package, installed when missing; they read its
# path from GANTRY_TEST_CHROMIUM. GANTRY_TEST_BROWSER=0 skips them locally;
# in CI (CI=true) they always run.
if [ "${CI:-}" = "true" ] || [ "${GANTRY_TEST_BROWSER:-1}" != "0" ]; then
  if [ "${GANTRY_TEST_BROWSER:-1}" = "0" ]; then
    echo "== CI=true: GANTRY_TEST_BROWSER=0 is ignored, CI always runs the browser tests"
  fi
  if GANTRY_TEST_CHROMIUM=$(scripts/browser/ensure.sh); then
    export GANTRY_TEST_CHROMIUM
    echo "== browser for the report's tests: $GANTRY_TEST_CHROMIUM"
  elif [ "${CI:-}" = "true" ]; then
    echo "no browser for the report's tests, and CI=true needs one"; exit 1
  else
    echo "== no browser: the report's browser tests will skip"
    unset GANTRY_TEST_CHROMIUM
  fi
else
  echo "== GANTRY_TEST_BROWSER=0: no browser; the report's browser tests will skip"
  unset GANTRY_TEST_CHROMIUM
fi

echo "== go vet"
go vet ./...

echo "== gofmt"
unformatted=$(gofmt -l cmd internal bench scripts 2>/dev/null || true)
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

# A real, throwaway Kubernetes control plane on loopback (etcd, kube-apiserver,
# controller-manager, scheduler, kwok as a fake node), for the tests that
# deploy to a cluster: they read GANTRY_TEST_KUBECONFIG, GANTRY_TEST_KUBECTL
# and GANTRY_TEST_HELM.
# The binaries are built once into ~/.cache/gantry-k8s (cold: about 12 min).
# GANTRY_TEST_K8S=0 skips this locally (those tests then skip); in CI
# (CI=true) the cluster is always built and started.
k8s_state=""
stop_k8s() {
  if [ -n "$k8s_state" ]; then
    scripts/k8s/stop.sh "$k8s_state" >/dev/null || true
    rm -rf "$k8s_state"
    k8s_state=""
  fi
}
pg_state=""
stop_pg() {
  if [ -n "$pg_state" ]; then
    scripts/pg/stop.sh "$pg_state" >/dev/null || true
    rm -rf "$pg_state"
    pg_state=""
  fi
}
temporal_state=""
stop_temporal() {
  if [ -n "$temporal_state" ]; then
    scripts/temporal/stop.sh "$temporal_state" >/dev/null || true
    rm -rf "$temporal_state"
    temporal_state=""
  fi
}
# One EXIT trap for everything started below (a second `trap ... EXIT` would
# replace the first); INT and TERM exit so that it runs.
trap 'stop_pg; stop_k8s; stop_temporal' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if [ "${CI:-}" = "true" ] || [ "${GANTRY_TEST_K8S:-1}" != "0" ]; then
  if [ "${GANTRY_TEST_K8S:-1}" = "0" ]; then
    echo "== CI=true: GANTRY_TEST_K8S=0 is ignored, CI always starts the test cluster"
  fi
  for tool in openssl curl; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "== installing $tool (for the test cluster)"
      SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
      $SUDO apt-get update -qq >/dev/null && $SUDO apt-get install -y -qq "$tool" >/dev/null
    fi
  done
  scripts/k8s/build.sh
  k8s_state=$(mktemp -d "${TMPDIR:-/tmp}/gantry-test-k8s.XXXXXX")
  echo "== starting the test cluster in $k8s_state"
  scripts/k8s/start.sh "$k8s_state"
  export GANTRY_TEST_KUBECONFIG="$k8s_state/kubeconfig"
  GANTRY_TEST_KUBECTL="$(scripts/k8s/build.sh --print-bin)/kubectl"
  export GANTRY_TEST_KUBECTL
  # The Helm CLI, for the scenarios that check what the helm plugin records
  # (helm list, helm history); built once into ~/.cache/gantry-helm (cold:
  # about 7 min).
  scripts/helm/build.sh
  GANTRY_TEST_HELM="$(scripts/helm/build.sh --print-bin)"
  export GANTRY_TEST_HELM
else
  echo "== GANTRY_TEST_K8S=0: no test cluster; the tests that need one will skip"
fi

# A real, throwaway PostgreSQL server on loopback (Debian's postgresql
# package, installed when missing), for the state backend's tests: they read
# GANTRY_TEST_POSTGRES (the DSN of the database gantry_test) and
# GANTRY_TEST_PGDIR (the server's folder: scripts/pg/restart.sh restarts it
# mid-run; DIR/admin_dsn is the superuser's DSN). GANTRY_TEST_POSTGRES=0 skips
# this locally (those tests then skip); in CI (CI=true) it always starts.
if [ "${CI:-}" = "true" ] || [ "${GANTRY_TEST_POSTGRES:-1}" != "0" ]; then
  if [ "${GANTRY_TEST_POSTGRES:-1}" = "0" ]; then
    echo "== CI=true: GANTRY_TEST_POSTGRES=0 is ignored, CI always starts the test database"
  fi
  pg_state=$(mktemp -d "${TMPDIR:-/tmp}/gantry-test-pg.XXXXXX")
  echo "== starting the test database in $pg_state"
  scripts/pg/start.sh "$pg_state" | grep -v '^export '   # the DSN holds a password
  GANTRY_TEST_POSTGRES=$(cat "$pg_state/dsn")
  export GANTRY_TEST_POSTGRES
  export GANTRY_TEST_PGDIR="$pg_state"
else
  echo "== GANTRY_TEST_POSTGRES=0: no test database; the tests that need one will skip"
  unset GANTRY_TEST_POSTGRES GANTRY_TEST_PGDIR   # "0" is not a DSN
fi

# A real, throwaway Temporal server on loopback (the Temporal CLI's dev
# server, built once into ~/.cache/gantry-temporal from its own module — cold:
# about 10 min — so that the server never enters gantry's binary), for the
# tests that run plans on workers (docs/temporal.md): they read
# GANTRY_TEST_TEMPORAL (its host:port). GANTRY_TEST_TEMPORAL=0 skips this
# locally (those tests then skip); in CI (CI=true) it always starts.
if [ "${CI:-}" = "true" ] || [ "${GANTRY_TEST_TEMPORAL:-1}" != "0" ]; then
  if [ "${GANTRY_TEST_TEMPORAL:-1}" = "0" ]; then
    echo "== CI=true: GANTRY_TEST_TEMPORAL=0 is ignored, CI always starts the Temporal server"
  fi
  scripts/temporal/build.sh
  temporal_state=$(mktemp -d "${TMPDIR:-/tmp}/gantry-test-temporal.XXXXXX")
  echo "== starting the Temporal test server in $temporal_state"
  scripts/temporal/start.sh "$temporal_state"
  GANTRY_TEST_TEMPORAL=$(cat "$temporal_state/address")
  export GANTRY_TEST_TEMPORAL
else
  echo "== GANTRY_TEST_TEMPORAL=0: no Temporal server; the tests that need one will skip"
  unset GANTRY_TEST_TEMPORAL
fi

echo "== go test"
go test -race -count=1 -timeout 45m ./...

# The real Hub manifests of ../shared/corpus/hub, when this checkout has them
# beside it (they are not part of the repository): every one must elaborate.
if [ -d ../shared/corpus/hub ]; then
  echo "== Hub corpus (scripts/hub-corpus.sh)"
  scripts/hub-corpus.sh
fi
