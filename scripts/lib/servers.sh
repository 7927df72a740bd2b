# shellcheck shell=bash
# Shared by scripts/test.sh and bench/temporal.sh: sourced, not run.
# Throwaway servers for tests, each started by scripts/KIND/start.sh DIR
# (KIND: k8s, pg, temporal) in a folder of its own, and stopped and removed
# by servers_stop, which the caller's EXIT trap calls.

servers_scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
servers=() # KIND:DIR of each server started

# server_start KIND NAME WHAT starts a server (WHAT, for the message) in a
# new folder ${TMPDIR:-/tmp}/NAME.XXXXXX and sets server_dir to it. The
# folder is recorded before the start, so that servers_stop also stops a
# server whose start failed half-way. pg's start.sh prints export lines
# whose DSN holds a password: they are dropped.
server_start() {
  server_dir=$(mktemp -d "${TMPDIR:-/tmp}/$2.XXXXXX")
  servers+=("$1:$server_dir")
  echo "== starting $3 in $server_dir"
  if [ "$1" = pg ]; then
    "$servers_scripts/pg/start.sh" "$server_dir" | grep -v '^export '
  else
    "$servers_scripts/$1/start.sh" "$server_dir"
  fi
}

# servers_stop stops every server started and removes its folder.
servers_stop() {
  local s
  for s in "${servers[@]}"; do
    "$servers_scripts/${s%%:*}/stop.sh" "${s#*:}" >/dev/null || true
    rm -rf "${s#*:}"
  done
  servers=()
}
