#!/usr/bin/env bash
# Benchmarks gantry against GNU make -j on the same DAGs (bench/README.md).
#   bench/run.sh             every case, N up to 10,000, 7 rounds
#   bench/run.sh --quick     N up to 1,000, 3 rounds
#   bench/run.sh --ab REV    also measures the gantry of git revision REV (B)
#                            in the same rounds: B/make and the paired B/A
#   bench/run.sh --postgres  also measures the PostgreSQL state backend against
#                            the file backend (1,000 no-op components), on a
#                            throwaway server (scripts/pg/start.sh)
#   bench/run.sh --tty       also measures the live display: the no-op
#                            random-1000 deploy on a pseudo-terminal against
#                            with its output in a file, in the same rounds
# Other flags go to the runner (-rounds R, -parallel P, -only REGEXP,
# -shapes random,fanout,chain). The last lines printed are the headline:
# cost_per_comp_ms=..., body_vs_make=... and ratio_vs_make=<median ratio
# over the no-op 1,000-node cases>.
set -euo pipefail
cd "$(dirname "$0")/.."

args=()
ab=""
postgres=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) args+=(-quick) ;;
    --postgres) postgres=1 ;;
    --tty) args+=(-tty) ;;
    --ab)
      [ $# -ge 2 ] || { echo "run.sh: --ab needs a git revision" >&2; exit 2; }
      ab="$2"; shift ;;
    --ab=*) ab="${1#--ab=}" ;;
    *) args+=("$1") ;;
  esac
  shift
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
# settle rewrites a binary the linker just wrote through an ordinary copy:
# fresh from the linker (which writes through a memory map), the same gantry
# ran with a peak RSS 35 MB higher (103 against 68 MB for a plan of 1,000
# components) until the file was copied, which would make A and B differ by
# when they were built.
settle() { cp "$1" "$1.settle" && mv -f "$1.settle" "$1"; }
go build -o "$work/bin/gantry" ./cmd/gantry
settle "$work/bin/gantry"
go build -o "$work/bin/runner" ./bench/runner

if [ -n "$ab" ]; then
  # B: the gantry of revision $ab, built from a clean export of that commit
  # (neither the working tree nor the repository's worktree list is touched).
  rev="$(git rev-parse --verify --quiet "$ab^{commit}")" || { echo "run.sh: --ab: no such revision: $ab" >&2; exit 2; }
  src="$(mktemp -d "${TMPDIR:-/tmp}/gantry-ab.XXXXXX")"
  trap 'rm -rf "$src"' EXIT
  echo "== building gantry at $ab (${rev:0:12}) into $work/bin/gantry-b" >&2
  git archive "$rev" | tar -x -C "$src"
  out="$(cd "$work/bin" && pwd)/gantry-b"
  (cd "$src" && go build -o "$out" ./cmd/gantry)
  settle "$out"
  rm -rf "$src"
  trap - EXIT
  args=(-gantry-b "$work/bin/gantry-b" -label-b "$ab = ${rev:0:12}" "${args[@]}")
fi

if [ -n "$postgres" ]; then
  pgdir="$(mktemp -d "${TMPDIR:-/tmp}/gantry-bench-pg.XXXXXX")"
  trap 'scripts/pg/stop.sh "$pgdir" >/dev/null || true; rm -rf "$pgdir"' EXIT
  scripts/pg/start.sh "$pgdir" | grep -v '^export ' >&2   # the DSN holds a password
  args=(-postgres "$(cat "$pgdir/dsn")" "${args[@]}")
fi

# Building writes thousands of files; let the filesystem settle before
# measuring tools whose runs create files.
sync
sleep 3
# (Not exec: the trap stops the benchmark's database afterwards.)
"$work/bin/runner" -gantry "$work/bin/gantry" -work "$work" "${args[@]}"
