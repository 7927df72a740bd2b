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

CACHE=${GANTRY_TEMPORAL_CACHE:-$HOME/.cache/gantry-temporal}
BIN=$CACHE/bin-$CLI_VERSION
TEMPORAL=$BIN/temporal
STAMP=$BIN/.stamp
LOCK=$CACHE/.build.lock
WANT_STAMP="format=$STAMP_FORMAT temporal-cli=v$CLI_VERSION"

if [ "${1:-}" = "--print-bin" ]; then
  echo "$TEMPORAL"
  exit 0
elif [ $# -gt 0 ]; then
  echo "usage: $0 [--print-bin]" >&2
  exit 2
fi

up_to_date() {
  [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT_STAMP" ] && [ -x "$TEMPORAL" ]
}

if up_to_date; then
  echo "== temporal CLI up to date in $TEMPORAL ($WANT_STAMP)"
  exit 0
fi

command -v go >/dev/null 2>&1 || { echo "build.sh: go is not on PATH" >&2; exit 1; }
mkdir -p "$CACHE" "$BIN"

# One build at a time: a second caller waits, then finds the work done.
exec 9>"$LOCK"
if ! flock -n 9; then
  echo "== another build of the temporal CLI is running; waiting for its lock ($LOCK)"
  flock 9
fi
if up_to_date; then
  echo "== temporal CLI up to date in $TEMPORAL (built by another run)"
  exit 0
fi

t_start=$SECONDS
rm -f "$STAMP"

echo "== building the temporal CLI v$CLI_VERSION (the test server) into $TEMPORAL"
echo "   cold: about 10 min on 2 cores; with a filled Go build cache: a few seconds"
TMP=$BIN/.tmp
rm -rf "$TMP"
mkdir -p "$TMP"

# Never let the repository's go.work or module leak into this build.
export GOWORK=off GOTOOLCHAIN=local CGO_ENABLED=0

# go install prints nothing until done: print a line every 30 s meanwhile.
# The ticker must not hold the lock (fd 9) or the caller's pipes after exit.
( while sleep 30 >/dev/null 2>&1; do
    echo "   ... still building the temporal CLI ($((SECONDS - t_start))s)"
  done ) 9>&- &
ticker=$!
trap 'kill "$ticker" 2>/dev/null || true' EXIT

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
rm -rf "$TMP"
# The stamp last: only a complete build is taken as done.
printf '%s\n' "$WANT_STAMP" > "$STAMP"
echo "== temporal CLI built: $TEMPORAL ($got)"
echo "== build.sh total time: $((SECONDS - t_start))s"
