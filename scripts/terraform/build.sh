#!/usr/bin/env bash
# Builds OpenTofu (github.com/opentofu/opentofu/cmd/tofu), the open-source
# fork of terraform with the same command line, for the terraform plugin's
# scenario (testdata/script/plugins_terraform.txtar) on a machine that has no
# terraform on PATH, from the Go module proxy only. scripts/test.sh puts the
# folder first on PATH only then: a real terraform, when there is one, is
# what the scenario runs.
#
# Why OpenTofu: HashiCorp's release downloads cannot be reached from here,
# and terraform's own module cannot be built from the proxy (its go.mod
# replaces the remote-state backends with nested modules, which the module's
# zip leaves out). OpenTofu's go.mod only replaces one module by another.
#
# Output: ${GANTRY_TERRAFORM_CACHE:-$HOME/.cache/gantry-terraform}/bin-tofu-$TOFU_VERSION/
# with tofu and terraform (a link to tofu, so that the folder on PATH serves
# the plugin's default binary name). Skipped when the stamp records the
# version below. On 2 cores with the Go build cache partly filled (the cloud
# SDKs OpenTofu links compiled, most modules downloaded): 2–2.5 min; cold
# not measured, longer; already built: instant. The repository's go.mod/go.sum are never touched:
# the build runs in OpenTofu's own module, as the module cache holds it.
#
# Usage: build.sh              build (or check) the binaries
#        build.sh --print-bin  print the binaries' folder and exit
# Safe to run concurrently: builds take a lock in the cache folder.
set -euo pipefail

TOFU_VERSION=1.9.1     # github.com/opentofu/opentofu v$TOFU_VERSION
STAMP_FORMAT=1         # bump when the way the binary is built changes

WHAT="OpenTofu"
CACHE=${GANTRY_TERRAFORM_CACHE:-$HOME/.cache/gantry-terraform}
BIN=$CACHE/bin-tofu-$TOFU_VERSION
BINARIES=(tofu terraform)
PRINT_BIN=$BIN
WANT_STAMP="format=$STAMP_FORMAT opentofu=v$TOFU_VERSION"
# shellcheck source=scripts/lib/gobuild.sh
. "$(dirname "$0")/../lib/gobuild.sh"
build_args "$@"
build_begin

echo "== building OpenTofu v$TOFU_VERSION into $BIN"
echo "   2–2.5 min on 2 cores with a partly filled Go build cache; longer cold"
export CGO_ENABLED=0 GOFLAGS=
build_ticker

# `go install pkg@version` refuses a module whose go.mod has replace
# directives: the module is downloaded, and built as the main module in
# the (read-only) module cache. Without -json, a failed download says why
# on stderr.
mod="github.com/opentofu/opentofu@v$TOFU_VERSION"
if ! (cd "$CACHE" && go mod download "$mod"); then
  echo "build.sh: the module $mod could not be downloaded from the Go module proxy" >&2
  exit 1
fi
src="$(go env GOMODCACHE)/$mod"
if [ ! -f "$src/go.mod" ]; then
  echo "build.sh: $mod was downloaded, but $src has no go.mod" >&2
  exit 1
fi
# As a release build: no -dev marker in the version.
(cd "$src" && go build -trimpath -ldflags="-s -w -X github.com/opentofu/opentofu/version.dev=no" \
  -o "$TMP/tofu" ./cmd/tofu)

# sed reads all of the output: head could end the pipe between tofu's two
# writes and kill it with SIGPIPE.
got=$("$TMP/tofu" version | sed -n 1p)
if [ "$got" != "OpenTofu v$TOFU_VERSION" ]; then
  echo "build.sh: built tofu reports \"$got\", want \"OpenTofu v$TOFU_VERSION\"" >&2
  exit 1
fi
mv -f "$TMP/tofu" "$BIN/tofu"
ln -sfn tofu "$BIN/terraform"
build_end
echo "== OpenTofu built: $BIN/tofu ($got), $BIN/terraform links to it"
echo "== build.sh total time: $((SECONDS - t_start))s"
