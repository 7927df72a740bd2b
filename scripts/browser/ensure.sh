#!/usr/bin/env bash
# Makes sure a headless-capable Chromium is installed for the report's
# browser tests (internal/report/browsertest), and prints the path of its
# executable on stdout — nothing else goes to stdout, so that
#
#   GANTRY_TEST_CHROMIUM=$(scripts/browser/ensure.sh)
#
# works. GANTRY_TEST_CHROMIUM, when already set to an executable, is kept.
# Otherwise the first of chromium, chromium-browser, google-chrome and
# google-chrome-stable on PATH is used, and when there is none, Debian's
# `chromium` package is installed with apt-get (no browser is downloaded
# by the tests themselves). Progress and errors go to stderr; exits 1 when
# no browser could be found or installed.
set -euo pipefail

find_browser() {
  if [ -n "${GANTRY_TEST_CHROMIUM:-}" ] && [ -x "$GANTRY_TEST_CHROMIUM" ]; then
    echo "$GANTRY_TEST_CHROMIUM"
    return 0
  fi
  local name
  for name in chromium chromium-browser google-chrome google-chrome-stable; do
    if command -v "$name" >/dev/null 2>&1; then
      command -v "$name"
      return 0
    fi
  done
  return 1
}

if path=$(find_browser); then
  echo "$path"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure.sh: no Chromium on PATH and apt-get is not available: install chromium or set GANTRY_TEST_CHROMIUM" >&2
  exit 1
fi
echo "== installing chromium (Debian's package, for the report's browser tests)" >&2
SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
log=$(mktemp "${TMPDIR:-/tmp}/gantry-chromium-apt.XXXXXX")
if ! { $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive \
         apt-get install -y -qq --no-install-recommends chromium; } >"$log" 2>&1; then
  tail -n 20 "$log" >&2
  echo "ensure.sh: apt-get install chromium failed (log: $log)" >&2
  exit 1
fi
rm -f "$log"
if path=$(find_browser); then
  echo "$path"
  exit 0
fi
echo "ensure.sh: chromium was installed but is not on PATH" >&2
exit 1
