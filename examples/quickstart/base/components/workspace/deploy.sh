#!/usr/bin/env bash
set -euo pipefail
# Resolve the folder next to the stack manifest (its elaborated file,
# GANTRY_ELABORATE, lies next to it) so that the demo never writes anywhere
# else, wherever the state is kept.
root="$(cd "$(dirname "$GANTRY_ELABORATE")" && pwd)/$WORKSPACE_DIR"
mkdir -p "$root"
echo "workspace ready at $root"
echo
echo "Outputs:"
echo "workspace.path = $root"
echo
