#!/usr/bin/env bash
set -euo pipefail
rm -rf "$WORKSPACE/web"
echo "page removed"
