#!/usr/bin/env bash
# Stops a cluster started by scripts/k8s/start.sh STATE_DIR, by its recorded
# pids, in reverse order (kwok, scheduler, controller-manager, then the
# apiserver before etcd): SIGTERM, then SIGKILL after a bounded wait.
# Idempotent: a missing state dir, pid file or process is not an error.
# A pid is only signalled while its command line still names STATE_DIR, so a
# reused pid is never hit. It leaves STATE_DIR itself (logs) in place.
#
# Usage: stop.sh STATE_DIR
set -uo pipefail

if [ $# -ne 1 ] || [ -z "$1" ]; then
  echo "usage: $0 STATE_DIR" >&2
  exit 2
fi
[ -d "$1" ] || exit 0
S=$(cd "$1" && pwd -P)
TERM_WAIT=${GANTRY_K8S_STOP_WAIT:-10}   # seconds between SIGTERM and SIGKILL

ours() { # pid: alive and started for this state dir
  local cmd
  cmd=$(tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline") && [[ "$cmd" == *"$S"* ]]
}

for n in kwok scheduler kcm apiserver etcd; do
  f=$S/$n.pid
  [ -f "$f" ] || continue
  p=$(cat "$f" 2>/dev/null || true)
  if [[ "$p" =~ ^[0-9]+$ ]] && ours "$p"; then
    kill -TERM "$p" 2>/dev/null || true
    deadline=$((SECONDS + TERM_WAIT))
    while ours "$p" && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
    how=stopped
    if ours "$p"; then
      kill -KILL "$p" 2>/dev/null || true
      how=killed
      for _ in $(seq 1 50); do ours "$p" || break; sleep 0.1; done
    fi
    # A zombie (exited, parent not reaping) still has /proc/PID but an empty cmdline.
    echo "$how $n ($p)"
  fi
  rm -f "$f"
done
exit 0
