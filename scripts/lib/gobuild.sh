# shellcheck shell=bash
# Shared by scripts/{helm,k8s,temporal}/build.sh: sourced, not run. Each
# builds binaries from the Go module proxy into a cache folder outside the
# repository, and skips the build when the stamp file there records what the
# script wants (the versions, the way it builds).
#
# The caller sets
#   WHAT        what it builds, for its messages ("helm", "the temporal CLI")
#   CACHE       the cache folder; CACHE/.build.lock serializes builds
#   BIN         the binaries' folder; BIN/.stamp is the stamp file
#   BINARIES    the binaries' names in BIN
#   WANT_STAMP  what the stamp of a complete build says
#   PRINT_BIN   what `build.sh --print-bin` prints: BIN, or its one binary
# then calls build_args "$@" and build_begin, builds into $TMP, moves the
# binaries into $BIN, and calls build_end.

# build_args ARGS...: --print-bin prints $PRINT_BIN and exits; any other
# argument is a usage error (exit 2).
build_args() {
  if [ "${1:-}" = "--print-bin" ]; then
    echo "$PRINT_BIN"
    exit 0
  elif [ $# -gt 0 ]; then
    echo "usage: $0 [--print-bin]" >&2
    exit 2
  fi
}

# build_up_to_date: the stamp says WANT_STAMP and every binary is there.
build_up_to_date() {
  local b
  [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT_STAMP" ] || return 1
  for b in "${BINARIES[@]}"; do [ -x "$BIN/$b" ] || return 1; done
}

# build_begin exits 0 when the binaries are up to date, before or after
# waiting for another build's lock. Else it returns holding the lock (fd 9),
# with t_start set, the stamp removed (only a complete build writes it
# again) and $TMP ($BIN/.tmp) empty: new binaries are written there first,
# then moved into $BIN, so that a test started meanwhile never runs a
# half-written file.
build_begin() {
  STAMP=$BIN/.stamp
  TMP=$BIN/.tmp
  local lock=$CACHE/.build.lock
  if build_up_to_date; then
    echo "== $WHAT up to date in $PRINT_BIN ($WANT_STAMP)"
    exit 0
  fi
  command -v go >/dev/null 2>&1 || { echo "build.sh: go is not on PATH" >&2; exit 1; }
  mkdir -p "$CACHE" "$BIN"
  # One build at a time: a second caller waits, then finds the work done.
  exec 9>"$lock"
  if ! flock -n 9; then
    echo "== another build of $WHAT is running; waiting for its lock ($lock)"
    flock 9
  fi
  if build_up_to_date; then
    echo "== $WHAT up to date in $PRINT_BIN (built by another run)"
    exit 0
  fi
  t_start=$SECONDS
  rm -f "$STAMP"
  rm -rf "$TMP"
  mkdir -p "$TMP"
  # Never let the repository's go.work or module leak into these builds.
  export GOWORK=off GOTOOLCHAIN=local
}

# build_ticker: go install prints nothing until done, so a line every 30 s
# says it still builds, until the script exits. The ticker must not hold
# the lock (fd 9) or the caller's pipes after the exit.
build_ticker() {
  ( while sleep 30 >/dev/null 2>&1; do
      echo "   ... still building $WHAT ($((SECONDS - t_start))s)"
    done ) 9>&- &
  build_ticker_pid=$!
  trap 'kill "$build_ticker_pid" 2>/dev/null || true' EXIT
}

# build_end removes $TMP and writes the stamp, last: only a complete build
# is taken as done.
build_end() {
  rm -rf "$TMP"
  printf '%s\n' "$WANT_STAMP" > "$STAMP"
}
