#!/usr/bin/env bash
# Builds the Helm CLI (helm.sh/helm/v4/cmd/helm, the version gantry's go.mod
# uses) for gantry's tests, from the Go module proxy only.
#
# Output: ${GANTRY_HELM_CACHE:-$HOME/.cache/gantry-helm}/bin-$HELM_VERSION/helm,
# outside the repository. Skipped when the binary is there and the stamp file
# records the version below. Cold (empty Go build cache): about 7 min on 2
# cores, 1.2 GB of build cache; relinked with a filled cache: about 6 s;
# already built: instant. The repository's go.mod/go.sum are never touched:
# helm's go.mod has no replace directives, so `go install ...@v` builds it in
# module mode with exactly the dependency versions of the Helm release.
#
# Usage: build.sh              build (or check) the binary
#        build.sh --print-bin  print the binary's path and exit
# Safe to run concurrently: builds take a lock in the cache folder.
set -euo pipefail

HELM_VERSION=4.3.1     # helm.sh/helm/v4 v$HELM_VERSION; keep in step with go.mod
STAMP_FORMAT=1         # bump when the way the binary is built changes

CACHE=${GANTRY_HELM_CACHE:-$HOME/.cache/gantry-helm}
BIN=$CACHE/bin-$HELM_VERSION
HELM=$BIN/helm
STAMP=$BIN/.stamp
LOCK=$CACHE/.build.lock
WANT_STAMP="format=$STAMP_FORMAT helm=v$HELM_VERSION"

if [ "${1:-}" = "--print-bin" ]; then
  echo "$HELM"
  exit 0
elif [ $# -gt 0 ]; then
  echo "usage: $0 [--print-bin]" >&2
  exit 2
fi

up_to_date() {
  [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT_STAMP" ] && [ -x "$HELM" ]
}

if up_to_date; then
  echo "== helm up to date in $HELM ($WANT_STAMP)"
  exit 0
fi

command -v go >/dev/null 2>&1 || { echo "build.sh: go is not on PATH" >&2; exit 1; }
mkdir -p "$CACHE" "$BIN"

# One build at a time: a second caller waits, then finds the work done.
exec 9>"$LOCK"
if ! flock -n 9; then
  echo "== another build of helm is running; waiting for its lock ($LOCK)"
  flock 9
fi
if up_to_date; then
  echo "== helm up to date in $HELM (built by another run)"
  exit 0
fi

t_start=$SECONDS
rm -f "$STAMP"

# A binary found without a stamp (built by hand or by an older script) is kept
# when it reports the wanted version.
if [ -x "$HELM" ] &&
   [ "$("$HELM" version --template '{{.Version}}' 2>/dev/null)" = "v$HELM_VERSION" ]; then
  echo "   kept $HELM: no stamp, but it reports v$HELM_VERSION"
  printf '%s\n' "$WANT_STAMP" > "$STAMP"
  exit 0
fi

echo "== building helm v$HELM_VERSION into $HELM"
echo "   cold: about 7 min on 2 cores; with a filled Go build cache: a few seconds"
# Written here first, then moved into place, so a test started meanwhile never
# runs a half-written file.
TMP=$BIN/.tmp
rm -rf "$TMP"
mkdir -p "$TMP"

# Never let the repository's go.work or module leak into this build.
export GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0

# As Helm's Makefile does for a tagged release: version from the tag, empty
# metadata (else `helm version` says v4.3.1+unreleased), clean tree. The
# commit is left empty: the module proxy does not record it.
ldflags="-s -w"
ldflags+=" -X helm.sh/helm/v4/internal/version.version=v$HELM_VERSION"
ldflags+=" -X helm.sh/helm/v4/internal/version.metadata="
ldflags+=" -X helm.sh/helm/v4/internal/version.gitTreeState=clean"

# go install prints nothing until done: print a line every 30 s meanwhile.
# The ticker must not hold the lock (fd 9) or the caller's pipes after exit.
( while sleep 30 >/dev/null 2>&1; do
    echo "   ... still building helm ($((SECONDS - t_start))s)"
  done ) 9>&- &
ticker=$!
trap 'kill "$ticker" 2>/dev/null || true' EXIT

# Run outside the repository; `go install pkg@version` ignores the current
# module anyway.
(cd "$CACHE" && GOBIN="$TMP" go install -trimpath -ldflags="$ldflags" \
  "helm.sh/helm/v4/cmd/helm@v$HELM_VERSION")

got=$("$TMP/helm" version --template '{{.Version}}')
if [ "$got" != "v$HELM_VERSION" ]; then
  echo "build.sh: built helm reports $got, want v$HELM_VERSION" >&2
  exit 1
fi
mv -f "$TMP/helm" "$HELM"
rm -rf "$TMP"
# The stamp last: only a complete build is taken as done.
printf '%s\n' "$WANT_STAMP" > "$STAMP"
echo "== helm built: $HELM ($("$HELM" version --short))"
echo "== build.sh total time: $((SECONDS - t_start))s"
