#!/usr/bin/env bash
# Builds the Temporal CLI (github.com/temporalio/cli/cmd/temporal), whose
# `temporal server start-dev` is the Temporal server gantry's tests run on
# loopback (docs/temporal.md), from the Go module proxy only. The server is
# built here, in module mode with the CLI release's own go.mod, never from
# gantry's module: it never enters gantry's binary or go.sum.
#
# Output: ${GANTRY_TEMPORAL_CACHE:-$HOME/.cache/gantry-temporal}/bin-$CLI_VERSION/temporal,
# outside the repository. Skipped when the binary is there and the stamp file
# records the version below. Cold (empty Go build cache): about 10 min on 2
# cores; relinked with a filled cache: seconds; already built: instant.
# v1.5.1 is the newest CLI that `go install` builds (later ones carry
# replace directives).
#
# Usage: build.sh              build (or check) the binary
#        build.sh --print-bin  print the binary's path and exit
# Safe to run concurrently: builds take a lock in the cache folder.
set -euo pipefail

CLI_VERSION=1.5.1      # github.com/temporalio/cli v$CLI_VERSION
STAMP_FORMAT=1         # bump when the way the binary is built changes

WHAT="the temporal CLI"
CACHE=${GANTRY_TEMPORAL_CACHE:-$HOME/.cache/gantry-temporal}
BIN=$CACHE/bin-$CLI_VERSION
BINARIES=(temporal)
TEMPORAL=$BIN/temporal
PRINT_BIN=$TEMPORAL
WANT_STAMP="format=$STAMP_FORMAT temporal-cli=v$CLI_VERSION"
# shellcheck source=scripts/lib/gobuild.sh
. "$(dirname "$0")/../lib/gobuild.sh"
build_args "$@"
build_begin

echo "== building the temporal CLI v$CLI_VERSION (the test server) into $TEMPORAL"
echo "   cold: about 10 min on 2 cores; with a filled Go build cache: a few seconds"
export CGO_ENABLED=0
build_ticker

# As the CLI's release build does: the version from the tag.
ldflags="-s -w -X github.com/temporalio/cli/temporalcli.Version=$CLI_VERSION"
(cd "$CACHE" && GOBIN="$TMP" go install -trimpath -ldflags="$ldflags" \
  "github.com/temporalio/cli/cmd/temporal@v$CLI_VERSION")

if ! got=$("$TMP/temporal" --version 2>&1); then
  echo "build.sh: the built temporal CLI does not run: $got" >&2
  exit 1
fi
case $got in
  *"version $CLI_VERSION "*) ;;
  *) echo "build.sh: built temporal CLI reports '$got', want v$CLI_VERSION" >&2; exit 1 ;;
esac
mv -f "$TMP/temporal" "$TEMPORAL"
build_end
echo "== temporal CLI built: $TEMPORAL ($got)"
echo "== build.sh total time: $((SECONDS - t_start))s"
