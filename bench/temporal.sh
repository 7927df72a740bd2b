#!/usr/bin/env bash
# Benchmarks the Temporal engine (docs/temporal.md) against the local
# executor: 200 components of 1 s each, deployed locally with --parallel 4·W
# and by W gantry workers of --parallel 4 each, W = 1, 2, 4
# (bench/temporalbench). It starts a throwaway Temporal server
# (scripts/temporal/start.sh; built once by scripts/temporal/build.sh) and a
# throwaway PostgreSQL server (scripts/pg/start.sh) unless
# GANTRY_TEST_TEMPORAL and GANTRY_TEST_POSTGRES name running ones, builds
# gantry into bench/.work/bin, and stops what it started on exit.
#
# Usage: bench/temporal.sh [temporalbench flags: -n 200 -seconds 1 -workers 1,2,4 -parallel 4 -rounds 1]
# About 4 minutes with the defaults. The table goes to stdout and to
# bench/.work/temporal-bench.txt.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/lib/servers.sh
. scripts/lib/servers.sh
trap servers_stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ -z "${GANTRY_TEST_TEMPORAL:-}" ] || [ "${GANTRY_TEST_TEMPORAL}" = 0 ]; then
  server_start temporal gantry-bench-temporal "a Temporal server"
  GANTRY_TEST_TEMPORAL=$(cat "$server_dir/address")
fi
if [ -z "${GANTRY_TEST_POSTGRES:-}" ] || [ "${GANTRY_TEST_POSTGRES}" = 0 ]; then
  server_start pg gantry-bench-pg "a PostgreSQL server"
  GANTRY_TEST_POSTGRES=$(cat "$server_dir/dsn")
fi

mkdir -p bench/.work/bin
echo "== building gantry into bench/.work/bin"
go build -o bench/.work/bin/gantry ./cmd/gantry
echo "== running (about 4 minutes with the defaults)"
go run ./bench/temporalbench -gantry bench/.work/bin/gantry -engine "temporal://$GANTRY_TEST_TEMPORAL/default" \
  -state "$GANTRY_TEST_POSTGRES" "$@" | tee bench/.work/temporal-bench.txt
