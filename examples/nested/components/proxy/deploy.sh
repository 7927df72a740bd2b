#!/usr/bin/env bash
set -euo pipefail
dir="$(dirname "$GANTRY_ELABORATE")/demo-data"
mkdir -p "$dir"
printf 'listen=%s\nupstream=%s\ninstances=%s\n' "$PORT" "$UPSTREAM" "$INSTANCES" > "$dir/$COMPONENT_NAME.conf"
echo "$COMPONENT_NAME: $INSTANCES instances (resilience $RESILIENCE) forward :$PORT to $UPSTREAM"
