#!/usr/bin/env bash
# Runs gantry's whole test suite: vet, the unit and end-to-end (testscript)
# tests with the race detector. Anything a test needs is installed or started
# here, from the package registries this machine reaches.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== go vet"
go vet ./...

echo "== gofmt"
unformatted=$(gofmt -l cmd internal bench 2>/dev/null || true)
if [ -n "$unformatted" ]; then
  echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== go test"
go test -race -count=1 ./...
