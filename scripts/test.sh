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

echo "== go vet"
go vet ./...

echo "== gofmt"
unformatted=$(gofmt -l cmd internal bench scripts 2>/dev/null || true)
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== go test"
go test -race -count=1 ./...
