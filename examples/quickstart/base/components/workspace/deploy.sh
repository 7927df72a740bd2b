#!/usr/bin/env bash
set -euo pipefail
# Resolve the folder next to the state file so that the demo never writes
# anywhere else.
root="$(cd "$(dirname "$GANTRY_STATE")" && pwd)/$WORKSPACE_DIR"
mkdir -p "$root"
echo "workspace ready at $root"
echo
echo "Outputs:"
echo "workspace.path = $root"
echo
