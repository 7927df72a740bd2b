#!/usr/bin/env bash
# Benchmarks gantry against GNU make -j on the same DAGs (bench/README.md).
#   bench/run.sh            every case, N up to 10,000, 5 rounds
#   bench/run.sh --quick    N up to 1,000, 3 rounds: under 2 minutes
# Other flags go to the runner (-rounds R, -parallel P, -only TEXT).
# The last line printed is the headline: ratio_vs_make=<median ratio over the
# no-op 1,000-node cases>.
set -euo pipefail
cd "$(dirname "$0")/.."

args=()
for a in "$@"; do
  case "$a" in
    --quick) args+=(-quick) ;;
    *) args+=("$a") ;;
  esac
done

if ! command -v make >/dev/null 2>&1; then
  echo "== installing GNU make (the baseline)" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >/dev/null && $SUDO apt-get install -y -qq make >/dev/null
fi

# Cases live on the repository's disk: tmpfs or a slow /tmp would measure the
# filesystem, not the tools.
work="${BENCH_WORK:-bench/.work}"
mkdir -p "$work/bin"
go build -o "$work/bin/gantry" ./cmd/gantry
go build -o "$work/bin/runner" ./bench/runner
# Building writes thousands of files; let the filesystem settle before
# measuring tools whose runs create files.
sync
sleep 3
exec "$work/bin/runner" -gantry "$work/bin/gantry" -work "$work" "${args[@]}"
