#!/usr/bin/env bash
# Measures gantry deploying and deleting sow landscapes of 3 and 50
# components, and sow itself on the same landscapes in the same run when it
# can run here (bench/README.md, "sow landscapes").
#
#   bench/sow.sh [-rounds R] [-sow-rounds S] [-sizes 3,50]
#
# sow runs when SOW_HOME names a checkout of gardener/sow (its bin/sow) and
# a spiff++ binary is on PATH or named by SPIFF; otherwise gantry alone is
# reported. Nothing of sow or spiff is kept in the repository: both are
# whatever the caller points at. Landscapes are generated under
# bench/.work/sow (BENCH_WORK moves it).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3
sow_rounds=1
sizes=3,50
while [ $# -gt 0 ]; do
  case "$1" in
    -rounds) rounds="$2"; shift ;;
    -sow-rounds) sow_rounds="$2"; shift ;;
    -sizes) sizes="$2"; shift ;;
    *) echo "sow.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done

work="${BENCH_WORK:-bench/.work}"
mkdir -p "$work/bin" "$work/sow"
work="$(cd "$work" && pwd)"
go build -o "$work/bin/gantry" ./cmd/gantry
gantry="$work/bin/gantry"

# sow, when it can run: bin/sow of SOW_HOME, spiff on PATH (or SPIFF), jq.
sow=""
if [ -n "${SOW_HOME:-}" ] && [ -x "$SOW_HOME/bin/sow" ]; then
  if [ -n "${SPIFF:-}" ]; then
    mkdir -p "$work/spiffbin"
    ln -sf "$SPIFF" "$work/spiffbin/spiff"
    PATH="$work/spiffbin:$PATH"
  fi
  if command -v spiff >/dev/null && command -v jq >/dev/null; then
    sow="$SOW_HOME/bin/sow"
  else
    echo "== SOW_HOME is set but spiff or jq is not on PATH: measuring gantry alone" >&2
  fi
fi

# gen N DIR writes a landscape of N components: component i imports up to
# three earlier ones by label, evaluates a deployment with an &state node,
# runs the built-in echo and an external plugin configured from its
# imports' exports, and exports a value.
gen() {
  local n="$1" dir="$2" i
  rm -rf "$dir"
  mkdir -p "$dir/crop/plugins/work"
  cat >"$dir/acre.yaml" <<EOF
landscape:
  name: bench
  size: $n
EOF
  cat >"$dir/crop/acre.yaml" <<'EOF'
landscape:
  name: (( merge ))
  size: (( merge ))
  domain: (( name ".example.org" ))
EOF
  cat >"$dir/crop/plugins/work/plugin" <<'EOF'
#!/bin/sh
[ -n "$GENDIR" ] && [ -n "$PLUGININSTANCE" ] || exit 1
mkdir -p "$GENDIR/$PLUGININSTANCE"
cat "$PLUGINCONFIG" > "$GENDIR/$PLUGININSTANCE/$1.json"
EOF
  chmod 0755 "$dir/crop/plugins/work/plugin"
  for ((i = 0; i < n; i++)); do
    local c d imports="" from=""
    c="$(printf 'c%03d' "$i")"
    d="$dir/crop/components/$c"
    mkdir -p "$d"
    local seen=" "
    for j in $((i - 1)) $((i / 2)) $((i / 3)); do
      if [ "$j" -ge 0 ] && [ "$j" -lt "$i" ] && [[ "$seen" != *" $j "* ]]; then
        seen+="$j "
        imports+="    - l$j: $(printf 'c%03d' "$j")"$'\n'
        from+="          - (( imports.l$j.export.value ))"$'\n'
      fi
    done
    if [ -n "$imports" ]; then
      printf 'component:\n  imports:\n%s' "$imports" >"$d/component.yaml"
    else
      printf 'component: {}\n' >"$d/component.yaml"
      from="          - none"$'\n'
    fi
    cat >"$d/deployment.yaml" <<EOF
imports: (( &temporary ))
landscape: (( &temporary ))
env: (( &temporary ))
runs: (( &state(merge || 0) ))
plugins:
  - echo: (( "deploying " env.COMPONENT " of " landscape.name ))
  - work:
      key: w
      config:
        component: (( env.COMPONENT ))
        from:
$from
EOF
    cat >"$d/export.yaml" <<'EOF'
landscape: (( &temporary ))
env: (( &temporary ))
export:
  value: (( env.COMPONENT "." landscape.domain ))
EOF
  done
}

