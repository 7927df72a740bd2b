#!/usr/bin/env bash
# Starts a throwaway Temporal server on 127.0.0.1 for gantry's tests: the
# Temporal CLI's development server (`temporal server start-dev --headless`,
# in-memory, the namespace "default"), built by scripts/temporal/build.sh.
# Every port is a free one picked here.
#
# Usage: start.sh DIR
# Writes DIR/address (127.0.0.1:PORT, the frontend's gRPC address), DIR/pid
# and DIR/server.log. Stop with scripts/temporal/stop.sh DIR, then rm -rf DIR.
# Waits until the server answers (a namespace describe), at most 60 s; on a
# failure it prints the log's tail, stops what it started and exits 1.
set -euo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then echo "usage: $0 DIR" >&2; exit 2; fi
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
S=$(cd "$1" && pwd)
die() { echo "start.sh: $*" >&2; exit 1; }

if [ -f "$S/pid" ] && kill -0 "$(cat "$S/pid")" 2>/dev/null; then
  die "a server is already running in $S (pid $(cat "$S/pid")): stop it with scripts/temporal/stop.sh $S"
fi
"$here/build.sh"
TEMPORAL=$("$here/build.sh" --print-bin)

# Free loopback ports; a start that lost one to another process is tried
# again on new ports.
# shellcheck source=scripts/lib/ports.sh
. "$here/../lib/ports.sh"

t0=$SECONDS
for attempt in 1 2 3; do
  read -r port http metrics < <(free_ports 3) || die "no free ports"
  echo "== starting the Temporal test server on 127.0.0.1:$port (attempt $attempt)"
  # Its own session: an interrupt of the caller's terminal does not reach
  # it; stop.sh stops it.
  setsid "$TEMPORAL" server start-dev --headless --ip 127.0.0.1 --port "$port" \
    --http-port "$http" --metrics-port "$metrics" --log-level warn \
    >"$S/server.log" 2>&1 < /dev/null &
  pid=$!
  echo "$pid" > "$S/pid"
  for _ in $(seq 1 600); do
    if ! kill -0 "$pid" 2>/dev/null; then
      break
    fi
    if "$TEMPORAL" operator namespace describe --address "127.0.0.1:$port" -n default >/dev/null 2>&1; then
      echo "127.0.0.1:$port" > "$S/address"
      echo "== Temporal test server up on 127.0.0.1:$port in $((SECONDS - t0))s (pid $pid, log $S/server.log)"
      exit 0
    fi
    sleep 0.1
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  if grep -q "address already in use" "$S/server.log"; then
    continue
  fi
  tail -n 20 "$S/server.log" >&2
  die "the Temporal server did not come up (log: $S/server.log)"
done
tail -n 20 "$S/server.log" >&2
die "the Temporal server found no free ports in three attempts"
