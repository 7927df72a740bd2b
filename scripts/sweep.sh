#!/usr/bin/env bash
# Feeds gantry bad input of many kinds (scripts/sweep/main.go) and checks each
# is refused with exit code 2, a positioned error, no crash or hang, and
# nothing written. Arguments go to the sweep (-run TEXT, -timeout 60s).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
echo "building gantry..." >&2
go build -o "$bin/gantry" ./cmd/gantry
go run ./scripts/sweep -gantry "$bin/gantry" "$@"
