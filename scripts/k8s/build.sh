#!/usr/bin/env bash
# Builds the binaries of a throwaway Kubernetes control plane for gantry's
# tests, from the Go module proxy only: kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl (k8s.io/kubernetes, its staging modules replaced by
# the published k8s.io/* modules), etcd (through a wrapper module) and kwok (a
# fake node: no kubelet, no containers).
#
# Output: ${GANTRY_K8S_CACHE:-$HOME/.cache/gantry-k8s}/bin-$K8S_VERSION, outside
# the repository. Skipped when all binaries are there and the stamp file
# records the versions below; after an interrupted build only the missing
# binaries are built. Cold: about 12 min on 2 cores (kube-apiserver alone
# about 8 min, 2.4 GB peak memory, about 12 GB of Go caches); all six
# relinked with a filled Go build cache: about 2 min; already built: instant.
#
# Usage: build.sh              build (or check) the binaries
#        build.sh --print-bin  print the binary folder and exit
# Safe to run concurrently: builds take a lock in the cache folder.
set -euo pipefail

K8S_VERSION=1.37.2     # k8s.io/kubernetes v$K8S_VERSION
K8S_STAGING=0.37.2     # the published k8s.io/* staging modules that match it
ETCD_VERSION=3.7.0     # go.etcd.io/etcd/server/v3 (Debian's etcd 3.4 is too old)
KWOK_VERSION=0.8.0     # sigs.k8s.io/kwok
GO_DIRECTIVE=1.26.0    # the go line of the generated wrapper modules
STAMP_FORMAT=1         # bump when the way the binaries are built changes

WHAT="the k8s test binaries"
CACHE=${GANTRY_K8S_CACHE:-$HOME/.cache/gantry-k8s}
BIN=$CACHE/bin-$K8S_VERSION
BINARIES=(kube-apiserver kube-controller-manager kube-scheduler kubectl etcd kwok)
PRINT_BIN=$BIN
WORK=$CACHE/build
WANT_STAMP="format=$STAMP_FORMAT kubernetes=v$K8S_VERSION staging=v$K8S_STAGING etcd=v$ETCD_VERSION kwok=v$KWOK_VERSION"
# shellcheck source=scripts/lib/gobuild.sh
. "$(dirname "$0")/../lib/gobuild.sh"
build_args "$@"
build_begin

echo "== building k8s test binaries into $BIN ($WANT_STAMP)"
echo "   cold: about 12 min on 2 cores; with a filled Go build cache: about 2 min"
mkdir -p "$WORK/k8s" "$WORK/etcd"

# Each binary gets its own stamp once built, so an interrupted build resumes
# where it stopped. A binary found without a stamp (built by hand or by an
# older script) is kept when it reports the wanted version.
reports_version() { # name
  local out
  case $1 in
    kubectl) out=$("$BIN/kubectl" version --client 2>/dev/null) || return 1
             grep -qxF "Client Version: v$K8S_VERSION" <<<"$out" ;;
    etcd)    out=$("$BIN/etcd" --version 2>/dev/null) || return 1
             grep -qxF "etcd Version: $ETCD_VERSION" <<<"$out" ;;
    kwok)    out=$("$BIN/kwok" --version 2>/dev/null) || return 1
             [[ "$out" == "kwok version v$KWOK_VERSION "* ]] ;;
    *)       out=$("$BIN/$1" --version 2>/dev/null) || return 1
             grep -qxF "Kubernetes v$K8S_VERSION" <<<"$out" ;;
  esac
}
have() { # name: true when $BIN/name is the wanted build
  [ -x "$BIN/$1" ] || return 1
  if [ -f "$BIN/.stamp.$1" ]; then
    [ "$(cat "$BIN/.stamp.$1")" = "$WANT_STAMP" ]
    return
  fi
  reports_version "$1" || return 1
  printf '%s\n' "$WANT_STAMP" > "$BIN/.stamp.$1"
  echo "   kept $BIN/$1: no stamp, but it reports the wanted version"
}
step() { # name, estimate
  echo "== building $1 (cold: $2)"
  t_step=$SECONDS
}
done_step() { # name
  rm -f "$BIN/.stamp.$1"
  mv -f "$TMP/$1" "$BIN/$1"
  printf '%s\n' "$WANT_STAMP" > "$BIN/.stamp.$1"
  echo "   $1 done in $((SECONDS - t_step))s"
}