# clean DIR removes what a deploy leaves.
clean() { rm -rf "$1/gen" "$1/state" "$1/export" "$1/.gantry" "$1/acre.yaml.state" "$1/acre.yaml.state.lock"; }

# timed OUTVAR CMD...: runs the command (output to a log), its wall time in
# milliseconds into OUTVAR; a failed command ends the benchmark.
timed() {
  local __var="$1" start end
  shift
  start=$(date +%s%N)
  if ! "$@" >>"$log" 2>&1; then
    echo "sow.sh: failed: $* (log: $log)" >&2
    tail -20 "$log" >&2
    exit 1
  fi
  end=$(date +%s%N)
  printf -v "$__var" '%d' $(((end - start) / 1000000))
}

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
secs() { awk -v ms="$1" 'BEGIN {printf "%.2f", ms/1000}'; }

log="$work/sow/bench.log"
: >"$log"
printf '%-8s %-8s %6s %10s %10s %12s\n' case tool rounds deploy_s delete_s ms/comp
declare -A result
for n in ${sizes//,/ }; do
  dir="$work/sow/landscape-$n"
  gen "$n" "$dir"
  # One uncounted warm-up: the spiff child and the tool root get cached.
  clean "$dir"
  (cd "$dir" && "$gantry" deploy . >>"$log" 2>&1 && "$gantry" undeploy . >>"$log" 2>&1)
  dep=() del=()
  for ((r = 0; r < rounds; r++)); do
    clean "$dir"
    timed t "$gantry" deploy "$dir"; dep+=("$t")
    timed t "$gantry" undeploy "$dir"; del+=("$t")
  done
  d="$(median "${dep[@]}")" u="$(median "${del[@]}")"
  result[gantry-$n]="$d $u"
  printf '%-8s %-8s %6d %10s %10s %12s\n' "sow-$n" gantry "$rounds" "$(secs "$d")" "$(secs "$u")" "$(((d + u) / 2 / n))"
  if [ -n "$sow" ]; then
    dep=() del=()
    for ((r = 0; r < sow_rounds; r++)); do
      clean "$dir"
      timed t bash -c 'cd "$1" && "$2" deploy -A' _ "$dir" "$sow"; dep+=("$t")
      timed t bash -c 'cd "$1" && "$2" delete -A' _ "$dir" "$sow"; del+=("$t")
    done
    d="$(median "${dep[@]}")" u="$(median "${del[@]}")"
    result[sow-$n]="$d $u"
    printf '%-8s %-8s %6d %10s %10s %12s\n' "sow-$n" sow "$sow_rounds" "$(secs "$d")" "$(secs "$u")" "$(((d + u) / 2 / n))"
  fi
  clean "$dir"
done
if [ -z "$sow" ]; then
  echo "(sow not measured: set SOW_HOME to a gardener/sow checkout and put spiff on PATH)"
  exit 0
fi
for n in ${sizes//,/ }; do
  read -r gd gu <<<"${result[gantry-$n]}"
  read -r sd su <<<"${result[sow-$n]}"
  awk -v n="$n" -v gd="$gd" -v gu="$gu" -v sd="$sd" -v su="$su" \
    'BEGIN {printf "sow-%s: sow/gantry deploy %.1fx, delete %.1fx\n", n, sd/gd, su/gu}'
done
