#!/usr/bin/env bash
set -euo pipefail
root="$(cd "$(dirname "$GANTRY_ELABORATE")" && pwd)/$WORKSPACE_DIR"
# Remove the folder only when the other components left it empty.
rmdir "$root" 2>/dev/null && echo "removed $root" || echo "kept $root (not empty)"
