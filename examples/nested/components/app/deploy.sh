#!/usr/bin/env bash
set -euo pipefail
dir="$(dirname "$GANTRY_ELABORATE")/demo-data"
mkdir -p "$dir"
printf 'message=%s\nport=%s\ninstances=%s\n' "$MESSAGE" "$PORT" "$INSTANCES" > "$dir/$COMPONENT_NAME.conf"
echo "$COMPONENT_NAME: $INSTANCES instances on port $PORT say \"$MESSAGE\""
echo "$COMPONENT_NAME: database at $DB_URL"
