#!/usr/bin/env bash
set -euo pipefail
rm -f "$(dirname "$GANTRY_ELABORATE")/demo-data/$COMPONENT_NAME.conf"
echo "$COMPONENT_NAME: removed"
