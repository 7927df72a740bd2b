#!/usr/bin/env bash
# Stops the server that scripts/pg/start.sh DIR started: pg_ctl stop -m fast
# (sessions are ended, a shutdown checkpoint is written), then -m immediate if
# that has not finished in 60 s. Idempotent: a missing DIR, a DIR without a
# cluster or a server already stopped is not an error. DIR itself stays (logs,
# data); the caller removes it.
#
# Usage: stop.sh DIR
set -uo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then echo "usage: $0 DIR" >&2; exit 2; fi
[ -d "$1" ] || exit 0
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/pg/lib.sh
. "$here/lib.sh"
pg_dir "$1"

pg_load || exit 0
if ! pg_running; then
  echo "== no server running in $S"
  exit 0
fi
if as_pg "$PGBIN/pg_ctl" stop -D "$S/data" -m fast -w -t 60 >/dev/null 2>&1 ||
   as_pg "$PGBIN/pg_ctl" stop -D "$S/data" -m immediate -w -t 30 >/dev/null 2>&1; then
  echo "== stopped the server in $S"
  exit 0
fi
pg_running || exit 0   # stopped meanwhile by someone else
pg_log_tail 1
pg_die "could not stop the server in $S"
