#!/usr/bin/env bash
set -euo pipefail
mkdir -p "$WORKSPACE/api"
cp api.conf "$WORKSPACE/api/api.conf"
echo "api configured for $APP_ENV on port $API_PORT"
