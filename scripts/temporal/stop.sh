#!/usr/bin/env bash
# Stops the server that scripts/temporal/start.sh DIR started: SIGTERM, then
# SIGKILL after 10 s. Idempotent: a missing DIR or a server already stopped
# is not an error. DIR stays (its log); the caller removes it.
#
# Usage: stop.sh DIR
set -uo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then echo "usage: $0 DIR" >&2; exit 2; fi
[ -f "$1/pid" ] || exit 0
pid=$(cat "$1/pid")
if ! kill -0 "$pid" 2>/dev/null; then
  rm -f "$1/pid"
  exit 0
fi
kill "$pid" 2>/dev/null
for _ in $(seq 1 100); do
  kill -0 "$pid" 2>/dev/null || { rm -f "$1/pid"; echo "== stopped the Temporal test server (pid $pid)"; exit 0; }
  sleep 0.1
done
kill -9 "$pid" 2>/dev/null
rm -f "$1/pid"
echo "== killed the Temporal test server (pid $pid): it did not stop in 10 s"
