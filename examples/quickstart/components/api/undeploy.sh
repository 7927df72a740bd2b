#!/usr/bin/env bash
set -euo pipefail
rm -rf "$WORKSPACE/api"
echo "api removed"
