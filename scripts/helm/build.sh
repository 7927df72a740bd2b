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

WHAT=helm
CACHE=${GANTRY_HELM_CACHE:-$HOME/.cache/gantry-helm}
BIN=$CACHE/bin-$HELM_VERSION
BINARIES=(helm)
HELM=$BIN/helm
PRINT_BIN=$HELM
WANT_STAMP="format=$STAMP_FORMAT helm=v$HELM_VERSION"
# shellcheck source=scripts/lib/gobuild.sh
. "$(dirname "$0")/../lib/gobuild.sh"
build_args "$@"
build_begin

# A binary found without a stamp (built by hand or by an older script) is kept
# when it reports the wanted version.
if [ -x "$HELM" ] &&
   [ "$("$HELM" version --template '{{.Version}}' 2>/dev/null)" = "v$HELM_VERSION" ]; then
  echo "   kept $HELM: no stamp, but it reports v$HELM_VERSION"
  build_end
  exit 0
fi

echo "== building helm v$HELM_VERSION into $HELM"
echo "   cold: about 7 min on 2 cores; with a filled Go build cache: a few seconds"
export CGO_ENABLED=0

# As Helm's Makefile does for a tagged release: version from the tag, empty
# metadata (else `helm version` says v4.3.1+unreleased), clean tree. The
# commit is left empty: the module proxy does not record it.
ldflags="-s -w"
ldflags+=" -X helm.sh/helm/v4/internal/version.version=v$HELM_VERSION"
ldflags+=" -X helm.sh/helm/v4/internal/version.metadata="
ldflags+=" -X helm.sh/helm/v4/internal/version.gitTreeState=clean"

build_ticker

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
build_end
echo "== helm built: $HELM ($("$HELM" version --short))"
echo "== build.sh total time: $((SECONDS - t_start))s"
