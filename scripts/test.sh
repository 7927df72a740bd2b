#!/usr/bin/env bash
# Runs gantry's whole test suite: vet, the unit and end-to-end (testscript)
# tests with the race detector. Anything a test needs is installed or started
# here, from the package registries this machine reaches.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/lib/servers.sh
. scripts/lib/servers.sh

# wanted VAR WHAT: whether to set up what VAR is about. VAR=0 skips it
# locally; CI (CI=true) always sets it up, and says so (WHAT: what CI
# always does).
wanted() {
  [ "${!1:-1}" != "0" ] && return 0
  [ "${CI:-}" = "true" ] || return 1
  echo "== CI=true: $1=0 is ignored, CI always $2"
}

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
if wanted GANTRY_TEST_BROWSER "runs the browser tests"; then
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
# One EXIT trap for every server started below (a second `trap ... EXIT`
# would replace the first); INT and TERM exit so that it runs.
trap servers_stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
if wanted GANTRY_TEST_K8S "starts the test cluster"; then
  for tool in openssl curl; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "== installing $tool (for the test cluster)"
      SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
      $SUDO apt-get update -qq >/dev/null && $SUDO apt-get install -y -qq "$tool" >/dev/null
    fi
  done
  scripts/k8s/build.sh
  server_start k8s gantry-test-k8s "the test cluster"
  export GANTRY_TEST_KUBECONFIG="$server_dir/kubeconfig"
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
if wanted GANTRY_TEST_POSTGRES "starts the test database"; then
  server_start pg gantry-test-pg "the test database"
  GANTRY_TEST_POSTGRES=$(cat "$server_dir/dsn")
  export GANTRY_TEST_POSTGRES
  export GANTRY_TEST_PGDIR="$server_dir"
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
if wanted GANTRY_TEST_TEMPORAL "starts the Temporal server"; then
  scripts/temporal/build.sh
  server_start temporal gantry-test-temporal "the Temporal test server"
  GANTRY_TEST_TEMPORAL=$(cat "$server_dir/address")
  export GANTRY_TEST_TEMPORAL
else
  echo "== GANTRY_TEST_TEMPORAL=0: no Temporal server; the tests that need one will skip"
  unset GANTRY_TEST_TEMPORAL
fi

# The terraform plugin's scenario (testdata/script/plugins_terraform.txtar)
# runs the terraform on PATH. On a machine without one, OpenTofu (the fork
# with the same command line), built once from the Go module proxy into
# ~/.cache/gantry-terraform (scripts/terraform/build.sh: why not terraform
# itself), goes first on PATH as `terraform`. GANTRY_TEST_TERRAFORM=0 skips
# this locally (the scenario then skips when there is no terraform); in CI
# (CI=true) there is always one.
if wanted GANTRY_TEST_TERRAFORM "runs the terraform plugin's scenario"; then
  if command -v terraform >/dev/null 2>&1; then
    echo "== terraform for the terraform plugin's scenario: $(command -v terraform) ($(CHECKPOINT_DISABLE=1 terraform version 2>/dev/null | sed -n 1p))"
  else
    scripts/terraform/build.sh
    PATH="$(scripts/terraform/build.sh --print-bin):$PATH"
    export PATH
    echo "== no terraform on PATH: the terraform plugin's scenario runs OpenTofu ($(terraform version 2>/dev/null | sed -n 1p))"
  fi
else
  echo "== GANTRY_TEST_TERRAFORM=0: no terraform is built; the terraform plugin's scenario skips unless one is on PATH"
fi

echo "== go test"
# A race-detecting binary sleeps a second as it exits (GORACE's
# atexit_sleep_ms, 1000 by default): every gantry the scenarios start, and
# every child gantry starts, took a second more — most of the suite's time.
# Races are reported as they happen, not at exit.
export GORACE="${GORACE:+$GORACE }atexit_sleep_ms=0"
# cmd/gantry (every scenario twice: on a state file and on PostgreSQL, the
# Kubernetes and Temporal ones) took 39 to 44 minutes on this 2-core
# machine: 45 was no margin, and a loaded run timed out. 60 keeps a cold
# run (about 15 minutes of builds before this) well inside CI's 90.
go test -race -count=1 -timeout 60m ./...

# The real Hub manifests of ../shared/corpus/hub, when this checkout has them
# beside it (they are not part of the repository): every one must elaborate.
if [ -d ../shared/corpus/hub ]; then
  echo "== Hub corpus (scripts/hub-corpus.sh)"
  scripts/hub-corpus.sh
fi
