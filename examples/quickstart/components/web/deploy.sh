#!/usr/bin/env bash
set -euo pipefail
mkdir -p "$WORKSPACE/web"
printf '<a href="%s">API</a>\n' "$API_URL" > "$WORKSPACE/web/index.html"
echo "page published"
echo
echo "Outputs:"
echo "web.url = file://$WORKSPACE/web/index.html"
echo
