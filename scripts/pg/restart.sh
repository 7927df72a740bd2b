#!/usr/bin/env bash
# Restarts the server that scripts/pg/start.sh DIR started, on the same port
# (it is in DIR/data/gantry.conf), so DIR/dsn stays valid: tests call it in
# the middle of a run to prove that a server restart loses nothing. -m fast
# ends every session at once (clients see their connections drop); -w returns
# once the server accepts connections again. Started if it was stopped.
#
# Usage: restart.sh DIR
set -euo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then echo "usage: $0 DIR" >&2; exit 2; fi
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/pg/lib.sh
. "$here/lib.sh"
pg_dir "$1"

if ! pg_load || [ ! -f "$S/pg.env" ]; then pg_die "no server made by scripts/pg/start.sh in $S"; fi
t0=$SECONDS
from=$(( $(wc -l <"$S/log/postgresql.log" 2>/dev/null || echo 0) + 1 ))
if ! as_pg "$PGBIN/pg_ctl" restart -D "$S/data" -m fast -l "$S/log/postgresql.log" -w -t 120 >/dev/null 2>&1; then
  pg_log_tail "$from"
  pg_die "the server in $S did not restart on 127.0.0.1:$PORT"
fi
echo "== restarted the server in $S on 127.0.0.1:$PORT ($((SECONDS - t0))s)"
