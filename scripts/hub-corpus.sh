#!/usr/bin/env bash
# hub-corpus.sh: elaborate every real Hub manifest of ../shared/corpus/hub with
# gantry, as the Hub CLI elaborates them (issue 21): each of the component
# library's hub-component.yaml as the only component of a stack, and each real
# stack with its params files in the order its README lists. Components get a
# stub Makefile (the corpus has no implementations).
#
# Usage: scripts/hub-corpus.sh [CORPUS_DIR]   (default: ../shared/corpus/hub)
# Prints a line per failing manifest with gantry's errors, then the figure.
# Exits 0 when every manifest elaborates, 1 otherwise, and 0 with a note when
# the corpus is not there (it is outside the repository).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
corpus=${1:-$root/../shared/corpus/hub}
if [ ! -d "$corpus/components" ]; then
	echo "hub-corpus: no corpus at $corpus; nothing checked"
	exit 0
fi
corpus=$(cd "$corpus" && pwd)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "hub-corpus: building gantry" >&2
(cd "$root" && go build -o "$work/gantry" ./cmd/gantry)
gantry=$work/gantry

stub_makefiles() { # DIR: a stub Makefile next to every hub-component.yaml under DIR
	find "$1" -name hub-component.yaml | while read -r m; do
		printf 'deploy:\n\t@true\nundeploy:\n\t@true\n' >"$(dirname "$m")/Makefile"
	done
}

ok=0 failed=0
check() { # NAME DIR ARGS...: elaborate in DIR; count and report
	local name=$1 dir=$2
	shift 2
	if (cd "$dir" && "$gantry" elaborate "$@" -o "$work/out.yaml") >"$work/log" 2>&1; then
		ok=$((ok + 1))
	else
		failed=$((failed + 1))
		echo "FAIL $name"
		sed 's/^/    /' "$work/log" | head -40
	fi
}

# The component library: one stack per component.
comps=0
for m in "$corpus"/components/*/hub-component.yaml; do
	name=$(basename "$(dirname "$m")")
	d=$work/components/$name
	mkdir -p "$d/comp"
	cp "$m" "$d/comp/"
	stub_makefiles "$d"
	printf 'version: 1\nkind: stack\nmeta: {name: check-%s}\ncomponents:\n  - name: %s\n    source: {dir: comp}\n' "$name" "$name" >"$d/hub.yaml"
	check "components/$name" "$d" hub.yaml
	comps=$((comps + 1))
done
comps_ok=$ok

# The real stacks with their params files, in their README's order.
stacks=0
stack() { # FOLDER PARAMS...
	local name=$1
	shift
	[ -d "$corpus/stacks/$name" ] || return 0
	cp -r "$corpus/stacks/$name" "$work/$name"
	stub_makefiles "$work/$name"
	check "stacks/$name" "$work/$name" hub.yaml "$@"
	stacks=$((stacks + 1))
}
stack k8s-aws-platform-template cloud.yaml params/template.yaml params/user.yaml
stack devops-platform-eks-template params.yaml
stack stack-ml-eks params.yaml

echo "hub-corpus: components $comps_ok/$comps elaborate; stacks $((ok - comps_ok))/$stacks elaborate"
[ "$failed" -eq 0 ]