# Regenerates go.mod from $2 and runs go mod tidy, unless the generated text is
# the same as last time and go.sum is there (then the module is already tidy).
wrapper_module() { # dir, go.mod text, tools.go text
  local dir=$1 mod=$2 tools=$3
  if [ -f "$dir/go.mod.gen" ] && [ -f "$dir/go.sum" ] && [ -f "$dir/go.mod" ] &&
     [ "$(cat "$dir/go.mod.gen")" = "$mod" ]; then
    return 0
  fi
  rm -f "$dir/go.mod.gen"
  printf '%s\n' "$mod" > "$dir/go.mod"
  printf '%s\n' "$tools" > "$dir/tools.go"
  (cd "$dir" && go mod tidy)
  printf '%s\n' "$mod" > "$dir/go.mod.gen"
}

# 1. k8s.io/kubernetes: every staging module must be replaced by its published
#    k8s.io/* version (the replace block of its go.mod lists them).
k8s_tools='//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)'
build_k8s() {
  echo "== resolving k8s.io/kubernetes v$K8S_VERSION"
  k8s_dir=$(cd "$WORK/k8s" && go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  if [ -z "$k8s_dir" ] || [ ! -f "$k8s_dir/go.mod" ]; then
    echo "build.sh: could not download k8s.io/kubernetes@v$K8S_VERSION" >&2
    exit 1
  fi
  staging=$(sed -n '/^replace (/,/^)/p' "$k8s_dir/go.mod" | awk '/=>/{print $1}')
  if [ -z "$staging" ]; then
    echo "build.sh: no replace block in $k8s_dir/go.mod" >&2
    exit 1
  fi
  k8s_mod=$(
    printf 'module gantryk8sbuild\n\ngo %s\n\nrequire k8s.io/kubernetes v%s\n\nreplace (\n' "$GO_DIRECTIVE" "$K8S_VERSION"
    for m in $staging; do printf '\t%s => %s v%s\n' "$m" "$m" "$K8S_STAGING"; done
    printf ')'
  )
  wrapper_module "$WORK/k8s" "$k8s_mod" "$k8s_tools"

  # Without -X the binaries report v0.0.0-master, which breaks version checks.
  minor=$(echo "$K8S_VERSION" | cut -d. -f2)
  ldflags="-s -w"
  ldflags+=" -X k8s.io/component-base/version.gitVersion=v$K8S_VERSION"
  ldflags+=" -X k8s.io/component-base/version.gitMajor=1"
  ldflags+=" -X k8s.io/component-base/version.gitMinor=$minor"
  ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=v$K8S_VERSION"

  k8s_estimate() {
    case $1 in
      kube-apiserver) echo "about 8 min" ;;
      kube-controller-manager) echo "about 3 min" ;;
      *) echo "about 1 min" ;;
    esac
  }
  for c in "${k8s_todo[@]}"; do
    step "$c" "$(k8s_estimate "$c")"
    (cd "$WORK/k8s" && go build -trimpath -ldflags="$ldflags" -o "$TMP/$c" "k8s.io/kubernetes/cmd/$c")
    done_step "$c"
  done
}
k8s_todo=()
for c in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
  if have "$c"; then echo "== $c already built"; else k8s_todo+=("$c"); fi
done
if [ ${#k8s_todo[@]} -gt 0 ]; then build_k8s; fi

# 2. etcd: its go.mod has replace directives, so `go install ...@v` is refused;
#    build it from a wrapper module.
etcd_mod=$(printf 'module gantryetcdbuild\n\ngo %s\n\nrequire go.etcd.io/etcd/server/v3 v%s' "$GO_DIRECTIVE" "$ETCD_VERSION")
etcd_tools='//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"'
if have etcd; then
  echo "== etcd already built"
else
  step etcd "about 1 min"
  wrapper_module "$WORK/etcd" "$etcd_mod" "$etcd_tools"
  (cd "$WORK/etcd" && go build -trimpath -ldflags='-s -w' -o "$TMP/etcd" go.etcd.io/etcd/server/v3)
  done_step etcd
fi

# 3. kwok: a plain go install works (no replace directives).
if have kwok; then
  echo "== kwok already built"
else
  step kwok "about 3 min"
  (cd "$WORK" && GOBIN="$TMP" go install "sigs.k8s.io/kwok/cmd/kwok@v$KWOK_VERSION")
  done_step kwok
fi

build_end
echo "== k8s test binaries built in $BIN"
ls -l "$BIN"
echo "== build.sh total time: $((SECONDS - t_start))s"
